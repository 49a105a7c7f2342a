"""End-to-end tests of the `dpclaims` command line (smoke budget: every check runs).

One smoke audit of every paper (``audit --paper all --budget smoke --seed 2``, the module
fixture ``smoke_run``) serves every test here: the report of all papers in one
(tests/test_cli_all.py until 2026-11-28) and the DP-SEP tests, which read DP-SEP's part of
it (a DP-SEP-only smoke audit at seed 3, a second run of the same DP-SEP checks, cost 54
CPU-s of the suite; DP-SEP's checks do not depend on the papers run beside it, and
``--claim`` runs of DP-SEP alone below compare their claims with it record for record),
VIPS's known answers (tests/test_vips_report.py until 2026-11-28, which ran a VIPS smoke
audit of its own) and its BLR, SBN and LDA accuracy records (their test files ran the same
checks at seed 0 until 2026-11-28), and ``--claim`` runs of VIPS and of DPVIm alone, which
run only the selected claims' checks and compare those claims with it record for record.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpclaims.claims.registry import registered_papers
from dpclaims.cli import _plan, main
from dpclaims.reports.render import caption as caption_of
from dpclaims.reports.render import compressed_png
from dpclaims.reports.results import load_results, reading_records

RECORDED = Path(__file__).parent / "data" / "smoke_verdicts_seed2.json"
SEED = 2  # the seed of the recorded verdicts (RECORDED)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# every claim DP-SEP declares is in its report (issue 38): these 17 with a check at the
# smoke budget, the other 7 not-checkable with the paper's own reason
RUN_AT_SMOKE = {
    "dpsep/prop1-sensitivity",
    "dpsep/prop2-privacy",
    "dpsep/thm41-kl-tail-bound",
    "dpsep/empirical-audit",
    # issue 7: the Thm. 4.1 study, the tables and the statements about them
    "dpsep/thm41-kl-scales-1-over-n",
    "dpsep/thm41-broad-posterior",
    "dpsep/v1-table1-mog",
    "dpsep/v2-table-mog",
    "dpsep/v1-table5-point",
    "dpsep/mog-privacy-tradeoff",
    "dpsep/mog-dpsep-higher-uncertainty",
    "dpsep/clipping-improves-sep",
    "dpsep/bnn-dpsep-comparable-to-sep",
    "dpsep/bnn-dpsep-better-than-sep",
    "dpsep/bnn-dpsep-beats-point-estimate",
    "dpsep/bnn-clipping-reduces-rmse",
    "dpsep/bnn-ep-beats-vi",
}


def dpsep_started_pair(out_dir):
    """DP-SEP's Prop. 2 accounting and reference runs at the smoke budget and :data:`SEED`,
    as ``run_dpsep_audit`` calls them (with ``--workers`` 2 or more it starts them in a
    forked process beside the others): ((verdicts, Prop. 2's section), the reference
    runs' section)."""
    from dpclaims.papers.dpsep.catalogue import BUDGETS
    from dpclaims.papers.dpsep.checks import check_prop2, load_inputs, reference_runs

    budget = BUDGETS["smoke"]
    probit, linear = load_inputs(None)
    own = [(f"fair (this run, N={probit.n_train})", probit.n_train, 40, 1.0)]
    return (check_prop2(budget, SEED, own),
            reference_runs([probit, linear], budget, SEED, out_dir))


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """Every paper's smoke audit, once for the module: (report folder, CliRunner result).
    ``--workers 2``: DP-SEP's Prop. 2 accounting and reference runs and the accounting
    paper run in forked processes beside the others, whatever the machine's cores
    (test_all_papers_in_one_report asserts they did)."""
    out = tmp_path_factory.mktemp("smoke")
    result = CliRunner().invoke(main, ["audit", "--paper", "all", "--budget", "smoke",
                                       "--seed", str(SEED), "--workers", "2", "--out",
                                       str(out), "--overwrite"])
    # DP-SEP's claims are refuted under readings of the paper's text: exit 1 (a finding;
    # the report is written whatever the code)
    assert result.exit_code == 1, result.output
    return out, result


def declared_elsewhere(paper: str) -> set[str]:
    """The ids of the claims the registered papers other than ``paper`` declare (the
    accounting paper declares the privacy numbers of every paper, ``dpsep/eps-*`` and
    ``vips/eps-*`` among them)."""
    return set().union(*(p.claim_ids for p in registered_papers() if p.id != paper))


def dpsep_records(results: dict) -> list[dict]:
    """The reading records of a report's claims that no paper but DP-SEP declares."""
    others = declared_elsewhere("dpsep")
    return [v for v in reading_records(results) if v["claim_id"] not in others]


def test_all_papers_in_one_report(smoke_run):
    """`dpclaims audit --paper all` (smoke): one report with every paper's claims, no
    duplicates (the fixture: claims are refuted, exit 1, a finding)."""
    tmp_path, _ = smoke_run
    data = json.loads((tmp_path / "results.json").read_text())
    ids = [(v["claim_id"], v["reading"]) for v in reading_records(data)]
    assert not [k for k, c in Counter(ids).items() if c > 1]  # each verdict once
    prefixes = {cid.split("/")[0] for cid, _ in ids}
    assert prefixes >= {"dpsep", "vips", "dpvim"}
    assert set(data["meta"]) == {"dpsep", "vips", "dpvim", "accounting"}
    assert all(s["title"].split(":")[0] in data["meta"] for s in data["sections"])
    # the verdict of every claim and reading, and every headline, as recorded
    recorded = json.loads(RECORDED.read_text())
    got = [[v["claim_id"], v["reading"], v["verdict"]] for v in reading_records(data)]
    assert got == recorded["verdicts"]
    assert [[c["id"], c["verdict"]] for c in data["claims"]] == recorded["headlines"]
    # the progress line's recorded plan (k of N, time left) names the checks this run made
    info = json.loads((tmp_path / "run_info.json").read_text())
    names = [n for part in info["seconds per check"].values() for n in part]
    # --workers 2: the checks started beside the others did run in forked processes
    checks = [x for x in info["worker processes"] if x["what"] == "checks"]
    assert [(x["method"], x["workers"]) for x in checks] == [("fork", 2)], checks
    assert [n for n, _ in _plan("all/smoke")] == names
    # every figure has a caption (its paper's Paper.captions), and the HTML report shows it
    captions = {k: v for p in registered_papers() for k, v in p.captions.items()}

    def caption(name):
        return caption_of(name, captions)

    figures = {f for v in reading_records(data) for f in v["figures"]}
    figures |= {f for s in data["sections"] for f in s.get("figures", [])}
    assert len(figures) >= 15 and [f for f in figures if caption(f) is None] == []
    # figure names are relative to the report folder (results.json does not depend on
    # it) and name files there; for DPVIm this was a smoke run of its own, 26 s
    assert all(not Path(f).is_absolute() and (tmp_path / f).is_file() for f in figures)
    assert any("dpvim" in f for f in figures), sorted(figures)
    dpvim_ids = {cid for cid, _ in ids if cid.startswith("dpvim/")}
    assert dpvim_ids >= {"dpvim/aligned-identity", "dpvim/corollary31-no-extra-cost",
                         "dpvim/thm31-variance-reduction", "dpvim/eq12", "dpvim/fisher-blocks",
                         "dpvim/ou-noise-scaling", "dpvim/iterate-averaging-gain",
                         "dpvim/noise-aware-coverage", "dpvim/adult-aligned-natural-best",
                         "dpvim/trace-std-matches-spread", "dpvim/empirical-audit"}
    assert any(cid.startswith("dpvim/eps-") for cid in dpvim_ids)
    html = (tmp_path / "report.html").read_text()
    assert all(caption(f).split(":")[0] in html for f in figures)


@pytest.mark.parametrize("args", [["--help"], ["audit", "--help"], ["--version"]])
def test_help(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0
    assert result.output.strip()


def test_audit_writes_report_with_every_claim(smoke_run):
    out, result = smoke_run
    for name in ("results.json", "report.md", "report.html", "run_info.json",
                 "audit_scores.png", "thm41_tail.png", "reference_runs.png",
                 "thm41_study_tails.png", "thm41_scaling_N.png", "bnn_uci.png",
                 "mog_paper/mog_posteriors_d2.png", "mog_honest/mog_metrics_d2.png"):
        assert (out / name).is_file(), name
    results = json.loads((out / "results.json").read_text())
    from dpclaims.claims.registry import NO_VERDICT_READING
    from dpclaims.papers.dpsep import PAPER

    records = dpsep_records(results)
    assert {v["claim_id"] for v in records} == PAPER.claim_ids
    assert len(PAPER.claim_ids) == 24
    assert len({v["claim_id"] for v in records}) == 24
    assert results["summary"]["claims"] == len(results["claims"])
    not_run = {v["claim_id"] for v in records if v["data"] == "none: not run"}
    assert not_run == PAPER.claim_ids - RUN_AT_SMOKE
    assert all(v["verdict"] == "not-checkable" for v in records if v["claim_id"] in not_run)
    assert not [v for v in reading_records(results) if v["reading"] == NO_VERDICT_READING]
    for v in reading_records(results):  # every paper's (a check that draws nothing at
        # random, as the accounting paper's, has no seed)
        assert v["verdict"] in {"holds", "refuted", "inconclusive", "not-checkable"}
        assert v["sentence"] and v["evidence"] and v["budget"] == "smoke"
        if v["verdict"] == "refuted":
            assert v["certificate"], v["claim_id"]
    assert all(v["seed"] == SEED for v in records)
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html
    # each figure embedded once, and the whole report small enough to mail (issue 24)
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(images) == len(set(images)) >= 10
    # DP-SEP's report alone is at most 1.5 MB: this report less the other papers' figures
    # (each embedded here once, as render embeds it) is at least as large as DP-SEP's
    # alone would be
    dpsep_ids = {v["claim_id"] for v in records}
    figures = {f for v in records for f in v["figures"]} | {
        f for s in results["sections"] if s["title"].startswith("dpsep: ")
        for f in s.get("figures", [])}
    others = {f for v in reading_records(results) if v["claim_id"] not in dpsep_ids
              for f in v["figures"]} | {
        f for s in results["sections"] if not s["title"].startswith("dpsep: ")
        for f in s.get("figures", [])}
    embedded = [base64.b64encode(compressed_png((out / f).read_bytes())).decode()
                for f in others - figures]
    assert embedded and all(b in images for b in embedded)
    assert (out / "report.html").stat().st_size - sum(map(len, embedded)) <= 1_500_000


def test_audit_output_fits_a_log(smoke_run):
    """Not a terminal (CliRunner, a pipe, CI): one plain line per claim, led by its
    verdict, with its plain sentence whole, a summary line, and no box-drawing table."""
    from dpclaims.claims.headline import claim_sentence

    out, result = smoke_run
    assert not set(result.output) & set("┃│━─┏┓┗┛┡┩╇")
    claims = load_results(out)["claims"]
    lines = result.output.splitlines()
    for c in claims:
        (line,) = [x for x in lines if f" {c['id']}: " in x]
        assert line == f"{c['verdict']:<13} {c['id']}: {claim_sentence(c)}"
        assert "..." not in line
    assert f"{len(claims)} claims: " in result.output and f"Seed {SEED}, budget smoke." in (
        result.output)


def test_audit_verdicts_the_paper_analysis_predicts(smoke_run):
    """Readings with a known answer: eq. 4 as printed has sensitivity 2γC/N; SEP's own
    update has N times more, so its property test and its audit must refute."""
    out, _ = smoke_run
    verdicts = {(v["claim_id"], v["reading"]): v["verdict"]
                for v in dpsep_records(load_results(out))}
    # a search that finds no counterexample certifies no bound: inconclusive, not holds
    assert verdicts[("dpsep/prop1-sensitivity", "as-printed")] == "inconclusive"
    assert verdicts[("dpsep/prop1-sensitivity", "sep-invariant")] == "refuted"
    assert verdicts[("dpsep/empirical-audit", "sep-invariant")] == "refuted"
    assert verdicts[("dpsep/empirical-audit", "as-printed")] == "inconclusive"
    # Prop. 2: the shuffled pass refutes the claim only when the order is known; for a
    # hidden shuffle the composition is an upper bound and cannot refute
    prop2 = {r: v for (c, r), v in verdicts.items() if c == "dpsep/prop2-privacy"}
    assert len(prop2) == 6
    assert all(v == "refuted" for r, v in prop2.items() if r.endswith("order known to the "
                                                                      "adversary"))
    assert all(v != "refuted" for r, v in prop2.items() if r.endswith("hidden shuffle"))
    # exact facts about the printed tables; without --data-dir the BNN statements about
    # named UCI sets cannot be checked
    # v2 prints v0's ε = 5 row as ε = 5.5: identical numbers, but nothing certifies which
    # label is wrong (the kernel's undecided, with that reason)
    assert verdicts[("dpsep/v2-table-mog", "cross-version: the ε = 5.5 row")] == "inconclusive"
    assert {v for (c, _), v in verdicts.items() if c.startswith("dpsep/bnn-")} == {
        "not-checkable"}


def test_thm41_study_verdicts_known_by_construction(smoke_run):
    """The Thm. 4.1 study of the smoke audit (it was a smoke study of its own in
    tests/test_kl_tail_study.py, 20 s): its three claims, its figures, and the verdicts
    known by construction."""
    out, _ = smoke_run
    study = [v for v in dpsep_records(load_results(out)) if v["claim_id"] in {
        "dpsep/thm41-kl-tail-bound", "dpsep/thm41-kl-scales-1-over-n",
        "dpsep/thm41-broad-posterior"}]
    assert {v["claim_id"] for v in study} == {"dpsep/thm41-kl-tail-bound",
                                              "dpsep/thm41-kl-scales-1-over-n",
                                              "dpsep/thm41-broad-posterior"}
    for name in ("thm41_study_tails.png", "thm41_study_rates.png", "thm41_scaling_N.png",
                 "thm41_broadness.png"):
        assert (out / name).stat().st_size > 1000
    assert all(v["verdict"] != "refuted" or v["certificate"] for v in study)
    # Under Prop. 1's Δ = 2γC/N the KL falls like σ²/N³ (delta method), far from 1/N;
    # under the theorem's own model the unconditional tail is bounded below by
    # P(Σp not PD) > 0 on concentrated configurations.
    scaling = {v["reading"]: v for v in study if v["claim_id"].endswith("1-over-n")}
    printed = next(v for r, v in scaling.items() if "'as-printed'" in r)
    assert printed["verdict"] == "refuted"
    grid = next(v for v in study if v["reading"].startswith("grid")
                and "tail=unconditional, v(Z)=as-printed" in v["reading"])
    assert grid["verdict"] == "refuted"
    # the conditional tail is never certified below the bound at every a up to 1e8 by
    # 4000 draws (a CP upper bound is about 1e-3 where the bound is about 1e-8): no
    # configuration holds, none is refuted
    cond = next(v for v in study if v["reading"].startswith("grid")
                and "tail=conditional, v(Z)=as-printed" in v["reading"])
    assert cond["verdict"] == "inconclusive"
    assert "0 of 78 part(s) hold, none is refuted" in cond["sentence"]
    # the bound itself falls as Σq broadens: an exact evaluation certifies it
    bound = next(v for v in study if v["claim_id"].endswith("broad-posterior")
                 and v["reading"].startswith("the bound") and "as-printed" in v["reading"])
    assert bound["verdict"] == "holds"
    assert bound["evidence"]["basis"]["upper"]["confidence"] is None
    study_sections = [s for s in load_results(out)["sections"]
                      if s["title"].startswith("dpsep: Thm. 4.1 ")]
    assert len(study_sections) == 3 and all("table" in s for s in study_sections)


def test_same_seed_same_results_whatever_the_workers(smoke_run, tmp_path):
    """``--workers`` changes one thing in DP-SEP's audit: with 2 or more,
    ``run_dpsep_audit`` runs the Prop. 2 accounting and the reference runs in a forked
    process (``CheckTimer.start``); every other check runs in the CLI's process either
    way, and the results are assembled in one fixed order. So these two checks, run in
    the fixture's forked process (``--workers 2``; test_all_papers_in_one_report asserts
    the fork) and run here in this process, must give the same verdicts and sections,
    JSON for JSON. (A whole ``--workers 1`` rerun of the smoke audit, 52 s of the suite,
    compared results.json byte for byte for these two checks; a second forked run of the
    two before the audit, 20 CPU-s, was dropped on 2026-11-28: the audit's own run is
    the forked one.)"""
    from dpclaims.reports.render import to_jsonable

    out, _ = smoke_run
    here = dpsep_started_pair(tmp_path)
    # as the audit wrote them (section titles led by the paper's id in a report of
    # several papers): Prop. 2's section and verdicts, the reference runs'
    (verdicts, prop2_section), refs_section = here
    assert verdicts
    results = load_results(out)
    written_sections = [{**s, "title": s["title"].removeprefix("dpsep: ")}
                        for s in results["sections"] if s["title"].startswith("dpsep: ")]
    assert [s for s in written_sections if s["title"] in (
        prop2_section["title"], refs_section["title"])] == to_jsonable(
        [prop2_section, refs_section])
    written = {(r["claim_id"], r["reading"]): r for r in reading_records(results)}
    for v in verdicts:
        record = written[(v.claim.id, v.reading)]
        assert (record["verdict"], record["sentence"]) == (v.verdict, v.sentence)
        assert record["evidence"] == to_jsonable(v.evidence)


# The DP-SEP claims whose checks run on the cluster with --scheduler: the Prop. 2
# accounting (started beside the others), the empirical audit's trial blocks and the
# configurations of the Thm. 4.1 grid (its study)
ON_THE_CLUSTER = ["dpsep/prop2-*", "dpsep/empirical-audit", "dpsep/thm41-*"]


def test_same_seed_same_json_on_a_dask_cluster(smoke_run, dask_client, tmp_path):
    """``--scheduler``: DP-SEP's checks that run on a cluster (:data:`ON_THE_CLUSTER`,
    selected with ``--claim``) run on a two-worker LocalCluster (tests/conftest.py),
    their figures written into the shared output folder; every claim's record and every
    section is JSON for JSON the local run's (the fixture), and the report names the
    same figures. (A whole DP-SEP smoke audit on the cluster compared byte for byte with
    a local one cost 28 CPU-s of the suite plus its workers'; the checks it added run
    here, beside the other claims, and the selection is tested below.)
    tests/test_cluster.py tests the parts."""
    out, _ = smoke_run
    address = dask_client.scheduler.address
    args = [a for pattern in ON_THE_CLUSTER for a in ("--claim", pattern)]
    remote = CliRunner().invoke(main, ["audit", "--budget", "smoke", "--seed", str(SEED),
                                       *args, "--scheduler", address,
                                       "--out", str(tmp_path / "o")])
    assert remote.exit_code == 1, remote.output
    tmp_path = tmp_path / "o"
    got, local = load_results(tmp_path), load_results(out)
    same = {c["id"]: c for c in local["claims"]}
    assert {c["id"] for c in got["claims"]} == {
        "dpsep/prop2-privacy", "dpsep/empirical-audit", "dpsep/thm41-kl-tail-bound",
        "dpsep/thm41-kl-scales-1-over-n", "dpsep/thm41-broad-posterior"}
    for c in got["claims"]:
        assert json.dumps(c) == json.dumps(same[c["id"]]), c["id"]
    local_sections = {s["title"].removeprefix("dpsep: "): {
        **s, "title": s["title"].removeprefix("dpsep: ")} for s in local["sections"]}
    assert len(got["sections"]) >= 5
    for s in got["sections"]:
        assert json.dumps(s) == json.dumps(local_sections[s["title"]]), s["title"]
    info = json.loads((tmp_path / "run_info.json").read_text())
    assert info["scheduler"] == {"address": address, "workers": 2, "threads": 2}
    assert "scheduler" not in json.loads((out / "run_info.json").read_text())
    timed = info["seconds per check"]
    assert timed["Prop. 2 accounting"] is not None  # timed on a worker
    assert "Thm. 4.1 study" in timed and "empirical audit" in timed
    figures = {f for c in got["claims"] for r in c["readings"] for f in r["figures"]}
    figures |= {f for s in got["sections"] for f in s.get("figures", [])}
    assert figures and all((tmp_path / f).is_file() and (out / f).is_file() for f in figures)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.png")) == sorted(
        Path(f) for f in figures)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["audit", "--data-dir", "/nonexistent/data"], "/nonexistent/data"),
        (["audit", "--budget", "huge"], "huge"),
        (["audit", "--seed", "-1"], "-1"),
        (["audit", "--paper", "nope"], "nope"),
        (["audit", "--workers", "0"], "0"),
    ],
)
def test_bad_input_exits_2_naming_the_value(args, needle, tmp_path):
    result = CliRunner().invoke(main, args + ["--out", str(tmp_path)])
    assert result.exit_code == 2
    assert needle in result.output


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared data folder absent")
def test_audit_with_data_dir_uses_wine(tmp_path, monkeypatch):
    """``--data-dir`` reaches the papers (the CLI's wiring, with the papers' run replaced)
    and, given that folder, DP-SEP reads wine and its BNN and Table 4 claims get real
    verdicts (the functions the audit calls with it, at the smoke budget). A whole smoke
    audit with --data-dir cost 42 s of the suite for the same assertions; the smoke
    audits above run every check end to end."""
    import dpclaims.claims.registry as registry
    from dpclaims.papers.dpsep.catalogue import BUDGETS
    from dpclaims.papers.dpsep.checks import bnn_data_dir, load_inputs
    from dpclaims.papers.dpsep.checks_bnn import check_bnn

    seen = []

    def run_papers(papers, budget, seed, out, data_dir, tick, workers, client=None,
                   selection=()):
        seen.append(data_dir)
        return [], [], {}, {}

    with monkeypatch.context() as m:
        m.setattr(registry, "run_papers", run_papers)
        result = CliRunner().invoke(main, ["audit", "--budget", "smoke", "--data-dir",
                                           str(SHARED_DATA), "--out", str(tmp_path / "o")])
    assert result.exit_code == 3, result.output  # the replaced run checked nothing
    assert [Path(d) for d in seen] == [SHARED_DATA]
    info = json.loads((tmp_path / "o" / "run_info.json").read_text())
    assert str(SHARED_DATA) in info["data"]

    _, linear = load_inputs(SHARED_DATA)
    assert "wine-quality-red" in linear.source
    b = BUDGETS["smoke"]
    bnn_dir, described = bnn_data_dir(SHARED_DATA, b.bnn_sets)
    assert bnn_dir == SHARED_DATA and "the paper's data" in described
    verdicts, _, _ = check_bnn(
        data_dir=bnn_dir, sets=b.bnn_sets, n_splits=b.bnn_splits, epochs=b.bnn_epochs,
        vi_epochs=b.bnn_vi_epochs, max_train=b.bnn_max_train,
        embedded_train=b.bnn_embedded_train, seed=0, budget_name="smoke", out_dir=tmp_path)
    # with the data the BNN statements get real verdicts, and Table 4 is checked
    bnn = {v.verdict for v in verdicts if v.claim.id.startswith("dpsep/bnn-")}
    assert bnn and bnn <= {"holds", "refuted", "inconclusive"}
    table4 = [v.verdict for v in verdicts if v.claim.id == "dpsep/v0-table4-datasets"]
    # Table 4's sizes: every set loaded matches, but Year is not in the folder, so the
    # claim about all six sets is not certified
    assert table4 == ["inconclusive"]


def test_one_claim_at_a_time_gives_the_whole_runs_verdicts(smoke_run, tmp_path):
    """Issue 38: --claim runs the selected claims only (DP-SEP skips the other checks);
    their readings are those of the run of every claim (each check draws from its own
    seed), the report lists the selection, and a pattern that selects nothing is bad
    input before any work."""
    full = load_results(smoke_run[0])
    out = tmp_path / "sel"
    # a claim from one check (the empirical audit: 4.5 CPU-s at the smoke budget, where
    # Prop. 1's property test costs 6.8), a claim with readings from two (the Thm. 4.1
    # Monte Carlo and the study: a selection of it ran only the first until 2026-11-28,
    # so its headline counted 2 of 4 readings instead of 4 of 12), and a character class;
    # not Sec. 6.1's tables (dpsep/v1-table1-mog: the MoG runs, 8.8 CPU-s)
    patterns = ["empirical-*", "dpsep/thm41-kl-tail*", "dpsep/v1-table[345]*"]
    # --workers 1: the smoke audit has started an OpenMP pool in this process, so two
    # workers would be spawned processes, each importing the stack again (results are
    # the same whatever the workers; tested above)
    result = CliRunner().invoke(main, ["audit", "--budget", "smoke", "--seed", str(SEED),
                                       *[a for p in patterns for a in ("--claim", p)],
                                       "--workers", "1", "--out", str(out)])
    assert result.exit_code == 1, result.output  # the audit refutes the claimed epsilon
    got = load_results(out)
    chosen = ["dpsep/empirical-audit", "dpsep/thm41-kl-tail-bound",
              "dpsep/v1-table5-point", "dpsep/v1-table3-rmse", "dpsep/v1-table4-loglik"]
    assert sorted(c["id"] for c in got["claims"]) == sorted(chosen)
    from dpclaims.papers.dpsep import PAPER

    assert got["meta"]["selected claims"] == {  # in the order the paper declares them
        "patterns": patterns,
        "claims": [c.id for c in PAPER.claims if c.id in chosen]}
    same = {c["id"]: c for c in full["claims"]}
    for c in got["claims"]:
        assert c == same[c["id"]], c["id"]
    info = json.loads((out / "run_info.json").read_text())
    assert set(info["seconds per check"]) == {  # the others not run
        "empirical audit", "Thm. 4.1 Monte Carlo", "Thm. 4.1 study"}
    bad = CliRunner().invoke(main, ["audit", "--budget", "smoke", "--claim", "nope*",
                                    "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "--claim 'nope*' selects no claim of dpsep" in bad.output
    assert not (tmp_path / "bad").exists()


# --------------------------------------------------------------------------- VIPS


def test_vips_known_answers(smoke_run):
    """VIPS's verdicts with a known answer, read from the all-papers smoke audit
    (tests/test_vips_report.py ran a VIPS smoke audit of its own until 2026-11-28)."""
    v = {(r["claim_id"], r["reading"]): r for r in reading_records(load_results(smoke_run[0]))}
    # sqrt(2): two single-word documents on different word types (exact in the search)
    lda = v[("vips/lda-sensitivity", "clipped, a = 0.1 (Alg. 3)")]
    assert lda["verdict"] == "refuted"
    assert lda["evidence"]["max_ratio"] == pytest.approx(2 ** 0.5, rel=1e-3)
    assert lda["evidence"]["basis"]["lower"]["value"] > 1     # the counterexample's bound
    assert v[("vips/alg2-noise-calibration", "LDA")]["verdict"] == "refuted"
    # the log moment as printed is right only with sigma as the absolute std
    assert v[("vips/log-moment-gaussian", "sigma-absolute")]["verdict"] == "holds"
    assert v[("vips/log-moment-gaussian", "sigma-multiplier")]["verdict"] == "refuted"
    # BLR's bounds are valid (and loose): no property test may find a violation; the
    # search alone certifies nothing, the interval branch and bound gives the upper end
    # (issue 38), so they hold; alg2 keeps the searches' brackets (inconclusive)
    blr = [x for (cid, _), x in v.items() if cid == "vips/blr-sensitivity"]
    assert blr
    for x in blr:
        assert x["verdict"] == "holds" and x["evidence"]["max_ratio"] <= 1
        assert "No counterexample" in x["sentence"]
        assert "interval branch and bound" in x["evidence"]["basis"]["upper"]["source"]
    assert v[("vips/alg2-noise-calibration", "BLR")]["verdict"] == "inconclusive"
    assert any(cid == "vips/eps-lda" for cid, _ in v)


def _vips_records(smoke_run, claim_id):
    records = [r for r in reading_records(load_results(smoke_run[0]))
               if r["claim_id"] == claim_id]
    assert records, claim_id
    for r in records:
        # exact tests: a certificate exactly when they decide
        assert r["certificate"] == (r["verdict"] in ("holds", "refuted")), claim_id
        assert r["seed"] == SEED and r["budget"] == "smoke"
        assert r["evidence"] and r["sentence"]
        assert all((smoke_run[0] / f).stat().st_size > 1000 for f in r["figures"])
    return records


def test_vips_blr_accuracy_record(smoke_run):
    """Fig. 6's BLR reproduction in the all-papers smoke audit: its sizes, the epsilon of
    each sigma under both readings, and the verdict as the exact trend test's p-values
    decide it (tests/test_vips_blr_sbn_accuracy.py ran its own smoke-size BLR and SBN
    checks at seed 0 until 2026-11-28: 4.5 CPU-s beside this run's)."""
    import numpy as np

    from dpclaims.papers.vips.checks_blr_sbn import BLR_FIGURE, BUDGETS, trend_test

    (v,) = _vips_records(smoke_run, "vips/blr-approaches-nonprivate")
    assert v["figures"] == [BLR_FIGURE]
    ev = v["evidence"]
    assert "embedded default" in ev["dataset"] and "embedded default" in v["sentence"]
    sz = ev["sizes"]
    assert (sz["N_train"], sz["d"], sz["S"], sz["iterations"], sz["seeds"]) == (
        5729, 9, 23, BUDGETS["smoke"]["blr_iterations"], BUDGETS["smoke"]["blr_seeds"])
    assert set(ev["test_auc"]) == {"0", "1", "6", "12"}
    assert all(len(s["per_seed"]) == sz["seeds"] for s in ev["test_auc"].values())
    # epsilon decreases in sigma, and the two-releases reading is always the larger one
    e = ev["epsilon"]
    assert e["1"]["paper"] > e["6"]["paper"] > e["12"]["paper"] > 0
    for k in ("1", "6", "12"):
        assert e[k]["two-releases"] > e[k]["paper"]
    assert e["0"]["paper"] == "inf"
    # the verdict is the kernel's, from the exact trend test's p-values
    st = trend_test(np.array([ev["test_auc"][k]["per_seed"] for k in ("0", "1", "6", "12")]).T)
    assert st["method"] == "exact"
    basis = ev["basis"]
    assert (basis["rule"], basis["level"]) == ("tests", 0.05)
    assert basis["p_holds"] == st["p_stated_direction"]
    assert basis["p_refutes"] == st["p_opposite_direction"]
    assert v["verdict"] == ("holds" if st["p_stated_direction"] <= 0.05 else "refuted"
                            if st["p_opposite_direction"] <= 0.05 else "inconclusive")


def test_vips_sbn_accuracy_records(smoke_run):
    """Fig. 7's SBN reproduction in the all-papers smoke audit: both readings, the
    accuracies per size and method, the strong-composition calibration reproducing the
    moments accountant's total, and each verdict as its test's p-values decide it."""
    from dpclaims.papers.vips.checks_blr_sbn import BUDGETS, SBN_DELTA, SBN_FIGURE
    from dpclaims.papers.vips.experiment_lda import strong_composition_total

    records = _vips_records(smoke_run, "vips/sbn-ma-beats-strong-composition")
    assert [v["reading"] for v in records] == ["no-amplification (verdict of record)",
                                               "amplified"]
    for v in records:
        assert v["figures"] == [SBN_FIGURE]
        acc = v["evidence"]["accuracy"]
        assert set(acc) == {"100", "200"}
        for per in acc.values():
            for m in ("NP", "MA", "SC", "SC-amplified"):
                assert len(per[m]["per_seed"]) == BUDGETS["smoke"]["sbn_seeds"]
                assert 0 <= per[m]["mean"] <= 1
        assert v["evidence"]["sizes"]["N_train"] == 1438
        st, basis = v["evidence"]["test"], v["evidence"]["basis"]
        assert (basis["p_holds"], basis["p_refutes"]) == (st["p_holds"], st["p_refutes"])
        assert v["verdict"] == ("holds" if st["p_holds"] <= 0.05 else "refuted"
                                if st["p_refutes"] <= 0.05 else "inconclusive")
    for s, st in records[0]["evidence"]["per_size"].items():
        assert st["S"] == int(s)
        for key in ("strong_composition", "strong_composition_amplified"):
            sc = st[key]
            eps, delta = strong_composition_total(sc["eps_step"], sc["delta_step"], st["J"],
                                                  sc["delta_slack"])
            assert eps == pytest.approx(st["epsilon_MA"], rel=1e-9)
            assert delta == pytest.approx(SBN_DELTA, rel=1e-12)


def test_vips_lda_accuracy_records(smoke_run):
    """The LDA reproduction (Fig. 4) in the all-papers smoke audit: its three claims, each
    from the exact sign test over the budget's pairs, on the synthetic corpus, with the
    strong-composition total reproduced (tests/test_vips_lda_accuracy.py ran its own
    smoke-size LDA check at seed 0 until 2026-11-28: 2.5 CPU-s beside this run's)."""
    import math

    from dpclaims.papers.vips.checks_lda import BUDGETS, FIGURE

    ids = ["vips/lda-ma-beats-strong-composition", "vips/lda-clipping-helps",
           "vips/lda-ma-beats-word-frequency"]
    records = [v for cid in ids for v in _vips_records(smoke_run, cid)]
    for v in records:
        assert v["figures"] == [FIGURE]
        ev = v["evidence"]
        st = ev["test"]
        assert st["n_pairs"] == BUDGETS["smoke"]["lda_seeds"]
        assert all(math.isfinite(x) for x in (st["mean_better"], st["mean_worse"],
                                              ev["word_frequency_perplexity"]))
        setting = ev["setting"]
        assert setting["synthetic"] and "synthetic" in v["sentence"]
        for key in ("D_train", "S", "J", "K", "V", "N_doc_length", "epsilon_MA", "delta"):
            assert key in setting
        assert setting["strong_composition"]["reproduced_total_epsilon"] == pytest.approx(
            setting["epsilon_MA"], abs=1e-6)
    for m, s in records[0]["evidence"]["final_perplexity"].items():
        assert len(s["per_seed"]) == 2 and s["mean"] > 1, m


def test_vips_selection_runs_only_its_checks_and_gives_the_whole_runs_records(smoke_run,
                                                                                tmp_path):
    """A ``--claim`` selection of VIPS's claims runs only the checks that give their
    verdicts (``run_vips_audit`` asks ``ctx.wants``), and those claims' records (every
    reading, sentence and evidence) and sections are the all-papers run's, JSON for JSON,
    with the same meta but the selection: each check draws from the seed alone, whatever
    runs beside it or is skipped. The claims selected cover every kind of seeded
    randomness in VIPS (hypothesis searches and the branch and bound, the step audits'
    trials, an accuracy reproduction with its figure) without its costliest checks (the
    LDA sensitivity search, which Algorithm 2's calibration needs too, and the LDA and
    SBN accuracy runs: 6.5, 4.1 and 5.7 of a VIPS smoke audit's 29 s) or the reported
    epsilons (the accounting paper's in the all-papers run)."""
    patterns = ["vips/log-moment-gaussian", "vips/eq2[23]-*", "vips/blr-*",
                "vips/sbn-sensitivity", "vips/empirical-audit-*"]
    # --workers 1: as in test_one_claim_at_a_time_gives_the_whole_runs_verdicts
    result = CliRunner().invoke(main, ["audit", "--paper", "vips", "--budget", "smoke",
                                       "--seed", str(SEED), "--workers", "1",
                                       *[a for p in patterns for a in ("--claim", p)],
                                       "--out", str(tmp_path / "o")])
    # exit 1: a claim is refuted (vips/log-moment-gaussian under a reading of sigma)
    assert result.exit_code == 1, result.output
    alone, both = load_results(tmp_path / "o"), load_results(smoke_run[0])
    chosen = ["vips/log-moment-gaussian", "vips/eq22-sensitivity",
              "vips/eq23-minibatch-sensitivity", "vips/blr-sensitivity",
              "vips/sbn-sensitivity", "vips/empirical-audit-lda", "vips/empirical-audit-blr",
              "vips/blr-approaches-nonprivate"]
    assert [c["id"] for c in alone["claims"]] == chosen
    theirs = {c["id"]: c for c in both["claims"]}
    for c in alone["claims"]:
        assert json.dumps(c) == json.dumps(theirs[c["id"]]), c["id"]
    info = json.loads((tmp_path / "o" / "run_info.json").read_text())
    assert set(info["seconds per check"]) == {  # the others not run
        "log moment", "BLR sensitivities", "SBN sensitivity", "audits", "BLR accuracy"}
    sections = {s["title"]: s for s in both["sections"]}
    assert [s["title"] for s in alone["sections"]] == ["BLR: test AUC against sigma (Fig. 6)"]
    for s in alone["sections"]:
        title = f"vips: {s['title']}"
        assert json.dumps({**s, "title": title}) == json.dumps(sections[title]), title
    assert sorted(p.name for p in (tmp_path / "o").glob("*.png")) == ["blr_auc.png"]
    assert alone["meta"].pop("selected claims") == {"patterns": patterns, "claims": chosen}
    assert alone["meta"] == both["meta"]["vips"]


def test_dpvim_selection_runs_only_its_checks(smoke_run, tmp_path):
    """A ``--claim`` selection of DPVIm's coverage claim runs the coverage runs and their
    check only (not the theory, the OU or Fig. 5 runs, the audit, the reported epsilons;
    ``run_dpvim_audit`` asks ``ctx.wants``), gives the all-papers run's record JSON for
    JSON, and does not read Adult: a data folder whose Adult is broken (an empty
    ``adult/``, which the Fig. 5 runs refuse) is no error."""
    data = tmp_path / "data"
    (data / "adult").mkdir(parents=True)
    result = CliRunner().invoke(main, ["audit", "--paper", "dpvim", "--budget", "smoke",
                                       "--seed", str(SEED), "--workers", "1",
                                       "--claim", "noise-aware-coverage",
                                       "--data-dir", str(data), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output  # a reading of the coverage is refuted
    alone, both = load_results(tmp_path / "o"), load_results(smoke_run[0])
    theirs = {c["id"]: c for c in both["claims"]}
    assert [c["id"] for c in alone["claims"]] == ["dpvim/noise-aware-coverage"]
    assert json.dumps(alone["claims"][0]) == json.dumps(theirs["dpvim/noise-aware-coverage"])
    info = json.loads((tmp_path / "o" / "run_info.json").read_text())
    assert set(info["seconds per check"]) == {"coverage runs", "coverage"}
    (section,) = alone["sections"]
    assert section["figures"] == ["dpvim_traces.png", "dpvim_coverage.png"]
    assert "Fig. 5" not in section["text"]
    # the same folder with Fig. 5 selected: Adult is read, and refused
    bad = CliRunner().invoke(main, ["audit", "--paper", "dpvim", "--budget", "smoke",
                                    "--claim", "adult-aligned-natural-best",
                                    "--data-dir", str(data), "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2, bad.output
