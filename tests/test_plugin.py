"""The finished Paper interface (issue 39): one module for plugins (dpclaims.plugin),
frozen verdicts stamped by the runner, Section values beside dicts, ctx.timer, and a
plugin written against the older imports still running."""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

import pytest

import dpclaims.plugin as plugin
from dpclaims.claims.registry import load_paper, run_papers
from dpclaims.reports.render import summarise, summary_line

ROOT = Path(__file__).resolve().parents[1]

NEW_STYLE = '''
from dataclasses import dataclass

from dpclaims.plugin import (Bound, Budget, Claim, Claimed, Paper, PaperResult, Section,
                             decide, ran_on, rng_for)

CLAIM = Claim(id="toy/mean", paper="Toy", location="Sec. 1", statement="mean <= 1",
              check="exact", kind="identity")


@dataclass(frozen=True)
class ToyBudget(Budget):
    draws: int = 10


def run(ctx):
    x = float(rng_for(ctx.seed, "toy").uniform(0, 0.5, ctx.budget.draws).mean())
    b = Bound(x, "exact mean", basis="exact")
    verdicts = ctx.timer("mean", lambda: [decide(CLAIM, "as printed", Claimed("mean", 1.0),
                                                   lower=b, upper=b)])
    verdicts += ran_on([decide(CLAIM, "no randomness", Claimed("mean", 1.0), lower=b,
                               upper=b, seed=None), decide(CLAIM, "child", Claimed("mean", 1.0),
                                                           lower=b, upper=b, seed=77)], "toy")
    section = Section("Toy", text="a table", table={"columns": ["x"], "rows": [[x]]})
    return PaperResult(ran_on(verdicts, "none"), [section, {"title": "Plain", "text": "t"}],
                       {"draws": ctx.budget.draws}, ctx.timer.timings)


PAPER = Paper(id="toy", title="Toy", texts=("toy",), claims=(CLAIM,),
              budgets={n: ToyBudget(n) for n in ("smoke", "quick", "standard", "full")},
              run=run)
'''

OLD_STYLE = '''
import time
from dataclasses import dataclass

from dpclaims.claims import CheckTimer, Claim, ran_on
from dpclaims.claims.checks.bounds import epsilon_bounds  # noqa: F401
from dpclaims.claims.kernel import Bound, Claimed, decide
from dpclaims.claims.paper import Budget, Paper, PaperResult, RunContext

CLAIM = Claim(id="old/mean", paper="Old", location="Sec. 1", statement="mean <= 1",
              check="exact")


@dataclass(frozen=True)
class OldBudget(Budget):
    draws: int = 10


def run(ctx: RunContext) -> PaperResult:
    timed = CheckTimer(ctx.progress)
    b = Bound(0.5, "exact", basis="exact")
    verdicts = []
    verdicts += ran_on(timed("mean", lambda: [decide(
        CLAIM, "as printed", Claimed("mean", 1.0), lower=b, upper=b, seed=ctx.seed + 1,
        budget=ctx.budget.name)]), "none")
    sections = [{"title": "Old", "text": "t", "table": {"columns": ["a"], "rows": [[1]]}}]
    return PaperResult(verdicts, sections, {"seed": ctx.seed}, timed.timings)


PAPER = Paper(id="old", title="Old", texts=("old",), claims=(CLAIM,),
              budgets={n: OldBudget(n) for n in ("smoke", "quick", "standard", "full")},
              run=run)
'''


def _paper(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return load_paper(f"{path}:PAPER")


def test_the_runner_stamps_seed_and_budget_and_keeps_what_a_check_said(tmp_path):
    paper = _paper(tmp_path, "toy_plugin", NEW_STYLE)
    verdicts, sections, meta, timings = run_papers([paper], "quick", 5, tmp_path)
    by = {str(v.reading): v for v in verdicts}
    assert by["as printed"].seed == 5 and by["as printed"].budget == "quick"
    assert by["no randomness"].seed is None  # a check that draws nothing says so
    assert by["child"].seed == 77  # a child seed is kept
    assert by["child"].data == "toy" and by["as printed"].data == "none"
    assert [list(s) for s in sections] == [["title", "text", "table"], ["title", "text"]]
    assert list(timings) == ["mean"] and meta == {"draws": 10}


def test_a_plugin_written_against_the_older_imports_still_runs(tmp_path):
    paper = _paper(tmp_path, "old_plugin", OLD_STYLE)
    verdicts, sections, _, timings = run_papers([paper], "smoke", 3, tmp_path)
    [v] = verdicts
    assert (v.verdict, v.seed, v.budget, v.data) == ("holds", 4, "smoke", "none")
    assert sections[0]["table"] == {"columns": ["a"], "rows": [[1]]} and "mean" in timings


def test_verdicts_are_frozen_and_stamped_copies():
    c = plugin.Claim(id="x/y", paper="p", location="l", statement="s", check="c")
    b = plugin.Bound(0.5, "exact", basis="exact")
    v = plugin.decide(c, "r", plugin.Claimed("q", 1.0), lower=b, upper=b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.budget = "smoke"
    assert v.to_dict()["seed"] is None  # not stamped yet
    w = v.stamped(seed=3, budget="smoke", data="d")
    assert (w.seed, w.budget, w.data) == (3, "smoke", "d") and v.data is None
    assert w.stamped(seed=9, budget="full", data="e") is w  # what it says is kept
    [x] = plugin.ran_on([v], "d")
    assert x is not v and x.data == "d" and v.data is None


def test_section_to_dict_is_todays_dict():
    assert plugin.Section("T", "x").to_dict() == {"title": "T", "text": "x"}
    s = plugin.Section("T", "x", {"columns": [], "rows": []}, ("a.png",))
    assert list(s.to_dict()) == ["title", "text", "table", "figures"]
    assert s.to_dict()["figures"] == ["a.png"]


def test_ctx_timer_is_built_from_the_context(tmp_path):
    seen = []
    ctx = plugin.RunContext(budget=plugin.Budget("smoke"), seed=0, out_dir=tmp_path,
                            progress=seen.append)
    assert ctx.timer("step", lambda: 4) == 4 and seen == ["step"]
    assert list(ctx.timer.timings) == ["step"]


def test_every_name_of_the_plugin_module_resolves():
    for name in plugin.__all__:
        assert getattr(plugin, name) is not None
    with pytest.raises(AttributeError):
        plugin.not_a_name  # noqa: B018


def test_the_example_plugin_imports_dpclaims_only_through_dpclaims_plugin():
    modules = set()
    for path in (ROOT / "examples/bs18_expfam/src/bs18_expfam").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules |= {a.name for a in node.names}
    assert {m for m in modules if m.startswith("dpclaims")} == {"dpclaims.plugin"}


def test_the_summary_line_names_the_root_seed_not_a_list(tmp_path):
    paper = _paper(tmp_path, "toy_plugin2", NEW_STYLE.replace('"toy', '"toy2'))
    verdicts = run_papers([paper], "smoke", 2, tmp_path).verdicts
    from dpclaims.claims import claims_summary

    line = summary_line(summarise(claims_summary(verdicts)), verdicts, {}, seed=2)
    assert "Seed 2 (checks use seeds derived from it), budget smoke." in line
    assert "77" not in line
    sys.modules.pop("toy_plugin2", None)
