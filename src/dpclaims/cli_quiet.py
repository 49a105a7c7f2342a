"""A quiet terminal: other libraries' log lines and warnings go to the run's log file.

While a command that writes a report runs, the records of the root logger's handlers
(where absl, dp_accounting's logger, and any library without a handler of its own end
up) and the warnings raised outside dpclaims are written to ``third_party.log`` in the
report folder instead of stderr. The command then prints one line that counts them by
source. dpclaims' own warnings stay on stderr: they are defects to fix at their cause.
Forked child processes (a check, an audit's worker) inherit the redirection and append
to the same file, so their lines are counted too. ``--debug`` keeps everything on stderr.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: The log file's name in the report folder.
LOG_NAME = "third_party.log"
_PACKAGE = str(Path(__file__).resolve().parent)
_RECORD = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):([^:\s]+):", re.M)


@dataclass
class ThirdPartyLog:
    """What :func:`third_party_to_log` redirected: ``counts`` by source (logger name, or
    ``warnings.<Category>``), filled when the context ends; ``path`` the log file."""

    path: Path
    counts: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def line(self, folder: Path) -> str | None:
        """One line for stderr naming the count, the sources and the file (in ``folder``,
        the committed report folder), or None when nothing was redirected."""
        if not self.total:
            return None
        parts = ", ".join(f"{name} {n}" for name, n in self.counts.most_common())
        return (f"dpclaims: {self.total} log line(s) and warning(s) from other libraries "
                f"({parts}) went to {Path(folder) / LOG_NAME}")


def count_records(text: str) -> Counter:
    """Records in a log written by :func:`third_party_to_log`, counted by source."""
    return Counter(m.group(2) for m in _RECORD.finditer(text))


@contextlib.contextmanager
def third_party_to_log(folder, enabled: bool = True):
    """Send other libraries' log records and warnings to ``folder / LOG_NAME``.

    Parameters
    ----------
    folder : path
        The report's (staging) folder; the file is created at the first record only.
    enabled : bool
        False (``--debug``): nothing is redirected; the result counts nothing.

    Yields
    ------
    ThirdPartyLog
        Its ``counts`` are filled when the context ends (the file read back, so the
        records of forked children count too).
    """
    log = ThirdPartyLog(Path(folder) / LOG_NAME)
    if not enabled:
        yield log
        return
    handler = logging.FileHandler(log.path, mode="a", encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers[:] = [handler]
    shown = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if str(filename).startswith(_PACKAGE):
            return shown(message, category, filename, lineno, file, line)
        text = warnings.formatwarning(message, category, filename, lineno, line).strip()
        logging.getLogger(f"warnings.{category.__name__}").warning(
            text.replace("\n", "\n    "))

    warnings.showwarning = showwarning
    try:
        yield log
    finally:
        warnings.showwarning = shown
        root.handlers[:] = saved
        handler.close()
        if log.path.is_file():
            log.counts.update(count_records(log.path.read_text(errors="replace")))
