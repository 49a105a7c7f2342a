"""The import structure (dpclaims.devtools.layers): DESIGN.md's arrows, no cycles."""

from __future__ import annotations

from dpclaims.devtools.layers import graph, layer, violations


def test_imports_follow_the_layers_and_have_no_cycles():
    g = graph()
    assert "dpclaims.reports.dpsep" in g and "dpclaims.claims.headline" in g
    assert "dpclaims.reports.dpsep_catalogue" in g["dpclaims.reports.dpsep"]
    assert violations(g) == []


def test_the_check_can_fail():
    g = {"dpclaims.analysis.a": {"dpclaims.reports.r"},  # upward
         "dpclaims.reports.r": {"dpclaims.reports.s"},
         "dpclaims.reports.s": {"dpclaims.reports.r"}}     # cycle
    found = violations(g)
    assert any(f.startswith("upward import: dpclaims.analysis.a") for f in found)
    assert "import cycle: dpclaims.reports.r -> dpclaims.reports.s" in found
    assert layer("dpclaims.cli") == 5 and layer("dpclaims") is None
