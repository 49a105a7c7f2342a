"""Progress lines: k of N and the time left from a recorded plan (issue 13)."""

from __future__ import annotations

import json
from importlib import resources

from dpclaims import cli


def test_eta_counts_checks_and_shows_elapsed_time_only(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(cli.time, "perf_counter", lambda: now[0])
    eta = cli._Eta([("a", 10.0), ("b", 30.0), ("c", 60.0)])
    assert eta.describe("[p/q] a", "a") == "check 1 of 3: [p/q] a (0 s elapsed)"
    now[0] += 20.0
    assert eta.describe("[p/q] b", "b") == "check 2 of 3: [p/q] b (20 s elapsed)"
    now[0] += 400.0
    line = eta.describe("c")
    assert line == "check 3 of 3: c (7.0 min elapsed)"
    assert "left" not in line  # no estimate: it was wrong by a factor of 40 (issue 24)
    # a step the plan does not know: a plain numbered line, no guessed count
    assert eta.describe("writing report").startswith("step 4 (7.0 min elapsed): ")


def test_without_a_plan_steps_are_numbered():
    eta = cli._Eta(None)
    assert eta.describe("loading").startswith("step 1 (")
    assert eta.describe("audit").startswith("step 2 (")


def test_the_recorded_plans_are_well_formed():
    table = json.loads(resources.files("dpclaims").joinpath(cli.EXPECTED_SECONDS).read_text())
    assert {"dpsep/quick", "all/smoke"} <= set(table["plans"])
    for plan in table["plans"].values():
        assert plan and all(isinstance(n, str) and s >= 0 for n, s in plan)
    assert {n for n, _ in cli._plan("dpsep/quick")} >= {"Prop. 1 property test", "reference runs"}
    assert cli._plan("no/such") is None
