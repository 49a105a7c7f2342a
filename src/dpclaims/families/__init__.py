"""Deprecated: the algorithm families moved to :mod:`dpclaims.algorithms` (issue 39).

``dpclaims.families`` and every module under it stay importable under the old names
(``import dpclaims.families.dpvi.dpvi``, ``from dpclaims.families.sep.step import
DPSEPStep``): each is the module of :mod:`dpclaims.algorithms` itself, not a copy, so
its classes, functions and state are the same objects. Importing this package warns
once (``DeprecationWarning``); import from ``dpclaims.algorithms`` instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

_OLD, _NEW = __name__ + ".", "dpclaims.algorithms."


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``dpclaims.families.X`` and loads it as the module ``dpclaims.algorithms.X``."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_OLD):
            return None
        target_spec = importlib.util.find_spec(_NEW + fullname[len(_OLD):])
        if target_spec is None:
            return None
        return importlib.util.spec_from_loader(
            fullname, self, is_package=target_spec.submodule_search_locations is not None)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        # the import system returns what sys.modules holds after this: the real module
        sys.modules[module.__name__] = importlib.import_module(
            _NEW + module.__name__[len(_OLD):])


if not any(isinstance(f, _Alias) for f in sys.meta_path):
    sys.meta_path.insert(0, _Alias())


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return importlib.import_module(_OLD + name)
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


warnings.warn("dpclaims.families is deprecated: the algorithm families moved to "
              "dpclaims.algorithms (import dpclaims.algorithms.<family>...)",
              DeprecationWarning, stacklevel=2)
