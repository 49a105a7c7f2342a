"""The import structure (dpclaims.devtools.layers): the directions of docs/architecture.md,
no cycles."""

from __future__ import annotations

from dpclaims.devtools.layers import graph, layer, violations


def test_imports_follow_the_layers_and_have_no_cycles():
    g = graph()
    assert "dpclaims.claims.checks.dpsep" in g and "dpclaims.claims.headline" in g
    assert "dpclaims.claims.catalogues.dpsep" in g["dpclaims.claims.checks.dpsep"]
    assert violations(g) == []


def test_the_check_can_fail():
    g = {"dpclaims.analysis.a": {"dpclaims.reports.r"},  # upward
         "dpclaims.reports.r": {"dpclaims.reports.s"},
         "dpclaims.reports.s": {"dpclaims.reports.r"}}     # cycle
    found = violations(g)
    assert any(f.startswith("upward import: dpclaims.analysis.a") for f in found)
    assert "import cycle: dpclaims.reports.r -> dpclaims.reports.s" in found
    assert layer("dpclaims.cli") == 6 and layer("dpclaims") is None
    assert layer("dpclaims.claims.checks.dpsep") > layer("dpclaims.claims.catalogues.dpsep") \
        > layer("dpclaims.claims.headline") > layer("dpclaims.experiments.dpsep_mog")


def test_no_module_in_reports_builds_a_verdict_and_experiments_build_no_claims():
    """Issue 15: reports/ only renders; experiment runners return numbers."""
    g = graph()
    for m, targets in g.items():
        if m.startswith(("dpclaims.reports", "dpclaims.experiments")):
            assert not any(t.startswith("dpclaims.claims.checks") for t in targets), m
        if m.startswith("dpclaims.experiments"):
            assert not any(t.startswith("dpclaims.claims") for t in targets), m
