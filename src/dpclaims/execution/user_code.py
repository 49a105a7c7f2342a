"""Whose code raised an exception: the user's (bad input, exit 2) or dpclaims' (a bug).

The user's code is every file loaded on the user's behalf: a variant, a query or a
claims file's module (``check-variant``, ``check``), and a paper plugin's package
(``audit --paper``). :func:`register_source` records a module's file, or with
``package=True`` its whole package folder; :func:`user_frame` finds the innermost
frame of an exception's traceback in those files.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import traceback
from pathlib import Path

from dpclaims.analysis.validation import InputError

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


def exception_chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` first, then the exception it was raised from or during (its ``__cause__``,
    else its ``__context__``), and so on; each once (a cycle ends the list). Empty for
    None."""
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def user_frame(exc: BaseException) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost frame of ``exc``'s traceback in the user's
    code (:data:`USER_SOURCES`, :data:`USER_ROOTS`), following ``__cause__`` /
    ``__context__`` and the text of a traceback sent back by a worker process; None when
    the user's code is not in it.
    """
    for e in exception_chain(exc):
        found = None
        for frame in traceback.extract_tb(e.__traceback__):
            if _is_user(frame.filename):
                found = (frame.filename, frame.lineno, frame.name)
        if found:
            return found
        text = str(e) if type(e).__name__ == "_RemoteTraceback" else ""
        for m in re.finditer(r'File "([^"]+)", line (\d+), in (\S+)', text):
            if _is_user(m.group(1)):
                found = (m.group(1), int(m.group(2)), m.group(3))
        if found:
            return found
    return None


def load_object(spec: str, what: str, package: bool = False):
    """The object named by ``FILE.py:OBJECT`` or ``package.module:OBJECT``.

    A file is imported as the module ``dpclaims_<what>_<stem>`` (registered in
    ``sys.modules`` so that worker processes can unpickle its classes); a dotted name
    with :func:`importlib.import_module`. Either way the module is registered as the
    user's code (:func:`register_source`; ``package=True``: its whole package).
    ``what`` ("variant", "paper") names the object in messages.

    Raises
    ------
    InputError
        A malformed spec, a missing file or module, an import error (naming the line of
        the user's file), or a missing object.
    """
    if ":" not in spec:
        raise InputError(f"expected FILE.py:OBJECT or package.module:OBJECT, got {spec!r}")
    file, _, obj_name = spec.rpartition(":")
    if not obj_name.isidentifier():
        raise InputError(f"OBJECT must be a Python name, got {obj_name!r}")
    path = Path(file)
    if file.endswith(".py") or path.is_file() or "/" in file:
        if not path.is_file():
            raise InputError(f"{what} file not found: {file}")
        mod_name = f"dpclaims_{what}_{path.stem}"
        loader = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(loader)
        sys.modules[mod_name] = module
        USER_SOURCES.add(str(path.resolve()))
        try:
            loader.loader.exec_module(module)
        except Exception as exc:  # the user's file: any error is bad input
            where = user_frame(exc)
            at = f" at line {where[1]}" if where else ""
            raise InputError(f"importing {file} failed{at}: {type(exc).__name__}: "
                             f"{exc}") from exc
    else:
        if not all(part.isidentifier() for part in file.split(".")):
            raise InputError(f"expected FILE.py:OBJECT or package.module:OBJECT, got {spec!r}")
        try:
            module = importlib.import_module(file)
            register_source(module, package=package)
        except ModuleNotFoundError as exc:
            raise InputError(f"{what} module not found: {file} ({exc})") from exc
        except Exception as exc:
            raise InputError(f"importing {file} failed: {type(exc).__name__}: {exc}") from exc
    if not hasattr(module, obj_name):
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        raise InputError(f"{file} has no object {obj_name!r}; it defines {names}")
    return getattr(module, obj_name)


def describe_user_error(exc: BaseException) -> str | None:
    """One line naming the user's file, line and the exception, or None when the
    exception did not come from the user's code (:func:`user_frame`)."""
    where = user_frame(exc)
    if where is None:
        return None
    file, line, func = where
    return f"{file}:{line} (in {func}): {type(exc).__name__}: {exc}"
