"""`dpclaims audit --paper all --budget quick --seed 0`: every claim's and reading's verdict
and every headline as recorded (issue 15: the moves of catalogues, checks and runners
change no verdict). Several minutes on 2 cores, so it is not part of `make test`:
`make test-quick` runs it, and `.ci/run` calls that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpclaims.cli import main
from dpclaims.reports.results import reading_records

RECORDED = Path(__file__).parent / "data" / "quick_verdicts_seed0.json"


@pytest.mark.quick_verdicts
def test_quick_verdicts_as_recorded(tmp_path):
    result = CliRunner().invoke(main, ["audit", "--paper", "all", "--budget", "quick",
                                       "--seed", "0", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output  # claims are refuted: a finding
    tmp_path = tmp_path / "o"
    data = json.loads((tmp_path / "results.json").read_text())
    recorded = json.loads(RECORDED.read_text())
    got = [[v["claim_id"], v["reading"], v["verdict"]] for v in reading_records(data)]
    assert got == recorded["verdicts"]
    assert [[c["id"], c["verdict"]] for c in data["claims"]] == recorded["headlines"]
