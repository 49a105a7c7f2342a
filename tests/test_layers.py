"""The import structure (dpclaims.devtools.layers): the directions of docs/architecture.md,
no cycles."""

from __future__ import annotations

from dpclaims.devtools.layers import graph, layer, violations


def test_imports_follow_the_layers_and_have_no_cycles():
    g = graph()
    assert "dpclaims.papers.dpsep.checks" in g and "dpclaims.claims.headline" in g
    assert "dpclaims.papers.dpsep.catalogue" in g["dpclaims.papers.dpsep.checks"]
    assert violations(g) == []


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
    """Issue 22: no framework module imports a paper (papers are found by entry point);
    issue 15: reports/ only renders, a paper's experiment runners return numbers."""
    g = graph()
    runners = [m for m in g if _is_runner(m)]
    assert len(runners) >= 5, runners
    for m, targets in g.items():
        if not m.startswith("dpclaims.papers"):
            assert not any(t.startswith("dpclaims.papers") for t in targets), m
        if m.startswith("dpclaims.reports") or _is_runner(m):
            assert not any(t.startswith("dpclaims.claims.checks") for t in targets), m
        if _is_runner(m):
            assert not any(t.startswith("dpclaims.claims") for t in targets), m
