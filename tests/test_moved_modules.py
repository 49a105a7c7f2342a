"""Issue 39: modules and names that moved stay importable under their old names, as the
very objects of their new homes, with a ``DeprecationWarning`` (a moved module warns
once, when it is imported); nothing inside dpclaims uses an old name."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpclaims.devtools.layers import graph
from dpclaims.execution import checks

SRC = Path(__file__).resolve().parents[1] / "src"

#: old import -> the module it is now, each run in a fresh interpreter
OLD_NAMES = {
    "dpclaims.families.dpvi.dpvi": "dpclaims.algorithms.dpvi.dpvi",
    "dpclaims.families.sep.step": "dpclaims.algorithms.sep.step",
    "dpclaims.families.vips.whole_run": "dpclaims.algorithms.vips.whole_run",
    "dpclaims.claims.cluster": "dpclaims.execution.cluster",
    "dpclaims.claims.user_code": "dpclaims.execution.user_code",
}

#: names that left dpclaims.claims.core for dpclaims.execution.checks
MOVED_FROM_CORE = ("CheckTimer", "_Handle", "_run_on_worker", "_portable")

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


@pytest.mark.parametrize("name", MOVED_FROM_CORE)
def test_the_runner_s_old_names_in_claims_core_warn(name):
    import dpclaims.claims.core as core

    with pytest.warns(DeprecationWarning, match=f"moved to dpclaims.execution.checks.{name}"):
        assert getattr(core, name) is getattr(checks, name)
    with pytest.warns(DeprecationWarning):
        exec(f"from dpclaims.claims.core import {name}", {})
    with pytest.raises(AttributeError):
        core.NotAName  # noqa: B018  (anything else is still an error)


def test_no_module_of_dpclaims_imports_an_old_name():
    old = ("dpclaims.families", "dpclaims.claims.cluster", "dpclaims.claims.user_code")
    for module, targets in graph().items():
        if module not in old:
            assert not any(t == o or t.startswith(o + ".") for t in targets for o in old), module
    for path in (SRC / "dpclaims").rglob("*.py"):  # nor a moved name from claims.core
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "dpclaims.claims.core":
                assert not {a.name for a in node.names} & set(MOVED_FROM_CORE), path
