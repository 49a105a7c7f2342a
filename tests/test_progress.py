"""Progress lines: k of N and the time left from a recorded plan (issue 13)."""

from __future__ import annotations

import json
from importlib import resources

from dpclaims import cli


def test_eta_counts_checks_and_shows_elapsed_time_only(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(cli.time, "perf_counter", lambda: now[0])
    eta = cli._Eta([("a", 10.0), ("b", 30.0), ("c", 60.0)])
    assert eta.describe("starting") == "[0/3] starting (0 s elapsed)"
    # checks count in the order they report, not the plan's (a paper running beside
    # the others reports first)
    assert eta.describe("p/q: c", "c") == "[1/3] p/q: c (0 s elapsed)"
    now[0] += 20.0
    assert eta.describe("p/q: a", "a") == "[2/3] p/q: a (20 s elapsed)"
    now[0] += 400.0
    line = eta.describe("b")
    assert line == "[3/3] b (7.0 min elapsed)"
    assert "left" not in line  # no estimate: it was wrong by a factor of 40 (issue 24)
    # a step the plan does not know, or a check reported again: the count so far
    assert eta.describe("writing report") == "[3/3] writing report (7.0 min elapsed)"
    assert eta.describe("a") == "[3/3] a (7.0 min elapsed)"


def test_without_a_plan_steps_are_numbered():
    eta = cli._Eta(None)
    assert eta.describe("loading").startswith("[1] loading (")
    assert eta.describe("audit").startswith("[2] audit (")


def test_the_recorded_plans_are_well_formed():
    table = json.loads(resources.files("dpclaims").joinpath(cli.EXPECTED_SECONDS).read_text())
    assert {"dpsep/quick", "all/smoke"} <= set(table["plans"])
    for plan in table["plans"].values():
        assert plan and all(isinstance(n, str) and s >= 0 for n, s in plan)
    assert {n for n, _ in cli._plan("dpsep/quick")} >= {"Prop. 1 property test", "reference runs"}
    assert cli._plan("no/such") is None
