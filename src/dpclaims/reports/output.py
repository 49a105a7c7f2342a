"""Output folders: a run's files appear together, or not at all.

A run writes its figures and reports into a fresh staging folder beside the output
folder (``.<name>.partial-<random>``) and moves it into place only when it has
succeeded. A folder that already holds files is refused before any work unless the
run may overwrite it; then the old folder is set aside, the new one renamed into its
place, and the old one removed. Two runs never mix their files, and ``results.json``
is never half-written: a crash or an interrupt leaves the previous folder as it was
(and removes the staging folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from dpclaims.analysis.validation import InputError


class StagedOutput:
    """A staging folder for a run whose results go to ``out_dir``.

    Parameters
    ----------
    out_dir : path
        Where the run's files end up.
    overwrite : bool
        Whether an existing, non-empty ``out_dir`` may be replaced.

    Raises
    ------
    InputError
        On construction, before any work: ``out_dir`` is a file, holds files and
        ``overwrite`` is False, or its parent cannot be created or written.

    Use ``with StagedOutput(out, overwrite) as staging:`` and write into ``staging``;
    on a normal exit the folder is moved into place, on an exception it is removed.
    """

    def __init__(self, out_dir, overwrite: bool = False):
        self.out = Path(out_dir)
        if self.out.exists() and not self.out.is_dir():
            raise InputError(f"--out {self.out} is a file, not a folder")
        if self.out.is_dir() and any(self.out.iterdir()) and not overwrite:
            raise InputError(f"--out {self.out} already holds files (another run's?); pass "
                             "--overwrite to replace them, or choose an empty folder")
        parent = self.out.resolve().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.partial-",
                                                 dir=parent))
            umask = os.umask(0)
            os.umask(umask)
            self.staging.chmod(0o777 & ~umask)  # as a folder made by mkdir, not 0700
        except OSError as exc:
            raise InputError(f"--out {self.out}: cannot create a folder in {parent} "
                             f"({exc.strerror or exc})") from exc

    def __enter__(self) -> Path:
        return self.staging

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        self.commit()

    def commit(self) -> Path:
        """Move the staging folder into place (replacing an old ``out_dir``)."""
        old = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-",
                                        dir=self.out.resolve().parent))
            old.rmdir()
            self.out.rename(old)
        self.staging.rename(self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.out

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
