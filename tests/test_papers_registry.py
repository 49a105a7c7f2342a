"""The Paper interface and the registry (issue 22): the seed papers are ordinary plugins,
a paper named as ``file.py:obj`` runs through the same runner, and a plugin that breaks
the interface is bad input (exit 2) naming it."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from dpclaims.claims import Claim, InputError
from dpclaims.claims.paper import BUDGET_NAMES, Budget, Paper, PaperResult
from dpclaims.claims.registry import load_paper, registered_papers, resolve, run_papers
from dpclaims.cli import main
from dpclaims.reports.results import reading_records

_CLAIM = Claim("toy/c", "Toy", "Sec. 1", "x <= 1", "exact", kind="identity")


@dataclass(frozen=True)
class _B(Budget):
    n: int = 1


def _budgets():
    return {n: _B(n) for n in BUDGET_NAMES}


def _paper(**kw):
    base = dict(id="toy", title="Toy", texts=("toy.txt",), claims=(_CLAIM,),
                budgets=_budgets(), run=lambda ctx: PaperResult([], [], {}, {}))
    return Paper(**{**base, **kw})


def test_the_seed_papers_are_registered_plugins_in_run_order():
    papers = registered_papers()
    assert [p.id for p in papers][:4] == ["dpsep", "vips", "dpvim", "accounting"]
    for p in papers:
        assert set(p.budgets) == set(BUDGET_NAMES)
        assert all(isinstance(b, Budget) and b.name == n for n, b in p.budgets.items())
        assert p.claims and len(p.claim_ids) == len(p.claims)


@pytest.mark.parametrize("kw, match", [
    ({"id": "Bad Id"}, "paper id"),
    ({"id": "all"}, "paper id"),
    ({"budgets": {"smoke": _B("smoke")}}, "missing"),
    ({"budgets": {**_budgets(), "quick": _B("smoke")}}, "name is 'quick'"),
    ({"claims": (_CLAIM, _CLAIM)}, "declared twice"),
    ({"claims": ("toy/c",)}, "Claim values"),
])
def test_a_malformed_paper_is_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        _paper(**kw)


def test_resolve_names_the_known_papers():
    with pytest.raises(InputError, match="unknown paper 'nope'.*dpsep"):
        resolve("nope")
    with pytest.raises(InputError, match="budget must be one of"):
        registered_papers()[0].budget("huge")
    with pytest.raises(InputError, match="not found"):
        load_paper("/nonexistent/paper.py:PAPER")
    with pytest.raises(InputError, match="path/to/file.py:obj"):
        load_paper("paper.py:")


_TOY = '''
from dataclasses import dataclass
from dpclaims.claims import Claim
from dpclaims.claims.kernel import Bound, Claimed, decide
from dpclaims.claims.paper import BUDGET_NAMES, Budget, Paper, PaperResult

CLAIM = Claim("toy/sensitivity", "Toy paper", "Eq. 1", "the sensitivity is at most {claimed}",
              "exact recomputation", kind="sensitivity")
OTHER = Claim("toy/undeclared", "Toy paper", "Eq. 2", "not declared", "none")

@dataclass(frozen=True)
class ToyBudget(Budget):
    n: int = 1

def run(ctx):
    {body}
    v = decide(CLAIM, "as-printed", Claimed("sensitivity", {claimed}),
               lower=Bound(2.0, "a worst-case pair"), upper=Bound(2.0, "the proof"),
               seed=ctx.seed)
    return PaperResult([v], [], {{"n": ctx.budget.n}}, {{}})

PAPER = Paper(id="toy", title="Toy", texts=("toy.txt",), claims=(CLAIM,),
              budgets={{n: ToyBudget(n) for n in BUDGET_NAMES}}, run=run)
'''


def _toy(tmp_path, claimed=1.0, body="pass"):
    path = tmp_path / "toy_paper.py"
    path.write_text(textwrap.dedent(_TOY.format(claimed=claimed, body=body)))
    return f"{path}:PAPER"


@pytest.mark.parametrize("claimed, code, verdict", [(1.0, 1, "refuted"), (2.0, 0, "holds")])
def test_a_paper_named_by_file_runs_through_the_runner(tmp_path, claimed, code, verdict):
    spec = _toy(tmp_path, claimed)
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["audit", "--paper", spec, "--budget", "smoke",
                                       "--out", str(out)])
    assert result.exit_code == code, result.output
    data = json.loads((out / "results.json").read_text())
    assert [(v["claim_id"], v["verdict"], v["budget"]) for v in reading_records(data)] == [
        ("toy/sensitivity", verdict, "smoke")]


@pytest.mark.parametrize("body, match", [
    ("return PaperResult([decide(OTHER, 'r', Claimed('x', 1.0))], [], {}, {})",
     "does not declare"),
    ("return 42", "must return"),
    ("raise RuntimeError('boom in the toy')", "toy_paper.py"),
])
def test_a_plugin_that_breaks_the_interface_is_bad_input(tmp_path, body, match):
    spec = _toy(tmp_path, body=body)
    result = CliRunner().invoke(main, ["audit", "--paper", spec, "--budget", "smoke",
                                       "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert match in result.output
    assert not (tmp_path / "o" / "results.json").exists()


def test_several_papers_merge_and_see_their_companions(tmp_path):
    seen = {}

    def run_as(pid):
        def run(ctx):
            seen[pid] = ctx.companions
            return PaperResult([], [{"title": "t", "text": ""}], {"id": pid}, {"x": 0.0})
        return run

    a = _paper(id="a", run=run_as("a"), claims=())
    b = _paper(id="b", run=run_as("b"), claims=())
    r = run_papers([a, b], "smoke", 0, tmp_path)
    assert seen == {"a": frozenset({"b"}), "b": frozenset({"a"})}
    assert [s["title"] for s in r.sections] == ["a: t", "b: t"]
    assert r.meta == {"a": {"id": "a"}, "b": {"id": "b"}}


def test_the_papers_command_lists_the_registry():
    result = CliRunner().invoke(main, ["papers"])
    assert result.exit_code == 0, result.output
    for pid in ("dpsep", "vips", "dpvim", "accounting"):
        assert pid in result.output


def test_a_broken_paper_of_dpclaims_itself_is_a_bug_not_bad_input(tmp_path):
    """The same interface breach is the plugin author's input error (exit 2) from a user's
    paper and an internal error (exit 70) from one of dpclaims' own papers."""
    from dpclaims.claims.paper import RunContext
    from dpclaims.claims.registry import run_paper

    def run(ctx):
        return 42

    ctx = RunContext(budget=_B("smoke"), seed=0, out_dir=tmp_path)
    with pytest.raises(InputError, match="must return"):
        run_paper(_paper(run=run), ctx)
    run.__module__ = "dpclaims.papers.example"
    with pytest.raises(RuntimeError, match="must return") as info:
        run_paper(_paper(run=run), ctx)
    assert not isinstance(info.value, InputError)
