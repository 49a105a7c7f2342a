"""Whose code raised an exception: the user's (bad input, exit 2) or dpclaims' (a bug).

The user's code is every file loaded on the user's behalf: a variant, a query or a
claims file's module (``check-variant``, ``check``), and a paper plugin's package
(``audit --paper``). :func:`register_source` records a module's file, or with
``package=True`` its whole package folder; :func:`user_frame` finds the innermost
frame of an exception's traceback in those files.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

#: Files of the user's code: an exception raised from them is the user's.
USER_SOURCES: set[str] = set()
#: Folders of the user's code (a paper plugin's package): every file under them counts.
USER_ROOTS: set[str] = set()
_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


def register_source(module, package: bool = False) -> None:
    """Record ``module``'s file (``package=True``: the folder of its top-level package)
    as the user's code, unless it is part of dpclaims itself."""
    file = getattr(module, "__file__", None)
    if not file:
        return
    path = Path(file).resolve()
    if str(path).startswith(_PACKAGE_DIR):
        return
    USER_SOURCES.add(str(path))
    if package and getattr(module, "__package__", None):
        depth = len(module.__name__.split(".")) - (0 if path.name == "__init__.py" else 1)
        root = path.parent
        for _ in range(max(depth - 1, 0)):
            root = root.parent
        USER_ROOTS.add(str(root))


def _is_user(filename: str) -> bool:
    path = str(Path(filename).resolve())
    return path in USER_SOURCES or any(path.startswith(root + "/") for root in USER_ROOTS)


def user_frame(exc: BaseException) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost frame of ``exc``'s traceback in the user's
    code (:data:`USER_SOURCES`, :data:`USER_ROOTS`), following ``__cause__`` /
    ``__context__`` and the text of a traceback sent back by a worker process; None when
    the user's code is not in it.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if _is_user(frame.filename):
                found = (frame.filename, frame.lineno, frame.name)
        if found:
            return found
        text = str(exc) if type(exc).__name__ == "_RemoteTraceback" else ""
        for m in re.finditer(r'File "([^"]+)", line (\d+), in (\S+)', text):
            if _is_user(m.group(1)):
                found = (m.group(1), int(m.group(2)), m.group(3))
        if found:
            return found
        exc = exc.__cause__ or exc.__context__
    return None


def describe_user_error(exc: BaseException) -> str | None:
    """One line naming the user's file, line and the exception, or None when the
    exception did not come from the user's code (:func:`user_frame`)."""
    where = user_frame(exc)
    if where is None:
        return None
    file, line, func = where
    return f"{file}:{line} (in {func}): {type(exc).__name__}: {exc}"
