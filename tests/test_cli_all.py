"""`dpclaims audit --paper all` (smoke): one report with every paper's claims, no duplicates."""

from __future__ import annotations

import json
from collections import Counter

from click.testing import CliRunner

from dpclaims.cli import main


def test_all_papers_in_one_report(tmp_path):
    result = CliRunner().invoke(main, ["audit", "--paper", "all", "--budget", "smoke",
                                       "--seed", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "results.json").read_text())
    ids = [(v["claim_id"], v["reading"]) for v in data["verdicts"]]
    assert not [k for k, c in Counter(ids).items() if c > 1]  # each verdict once
    prefixes = {cid.split("/")[0] for cid, _ in ids}
    assert prefixes >= {"dpsep", "vips", "dpvim"}
    assert set(data["meta"]) == {"dpsep", "vips", "dpvim", "accounting"}
    assert all(s["title"].split(":")[0] in data["meta"] for s in data["sections"])
