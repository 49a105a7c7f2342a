"""Claims as data: every catalogued claim is checked, ids are unique, and adding a claim of
an existing kind to a paper touches one file (issue 15)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import dp_accounting

from dpclaims.claims import CLAIM_KINDS, Claim
from dpclaims.papers.accounting import catalogue as accounting_catalogue
from dpclaims.papers.dpsep import catalogue as dpsep
from dpclaims.papers.dpvim import catalogue as dpvim
from dpclaims.papers.vips import catalogue as vips

SRC = Path(__file__).resolve().parents[1] / "src"
RECORDED = Path(__file__).parent / "data" / "smoke_verdicts_seed2.json"


def catalogued_claims() -> list[Claim]:
    out = []
    for module in (dpsep, vips, dpvim):
        for value in vars(module).values():
            if isinstance(value, Claim):
                out.append(value)
            elif isinstance(value, dict):
                out += [c for c in value.values() if isinstance(c, Claim)]
    return out


def test_catalogue_ids_are_unique_and_every_claim_is_checked():
    claims = catalogued_claims()
    ids = [c.id for c in claims] + [e.id for e in accounting_catalogue()]
    assert len(claims) >= 35 and len(ids) == len(set(ids))
    assert [c.id for c in claims if c.kind not in CLAIM_KINDS] == []  # every kind declared
    checked = {cid for cid, _, _ in json.loads(RECORDED.read_text())["verdicts"]}
    # the smoke run checks every catalogued claim; the accounting catalogue is checked
    # in full by `audit --paper accounting` (smoke takes the first entry of each paper)
    assert sorted({c.id for c in claims} - checked) == []


NEW_ENTRIES = """

# --- what a contributor adds: two privacy numbers of a new setting, nothing else ---
ENTRIES = ENTRIES + tuple(
    ReportedPrivacy(
        id="vips/eps-new-" + label, paper=_VIPS, location="Sec. 9 (a test's new claim)",
        statement="We obtain epsilon = %g." % eps, reported_epsilon=eps,
        deltas=(1e-5,), delta_stated=True, noise_multipliers=(1.0,), sigma_stated=True,
        sigma_note="sigma as is", dataset_size=1000, batch_size=10, steps=(100,),
        steps_stated=True, paper_accounting="RDP (dp_accounting)", paper_sampling="poisson",
        paper_relation="add-remove", real_sampling="poisson")
    for label, eps in (("right", RIGHT), ("half", HALF)))
"""


def test_adding_a_privacy_number_touches_one_file(tmp_path):
    """Copy the package, append two entries to papers/vips/privacy_numbers.py only, and
    run the accounting check from the copy: both are checked, the right number holds and
    half of it is refuted."""
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 100)
    right = dp_accounting.rdp.RdpAccountant().compose(event).get_epsilon(1e-5)
    shutil.copytree(SRC / "dpclaims", tmp_path / "dpclaims",
                    ignore=shutil.ignore_patterns("__pycache__"))
    catalogue = tmp_path / "dpclaims" / "papers" / "vips" / "privacy_numbers.py"
    catalogue.write_text(catalogue.read_text()
                         + NEW_ENTRIES.replace("RIGHT", repr(round(float(right), 4)))
                         .replace("HALF", repr(float(right) / 2)))
    script = textwrap.dedent("""
        import json
        from dpclaims.claims.checks.privacy_numbers import check_catalogue
        from dpclaims.papers.accounting import catalogue
        new = [e for e in catalogue() if e.id.startswith("vips/eps-new-")]
        print(json.dumps({v.claim.id: v.verdict for v in check_catalogue(new)}))
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == {"vips/eps-new-right": "holds", "vips/eps-new-half": "refuted"}
