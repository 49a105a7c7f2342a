"""The import structure (dpclaims.devtools.layers): the directions of docs/architecture.md,
no cycles."""

from __future__ import annotations

from dpclaims.devtools import layers
from dpclaims.devtools.layers import graph, layer, private_imports, violations


def test_imports_follow_the_layers_and_have_no_cycles():
    g = graph()
    assert "dpclaims.papers.dpsep.checks" in g and "dpclaims.claims.headline" in g
    assert "dpclaims.papers.dpsep.catalogue" in g["dpclaims.papers.dpsep.checks"]
    assert violations(g) == []
    assert violations() == []  # with the private-name check
    assert all(layer(m) is not None for m in g if m not in ("dpclaims",)
               and not m.startswith("dpclaims.devtools")), "a package without a layer"


def test_no_private_name_is_imported_across_packages(tmp_path, monkeypatch):
    assert private_imports() == []
    # the check can fail: a module of another package importing a private name
    pkg = tmp_path / "dpclaims"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "a" / "m.py").write_text("def _hidden():\n    return 1\n")
    (pkg / "b" / "n.py").write_text("from dpclaims.a.m import _hidden\n")
    (pkg / "a" / "k.py").write_text("from dpclaims.a.m import _hidden\n")  # same package
    monkeypatch.setattr(layers, "ROOT", pkg)
    assert private_imports() == ["private import: dpclaims.b.n imports dpclaims.a.m._hidden"]


def test_the_check_can_fail():
    g = {"dpclaims.analysis.a": {"dpclaims.reports.r"},  # upward
         "dpclaims.reports.r": {"dpclaims.reports.s"},
         "dpclaims.reports.s": {"dpclaims.reports.r"}}     # cycle
    found = violations(g)
    assert any(f.startswith("upward import: dpclaims.analysis.a") for f in found)
    assert "import cycle: dpclaims.reports.r -> dpclaims.reports.s" in found
    assert layer("dpclaims.cli") == 6 and layer("dpclaims") is None
    assert layer("dpclaims.papers.dpsep.checks") > layer("dpclaims.claims.checks.bounds") \
        > layer("dpclaims.claims.kernel") > layer("dpclaims.audits.core")


def _is_runner(module: str) -> bool:
    leaf = module.rsplit(".", 1)[-1]
    return module.startswith("dpclaims.papers.") and leaf.startswith(("experiment",
                                                                       "calibration"))


def test_the_framework_imports_no_paper_and_runners_build_no_claims():
    """Issue 22: no framework module imports a paper (papers are found by entry point) or
    an algorithm family (papers use families);
    issue 15: reports/ only renders, a paper's experiment runners return numbers."""
    g = graph()
    runners = [m for m in g if _is_runner(m)]
    assert len(runners) >= 5, runners
    for m, targets in g.items():
        if not m.startswith("dpclaims.papers"):
            assert not any(t.startswith("dpclaims.papers") for t in targets), m
        if not m.startswith(("dpclaims.papers", "dpclaims.algorithms")):
            assert not any(t.startswith("dpclaims.algorithms") for t in targets), m
        if m.startswith("dpclaims.reports") or _is_runner(m):
            assert not any(t.startswith("dpclaims.claims.checks") for t in targets), m
        if _is_runner(m):
            assert not any(t.startswith("dpclaims.claims") for t in targets), m
