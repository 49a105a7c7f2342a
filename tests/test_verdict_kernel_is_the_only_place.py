"""Issue 21: one place where results become verdicts. Every ``Verdict(...)`` is built by
the verdict kernel (dpclaims.claims.kernel); no check writes a verdict word into a
Verdict or a decision of its own. Read with ast: nothing is imported or run."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "dpclaims"
ALLOWED = {SRC / "claims" / "kernel.py", SRC / "claims" / "core.py"}
WORDS = {"holds", "refuted", "inconclusive", "not-checkable"}


def test_only_the_kernel_builds_verdicts():
    offenders = []
    for path in SRC.rglob("*.py"):
        if path in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name == "Verdict":
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_no_check_assigns_a_verdict_word():
    """A check never writes ``verdict = "holds"`` (or a conditional choosing one): the
    kernel's outcome is the only source of a verdict word in claims/checks."""
    offenders = []
    for path in (SRC / "claims" / "checks").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Assign, ast.Return)):
                value = node.value
                consts = [c.value for c in ast.walk(value) if isinstance(c, ast.Constant)] \
                    if value is not None else []
                if any(isinstance(c, str) and c in WORDS for c in consts) and isinstance(
                        value, (ast.IfExp, ast.Constant, ast.Tuple)):
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []
