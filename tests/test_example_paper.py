"""The fourth paper, written as a user would (examples/bs18_expfam, issue 22): it runs
through the registry's runner without any line of dpclaims naming it, and its verdicts
are the ones its checks certify. (Its install from a wheel into a fresh venv, registered
by entry point and run as ``dpclaims audit --paper bs18``: tests/test_packaging.py.)

Statistical outcomes are at a fixed seed; each certificate holds at 95 % (the
calibration's over its 6 settings and levels jointly), so a false alarm of any one
verdict has probability at most 5 % before the seed was fixed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from dpclaims.cli import main
from dpclaims.reports.results import reading_records

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bs18_expfam"

EXPECTED = {  # claim -> headline, each computed by the checks (reasons in the README)
    "bs18/beta-bernoulli-sensitivity": "holds",        # exact: 1
    "bs18/dirichlet-multinomial-sensitivity": "holds",  # exact 1 under add-remove
    "bs18/laplace-release-privacy": "holds",           # exact: epsilon = 1 / scale
    "bs18/laplace-release-audit": "inconclusive",      # an audit never proves privacy
    "bs18/multinomial-release-privacy": "refuted",     # one shared noise draw
    "bs18/noise-aware-calibrated": "inconclusive",     # an equality is never certified
    "bs18/naive-not-calibrated": "holds",              # naive coverage < 0.9, certified
}


def test_the_example_paper_runs_through_the_runner(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["audit", "--paper", "bs18_expfam:PAPER", "--budget",
                                       "smoke", "--seed", "0", "--out", str(out)])
    assert result.exit_code == 1, result.output  # the multinomial release is refuted
    data = json.loads((out / "results.json").read_text())
    assert {c["id"]: c["verdict"] for c in data["claims"]} == EXPECTED
    readings = {(v["claim_id"], v["reading_kind"], v["verdict"]) for v in reading_records(data)}
    # the suite's own readings are shown and typed, and do not decide a headline
    assert ("bs18/dirichlet-multinomial-sensitivity", "correction", "refuted") in readings
    assert ("bs18/multinomial-release-privacy", "correction", "inconclusive") in readings
    assert "bs18: Coverage" not in (out / "report.md").read_text()  # one paper: no prefix


def test_dpclaims_names_no_paper_outside_its_own_plugins():
    """The framework knows no paper by name: the fourth paper's id appears nowhere in
    dpclaims' source."""
    hits = subprocess.run(["grep", "-rIl", "bs18", str(ROOT / "src" / "dpclaims")],
                          capture_output=True, text=True)
    assert hits.stdout == ""
