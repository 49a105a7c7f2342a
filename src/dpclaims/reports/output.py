"""Output folders: a run's files appear together, or not at all.

A run writes its figures and reports into a fresh staging folder beside the output
folder (``.<name>.partial-<random>``) and moves it into place only when it has
succeeded. A folder that already holds files is refused before any work unless the
run may overwrite it, and even then only when it holds a dpclaims report and nothing
else (:data:`MARKER`, written into every report folder, lists the report's files and
the command that wrote it); then
the old folder is set aside, the new one renamed into its place, and the old one
removed. Two runs never mix their files, and ``results.json`` is never half-written: a
crash or an interrupt leaves the previous folder as it was (and removes the staging
folder). A lock file beside the folder (``.<name>.lock``, holding the pid of the run
that writes to it) makes a second run into the same folder fail at once; it is removed
at every ending, and one left by a killed run does not block (the lock is an
``flock``, released by the kernel when its process dies).

A command's default folder (``reports/<command>-<name>``) is its own: a run into it
replaces the report the same command wrote there for the same name without
``--overwrite`` (``replace_own``), and refuses any other content, as an explicit
``--out`` does.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from dpclaims.analysis.validation import InputError

try:
    import fcntl
except ImportError:  # pragma: no cover  (not POSIX: no lock)
    fcntl = None

#: The file dpclaims writes into every report folder: its signature and the report's
#: files. ``--overwrite`` replaces a folder only when this lists every file it holds.
MARKER = ".dpclaims-report"
_SIGNATURE = "a report folder written by dpclaims; --overwrite may replace it"
#: A report folder written before :data:`MARKER` existed: these files, and figures.
_LEGACY_FILES = {"results.json", "run_info.json", "report.md", "report.html"}
_LEGACY_FIGURES = (".png", ".svg", ".pdf")


class StagedOutput:
    """A staging folder for a run whose results go to ``out_dir``.

    Parameters
    ----------
    out_dir : path
        Where the run's files end up.
    overwrite : bool
        Whether an existing, non-empty ``out_dir`` may be replaced; it is only when
        it holds a dpclaims report and no other file (:func:`foreign_file`).
    owner : dict, optional
        The command and name that write the report (``{"command": "check", "name":
        "abadi2016"}``), recorded in :data:`MARKER`.
    replace_own : bool
        Whether a report in ``out_dir`` written with the same ``owner`` may be replaced
        without ``overwrite`` (a command's default folder); any other content is refused
        as without ``overwrite``.

    Raises
    ------
    InputError
        On construction, before any work: ``out_dir`` is a file; it cannot be renamed
        (the current folder or one holding it, ``/``, a mount point, a folder whose
        parent is not writable); it holds files and ``overwrite`` is False; it holds a
        file that is not a dpclaims report's; another dpclaims run is writing to it (its
        pid named); or its parent cannot be created or written.

    Use ``with StagedOutput(out, overwrite) as staging:`` and write into ``staging``;
    on a normal exit the folder is moved into place, on an exception it is removed.
    Either way the lock is released.
    """

    def __init__(self, out_dir, overwrite: bool = False, owner: dict | None = None,
                 replace_own: bool = False):
        self.out = Path(out_dir)
        self.owner = dict(owner) if owner else None
        self._lock_fd = None
        if self.out.exists() and not self.out.is_dir():
            raise InputError(f"--out {self.out} is a file, not a folder")
        _refuse_unrenamable(self.out)
        parent = self.out.resolve().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out {self.out}: cannot create a folder in {parent} "
                             f"({exc.strerror or exc})") from exc
        self._lock_path = parent / f".{self.out.name}.lock"
        self._lock()
        try:
            if self.out.is_dir() and any(self.out.iterdir()):
                own = (replace_own and self.owner is not None
                       and report_owner(self.out) == self.owner)
                if not (overwrite or own):
                    held = report_owner(self.out) if replace_own else None
                    what = (f"a report of `dpclaims {held['command']}` for {held['name']}"
                            if held else "files (another run's?)")
                    raise InputError(f"--out {self.out} already holds {what}; pass "
                                     "--overwrite to replace them, or choose an empty "
                                     "folder")
                _refuse_foreign(self.out)
            try:
                self.staging = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.partial-",
                                                     dir=parent))
                umask = os.umask(0)
                os.umask(umask)
                self.staging.chmod(0o777 & ~umask)  # as a folder made by mkdir, not 0700
            except OSError as exc:
                raise InputError(f"--out {self.out}: cannot create a folder in {parent} "
                                 f"({exc.strerror or exc})") from exc
        except BaseException:
            self._unlock()
            raise

    def __enter__(self) -> Path:
        return self.staging

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is not None:
                shutil.rmtree(self.staging, ignore_errors=True)
                return
            self.commit()
        finally:
            self._unlock()

    def commit(self) -> Path:
        """Move the staging folder into place (replacing an old ``out_dir``) and release
        the lock.

        Raises
        ------
        InputError
            ``out_dir`` gained a file that is not a dpclaims report's while the run
            went on (the staging folder is removed; that file is kept).
        """
        try:
            files = sorted(p.relative_to(self.staging).as_posix()
                           for p in self.staging.rglob("*"))
            marker = {"dpclaims": _SIGNATURE, "files": files}
            if self.owner is not None:
                marker["owner"] = self.owner
            (self.staging / MARKER).write_text(json.dumps(marker, indent=1))
            old = None
            if self.out.exists():
                try:
                    _refuse_foreign(self.out)
                except InputError:
                    self.discard()
                    raise
                old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-",
                                            dir=self.out.resolve().parent))
                old.rmdir()
                self.out.rename(old)
            self.staging.rename(self.out)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            return self.out
        finally:
            self._unlock()

    def discard(self) -> None:
        """Remove the staging folder and release the lock."""
        shutil.rmtree(self.staging, ignore_errors=True)
        self._unlock()

    # ----------------------------------------------------------------------- the lock
    def _lock(self) -> None:
        if fcntl is None:  # pragma: no cover
            return
        path = self._lock_path
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise InputError(f"--out {self.out}: cannot create its lock file {path} "
                                 f"({exc.strerror or exc})") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise InputError(f"another dpclaims run is writing to {self.out} (pid "
                                 f"{pid}); wait for it to end, or choose another --out") \
                    from None
            try:  # the run before may have removed the file between our open and flock
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def _unlock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is None:
            return
        try:
            os.unlink(self._lock_path)  # while still holding it: see _lock
        except OSError:
            pass
        os.close(fd)


def _refuse_unrenamable(out: Path) -> None:
    """Raise InputError when ``out`` is a folder a run cannot replace by renaming."""
    where = out.resolve()
    cwd = Path.cwd().resolve()
    why = None
    if where == cwd:
        why = "is the current folder"
    elif where in cwd.parents:
        why = "holds the current folder"
    elif where.parent == where:
        why = "is the root of the file system"
    elif where.is_dir() and os.path.ismount(where):
        why = "is a mount point"
    elif where.parent.is_dir() and not os.access(where.parent, os.W_OK | os.X_OK):
        why = f"is in {where.parent}, which is not writable"
    if why is not None:
        raise InputError(f"--out {out} {why}: a run writes its report beside --out and "
                         "renames it into place; choose a new folder, e.g. --out "
                         "reports/run1")


def foreign_file(folder) -> Path | None:
    """The first file or folder in ``folder`` that no dpclaims report put there, or None.

    A report folder lists its files in :data:`MARKER`; one written before that marker
    existed is recognised by its ``results.json`` (with ``schema_version``) and its
    ``run_info.json`` (with the ``dpclaims`` version), and may hold only the report's
    files and figures. A folder without a report has every entry foreign.
    """
    folder = Path(folder)
    entries = sorted(folder.rglob("*"))
    if not entries:
        return None
    known = _report_files(folder)
    for p in entries:
        rel = p.relative_to(folder).as_posix()
        if known is None:
            return p
        if rel == MARKER or rel in known:
            continue
        if known is _LEGACY_FILES and p.is_file() and "/" not in rel \
                and p.suffix.lower() in _LEGACY_FIGURES:
            continue
        return p
    return None


def report_owner(folder) -> dict | None:
    """The command and name recorded in ``folder``'s :data:`MARKER` (``{"command": ...,
    "name": ...}``), or None: no report, or one written without an owner."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    owner = marker.get("owner") if isinstance(marker, dict) else None
    if isinstance(owner, dict) and marker.get("dpclaims") == _SIGNATURE \
            and isinstance(owner.get("command"), str) and isinstance(owner.get("name"), str):
        return {"command": owner["command"], "name": owner["name"]}
    return None


def _report_files(folder: Path):
    """The files a dpclaims report in ``folder`` has (a set), or None if it holds none."""
    try:
        marker = json.loads((folder / MARKER).read_text())
        if isinstance(marker, dict) and marker.get("dpclaims") == _SIGNATURE \
                and isinstance(marker.get("files"), list):
            return set(map(str, marker["files"]))
    except (OSError, ValueError):
        pass
    try:
        results = json.loads((folder / "results.json").read_text())
        info = json.loads((folder / "run_info.json").read_text())
    except (OSError, ValueError):
        return None
    if isinstance(results, dict) and "schema_version" in results \
            and isinstance(info, dict) and "dpclaims" in info:
        return _LEGACY_FILES
    return None


def _refuse_foreign(out: Path) -> None:
    bad = foreign_file(out)
    if bad is not None:
        raise InputError(f"--out {out} holds {bad}, which is not part of a dpclaims "
                         "report; --overwrite replaces only a dpclaims report folder: move "
                         "that file away or choose another --out")
