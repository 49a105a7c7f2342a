"""Issue 39: modules that moved stay importable under their old names, as the very
modules of their new homes, and warn once (``DeprecationWarning``); nothing inside
dpclaims uses an old name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dpclaims.devtools.layers import graph

SRC = Path(__file__).resolve().parents[1] / "src"

#: old import -> the module it is now, each run in a fresh interpreter
OLD_NAMES = {
    "dpclaims.families.dpvi.dpvi": "dpclaims.algorithms.dpvi.dpvi",
    "dpclaims.families.sep.step": "dpclaims.algorithms.sep.step",
    "dpclaims.families.vips.whole_run": "dpclaims.algorithms.vips.whole_run",
}

PROBE = """
import importlib, json, sys, warnings
old, new = sys.argv[1], sys.argv[2]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exec(f"import {old}")                        # the statement form, as outside code has it
    module = importlib.import_module(old)        # and again: no second warning
    exec(f"import {old.rsplit('.', 1)[0]} as parent")
moved = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
print(json.dumps({"same": module is importlib.import_module(new),
                  "attribute": getattr(parent, old.rsplit('.', 1)[1]) is module,
                  "name": module.__name__, "warnings": moved,
                  "where": [w.filename for w in caught]}))
"""


def _probe(old: str, new: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, old, new], capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(SRC)}, timeout=300)
    return json.loads(out.stdout)


def test_the_old_names_are_the_new_modules_and_warn_once():
    for old, new in OLD_NAMES.items():
        found = _probe(old, new)
        assert found["same"] and found["attribute"] and found["name"] == new, (old, found)
        assert len(found["warnings"]) == 1, (old, found)
        assert new.split(".")[1] in found["warnings"][0], found  # names the new home
        assert found["where"] == ["<string>"], found  # the importer's line, not importlib's


def test_no_module_of_dpclaims_imports_an_old_name():
    for module, targets in graph().items():
        assert not any(t == "dpclaims.families" or t.startswith("dpclaims.families.")
                       for t in targets), module
