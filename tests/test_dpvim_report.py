"""DPVIm report: quotes, the analytic checks' verdicts, that they can fail, the runner."""

from pathlib import Path

import numpy as np
import pytest

from dpclaims.claims.checks import dpvim, dpvim_experiments
from dpclaims.experiments import dpvim as dpvim_runs


def test_every_dpvim_claim_is_quoted_exactly():
    paper = Path(__file__).resolve().parents[2] / "shared" / "papers" / "dpvim.txt"
    if not paper.is_file():
        pytest.skip(f"paper text not found at {paper}")
    text = " ".join(paper.read_text().split())
    for c in list(dpvim.CLAIMS.values()) + list(dpvim_experiments.CLAIMS.values()):
        assert " ".join(c.statement.split()) in text, c.id


def test_identity_check_holds_and_a_wrong_identity_is_refuted():
    assert [v.verdict for v in dpvim.check_aligned_identity(30, seed=1)] == ["holds", "holds"]
    # the same search against eq. (11) without T'(s): must find a counterexample
    from dpclaims.property_tests.sensitivity import check_sensitivity

    def wrong(fam, xi, eta, g_m):
        return eta * g_m + fam.grad_entropy(xi)
    res = check_sensitivity(dpvim._elbo_examples(False),
                            lambda ex: dpvim.identity_discrepancy(ex, wrong),
                            dpvim.FD_TOLERANCE, max_examples=60, seed=1)
    assert res.violated


def test_analytic_verdicts():
    v = {(x.claim.id, x.reading): x.verdict for x in
         dpvim.check_eq12() + dpvim.check_e1() + dpvim.check_alg2_sensitivity(60, seed=0)
         + dpvim.check_corollary31(30, seed=0) + dpvim.check_fisher_blocks(50_000)}
    assert v[("dpvim/eq12", "the probability in eq. (12): Pr[|eta_j| < 2] for eta_j ~ N(0, 1)")] \
        == "refuted"
    assert v[("dpvim/alg2-release-sensitivity", "as-printed")] == "refuted"
    assert v[("dpvim/alg2-release-sensitivity", "natural")] == "holds"
    assert v[("dpvim/e1-noise-combination", "E.1's second line as an identity in distribution")] \
        == "refuted"
    assert v[("dpvim/fisher-blocks", "gradients w.r.t. the variational parameters xi = "
              "(m_q, s_q)")] == "holds"
    assert all(x == "holds" for (cid, _), x in v.items() if cid.endswith("no-extra-cost"))


def test_thm31_counterexample_is_inside_the_theorem_conditions():
    (v,) = dpvim.check_thm31(n_draws=8_000, seed=0)
    assert v.verdict == "refuted"
    bad = [r for r in v.evidence["rows"]
           if min(r["z_vanilla_minus_aligned"]) < -v.evidence["z_critical"]]
    assert bad and all(r["T_prime"] <= 1 for r in bad)      # softplus: T' <= 1
    # without clipping the theorem's inequality holds in every setting
    assert all(min(r["z_vanilla_minus_aligned"]) > 0 for r in v.evidence["rows"]
               if r["clip"] == 100.0)


def test_ou_scaling_sgd_affine_in_sigma_squared_adam_not():
    runs = dpvim_runs.run_scaling({"ou_runs": 120, "ou_steps": 1500}, seed=0)
    got = {x.reading.split()[0]: x for x in dpvim_experiments.check_ou_scaling(runs, 0)}
    sgd, adam = got["SGD"], got["Adam"]
    assert 1.7 < sgd.evidence["blocks"]["m"]["log_log_slope_top"] < 2.6
    assert 0.6 < adam.evidence["blocks"]["m"]["log_log_slope_top"] < 1.4


def test_bad_budget_and_missing_data(tmp_path):
    from dpclaims.claims import InputError

    with pytest.raises(InputError, match="budget"):
        dpvim.run_dpvim_audit("huge", 0)
    with pytest.raises((FileNotFoundError, ValueError)):
        dpvim.load_dpvim_adult(tmp_path / "nowhere")


def test_adult_loader_matches_the_papers_count():
    data_dir = Path(__file__).resolve().parents[2] / "shared" / "data"
    if not (data_dir / "adult").is_dir():
        pytest.skip("shared Adult data not present")
    d, note = dpvim.load_dpvim_adult(data_dir)
    assert d.n_train == 30_162, note
    assert set(np.unique(d.y_train)) == {0.0, 1.0}


def test_smoke_runner_writes_every_claim(tmp_path):
    verdicts, sections, meta, timings = dpvim.run_dpvim_audit("smoke", 0, out_dir=tmp_path)
    ids = {v.claim.id for v in verdicts}
    for cid in ("dpvim/aligned-identity", "dpvim/corollary31-no-extra-cost",
                "dpvim/thm31-variance-reduction", "dpvim/eq12", "dpvim/fisher-blocks",
                "dpvim/ou-noise-scaling", "dpvim/iterate-averaging-gain",
                "dpvim/noise-aware-coverage", "dpvim/adult-aligned-natural-best",
                "dpvim/trace-std-matches-spread", "dpvim/empirical-audit"):
        assert cid in ids
    assert any(v.claim.id.startswith("dpvim/eps-") for v in verdicts)
    figs = sections[0]["figures"]
    # figure names are relative to the report folder, so results.json does not depend on it
    assert figs and all(not Path(f).is_absolute() and (tmp_path / f).is_file() for f in figs)
