"""`dpclaims audit --paper all` (smoke): one report with every paper's claims, no duplicates."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from dpclaims.claims.registry import registered_papers
from dpclaims.cli import _plan, main
from dpclaims.reports.render import caption as caption_of
from dpclaims.reports.results import reading_records

RECORDED = Path(__file__).parent / "data" / "smoke_verdicts_seed2.json"


def test_all_papers_in_one_report(tmp_path):
    result = CliRunner().invoke(main, ["audit", "--paper", "all", "--budget", "smoke",
                                       "--seed", "2", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output  # claims are refuted: a finding
    tmp_path = tmp_path / "o"
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
