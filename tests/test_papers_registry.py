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
               lower=Bound(2.0, "a worst-case pair", basis="exact"),
               upper=Bound(2.0, "the recomputation", basis="exact"),
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


# ------------------------------------------------------------ issue 37/38: the runner's checks
@pytest.mark.parametrize("body, match", [
    ("import sys; sys.exit(0)", "called sys.exit(0)"),
    ("return PaperResult(['holds'], [], {}, {})", "verdict 0 of run's result is a str"),
    ("return PaperResult([], [{'text': 'no title'}], {}, {})", "needs a non-empty str 'title'"),
    ("return PaperResult([], [{'title': 't', 'table': {'rows': []}}], {}, {})",
     "'table' needs lists"),
    ("return PaperResult([], [], {'when': object()}, {})", "meta['when'] is a object"),
    ("return PaperResult([], [], [], {})", "run's meta must be a dict"),
    ("return PaperResult([decide(CLAIM, 'r', Claimed('x', 1.0), evidence={'f': print})],"
     " [], {}, {})", "evidence['f'] is a builtin_function_or_method"),
])
def test_a_plugin_result_dpclaims_cannot_report_is_bad_input(tmp_path, body, match):
    """A plugin that exits, or whose result the report cannot hold, is the plugin's error
    (exit 2, one line naming it), not a bug of dpclaims (70) nor a silent exit 0."""
    spec = _toy(tmp_path, body=body)
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["audit", "--paper", spec, "--budget", "smoke",
                                       "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert match in result.output and "paper 'toy'" in result.output
    assert not out.exists()
    assert not list(tmp_path.glob(".o.partial-*"))


_TWO_CLAIMS = '''
from dataclasses import dataclass
from dpclaims.claims import Claim
from dpclaims.claims.kernel import Bound, Claimed, decide
from dpclaims.claims.paper import BUDGET_NAMES, Budget, Paper, PaperResult

A = Claim("two/a", "Two", "Eq. 1", "a <= 2", "exact", kind="identity")
B = Claim("two/b", "Two", "Eq. 2", "b <= 2", "exact", kind="identity")

@dataclass(frozen=True)
class TwoBudget(Budget):
    n: int = 1

def run(ctx):
    v = decide(A, "as printed", Claimed("a", 2.0), lower=Bound(1.0, "x", basis="exact"),
               upper=Bound(1.0, "x", basis="exact"), seed=ctx.seed)
    return PaperResult([v], [], {}, {})

PAPER = Paper(id="two", title="Two", texts=("two.txt",), claims=(A, B),
              budgets={n: TwoBudget(n) for n in BUDGET_NAMES}, run=run)
'''


def test_a_declared_claim_without_a_verdict_is_reported_not_checkable(tmp_path):
    """Issue 38: the runner compares the declared claims with the verdicts; the one left
    out is in the report, not-checkable with the reason, and the exit code is 3."""
    path = tmp_path / "two_paper.py"
    path.write_text(_TWO_CLAIMS)
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["audit", "--paper", f"{path}:PAPER", "--budget",
                                       "smoke", "--out", str(out)])
    assert result.exit_code == 3, result.output
    data = json.loads((out / "results.json").read_text())
    assert data["summary"]["claims"] == 2 and data["summary"]["not-checkable"] == 1
    assert [(c["id"], c["verdict"]) for c in data["claims"]] == [
        ("two/a", "holds"), ("two/b", "not-checkable")]
    assert "returned no verdict for it (a bug in the paper)" in data["claims"][1]["headline"]
    assert data["claims"][1]["readings"][0]["budget"] == "smoke"


def test_every_declared_claim_keeps_the_order_and_is_added_once():
    from dpclaims.claims.kernel import Claimed, decide
    from dpclaims.claims.registry import with_every_declared_claim

    a, b = (Claim(f"x/{k}", "X", "Eq.", "s", "c") for k in "ab")
    p = _paper(id="p", claims=(a, b))
    q = _paper(id="q", claims=(b, _CLAIM))
    va = decide(a, "r", Claimed("a", 1.0))
    vb = decide(b, "r", Claimed("b", 1.0))
    out = with_every_declared_claim([p, q], [[va], [vb]])
    assert [v.claim.id for v in out] == ["x/a", "x/b", "toy/c"]
    assert out[:2] == [va, vb] and out[2].verdict == "not-checkable"
    out = with_every_declared_claim([p, q], [[va], []])
    assert [(v.claim.id, v.verdict) for v in out] == [
        ("x/a", "inconclusive"), ("x/b", "not-checkable"), ("toy/c", "not-checkable")]


def test_one_broken_plugin_does_not_block_the_others(monkeypatch):
    """Issue 37: a third-party plugin that does not load is skipped with one line when
    another paper (or all) is asked for, and is an error (exit 2) when it is named."""
    from importlib.metadata import EntryPoint

    from dpclaims.claims import registry

    real = list(registry.entry_points(group=registry.ENTRY_POINT_GROUP))
    broken = EntryPoint("broken", "no_such_module_for_dpclaims:PAPER", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: real + [broken])
    reg = registry.load_registry()
    assert "broken" in reg.broken and "ModuleNotFoundError" in reg.broken["broken"]
    assert [p.id for p in reg.papers][:4] == ["dpsep", "vips", "dpvim", "accounting"]
    skipped = []
    assert [p.id for p in registry.resolve("dpsep", skipped.append)] == ["dpsep"]
    assert skipped == []
    assert "dpsep" in [p.id for p in registry.resolve("all", skipped.append)]
    assert len(skipped) == 1 and skipped[0].startswith("skipped: the paper plugin entry "
                                                       "point 'broken'")
    with pytest.raises(InputError, match="does not load: ModuleNotFoundError"):
        registry.resolve("broken")
    result = CliRunner().invoke(main, ["audit", "--paper", "broken", "--budget", "smoke"])
    assert result.exit_code == 2 and "does not load" in result.output
    result = CliRunner().invoke(main, ["papers"])
    assert result.exit_code == 0 and "dpsep" in result.output and "broken" in result.output


def test_a_selection_keeps_and_completes_only_the_selected_claims(tmp_path):
    from dpclaims.claims.kernel import Claimed, decide
    from dpclaims.claims.paper import claim_selected
    from dpclaims.claims.registry import select_claims

    a, b, c = (Claim(f"x/{k}", "X", "Eq.", "s", "c") for k in ("alpha", "beta", "gamma"))
    seen = []

    def run(ctx):
        seen.append((ctx.selection, ctx.wants("x/alpha"), ctx.wants("x/gamma"), ctx.wants()))
        return PaperResult([decide(a, "r", Claimed("a", 1.0)),
                            decide(c, "r", Claimed("c", 1.0))], [], {}, {})

    p = _paper(id="x", claims=(a, b, c), run=run)
    r = run_papers([p], "smoke", 0, tmp_path, selection=("beta", "x/al*"))
    assert seen == [(("beta", "x/al*"), True, False, False)]
    assert [(v.claim.id, v.verdict) for v in r.verdicts] == [
        ("x/alpha", "inconclusive"), ("x/beta", "not-checkable")]
    assert r.meta["selected claims"] == {"patterns": ["beta", "x/al*"],
                                         "claims": ["x/alpha", "x/beta"]}
    assert claim_selected("dpsep/prop1-sensitivity", ["prop1-*"])
    assert not claim_selected("dpsep/prop1-sensitivity", ["prop2*"])
    assert select_claims([p], ()) == ["x/alpha", "x/beta", "x/gamma"]
    with pytest.raises(InputError, match="selects no claim of x"):
        select_claims([p], ("nothing",))
    with pytest.raises(InputError, match="needs a claim id"):
        select_claims([p], (" ",))
