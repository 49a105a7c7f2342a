"""One-run audits of DP-SEP and VIPS whole runs (issue 42): the canaries' contribution is
exact (differencing two runs on the same random stream), the planted bugs of
examples/algorithms.py are refuted in one run and the correct configurations are not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpclaims.algorithms.sep.whole_run import DPSEPPass
from dpclaims.algorithms.vips.whole_run import VIPSRun
from dpclaims.audits.one_run import audit_one_run, offers_gradient_canaries
from dpclaims.execution.user_code import load_object

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "algorithms.py"


def _example(name: str):
    return load_object(f"{EXAMPLES}:{name}", "variant")()


def _signs(r: int, m: int, seed: int = 0) -> np.ndarray:
    return np.where(np.random.default_rng(seed).random((r, m)) < 0.5, 1.0, -1.0)


@pytest.mark.parametrize("reading", ["as-printed", "sep-invariant"])
def test_dpsep_site_canaries_are_exact_by_differencing(reading):
    """Two runs on the same stream (same permutations, same noise) with opposite signs: the
    residuals (updates) at canary i's coordinate differ by exactly 2 w_n C sign_i at the one
    step per epoch that processes it and by 0 at every other step (no other site has a
    component there), whatever the noise did to the state."""
    alg = DPSEPPass(n_records=9, epochs=2, dim=4, prior_scale=0.4, canary_slots=5,
                    reading=reading, noise_multiplier=1.0)
    assert alg.quiet_features == 2 and offers_gradient_canaries(alg)
    m = 4
    coords = alg.gradient_canary_coordinates(m)
    np.testing.assert_array_equal(coords, [2, 3, 4 + 7, 4 + 8])   # h_3, h_4, L_33, L_34
    s = _signs(3, m)
    plus = alg.run_gradient_canaries(alg.data, np.random.default_rng(1), s)
    minus = alg.run_gradient_canaries(alg.data, np.random.default_rng(1), -s)
    assert plus.shape == alg.run(alg.data, np.random.default_rng(1), 3).shape == (3, 18, 14)
    diff = (alg.updates(plus) - alg.updates(minus))[:, :, coords]         # (R, S, m)
    w_n = alg._weights[0]
    hit = np.abs(diff) > 1e-9
    assert (hit.reshape(3, 2, 9, m).sum(axis=2) == 1).all()       # once per epoch
    np.testing.assert_allclose(diff[hit], np.broadcast_to(2 * w_n * alg.clip * s[:, None, :],
                                                          diff.shape)[hit], rtol=1e-9)
    assert np.abs(diff[~hit]).max() < 1e-9
    # the background's sites have no component at the canary coordinates
    x = alg.data[0]
    assert x.shape == (4, 4) and (x[:, 2:] == 0).all() and (x[:, 0] == 0).all()


def test_vips_canaries_are_exact_by_differencing():
    """Same stream, opposite signs: s1~ differs by exactly sign_i / S at canary i's
    coordinate in the iterations whose batch holds it, by 0 elsewhere, and not at all in
    the other coordinates of s1 (the background's s1 does not depend on the state)."""
    alg = VIPSRun(n_records=12, batch_size=3, epochs=2, dim=5, canary_slots=3)
    m = 2
    coords = alg.gradient_canary_coordinates(m)
    np.testing.assert_array_equal(coords, [2, 3])
    s = _signs(4, m, seed=1)
    plus = alg.run_gradient_canaries(alg.data, np.random.default_rng(2), s)
    minus = alg.run_gradient_canaries(alg.data, np.random.default_rng(2), -s)
    assert plus.shape == alg.run(alg.data, np.random.default_rng(2), 4).shape == (4, 8, 20)
    diff = plus[:, :, :alg.dim] - minus[:, :, :alg.dim]                  # the s1 block
    canary = diff[:, :, coords]
    hit = canary != 0
    assert hit.any() and (~hit).any()
    np.testing.assert_allclose(canary[hit], np.broadcast_to(
        2 * alg.clip * s[:, None, :], canary.shape)[hit], rtol=1e-12)
    assert alg.clip == 1 / 6
    assert (diff[:, :, [0, 1, 4]] == 0).all()


def test_canary_input_is_checked():
    sep = DPSEPPass(n_records=9, dim=4, prior_scale=0.4, canary_slots=5)
    with pytest.raises(ValueError, match="replace-one"):
        sep.run_gradient_canaries(sep.data, np.random.default_rng(0), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="room for 5"):
        sep.gradient_canary_coordinates(6)
    with pytest.raises(ValueError, match="dim >= 4"):
        DPSEPPass(n_records=9, dim=3, canary_slots=5)
    with pytest.raises(ValueError, match="must exceed canary_slots"):
        DPSEPPass(n_records=5, dim=4, canary_slots=5)
    vips = VIPSRun(n_records=12, batch_size=3, dim=5, canary_slots=3)
    with pytest.raises(ValueError, match="signs"):
        vips.run_gradient_canaries(vips.data, np.random.default_rng(0), np.full((1, 2), np.nan))
    with pytest.raises(ValueError, match="dim"):
        VIPSRun(n_records=12, batch_size=3, dim=4, canary_slots=3)
    with pytest.raises(ValueError, match="noise_batch_size"):
        VIPSRun(noise_batch_size=0)
    assert not offers_gradient_canaries(DPSEPPass()) and not offers_gradient_canaries(VIPSRun())
    assert VIPSRun().clip is None


@pytest.mark.parametrize("correct, bug", [
    ("dpsep_one_run", "dpsep_one_run_sep_update"),
    ("vips_one_run", "vips_one_run_noise_for_n"),
])
def test_one_run_refutes_the_planted_bug_and_not_the_correct_run(correct, bug):
    """One run, 100 canaries, seed 0 (seen: DP-SEP bug 4.708 > 1.994, correct 0;
    VIPS bug 2.566 > 1.763, correct 0). A correct run is refuted with probability at most
    alpha = 0.05 (benchmarks/one_run_false_refutation.py measures it)."""
    b = audit_one_run(_example(bug), 100, seed=0)
    assert b.refutes_claim, b.to_dict()
    c = audit_one_run(_example(correct), 100, seed=0)
    assert not c.refutes_claim, c.to_dict()
    assert c.epsilon_lower_bound < b.epsilon_lower_bound


def test_one_run_claim_of_dpsep_and_vips():
    """check-variant --one-run's check (dpclaims.claims.checks.whole_run): the DP-SEP bug's
    ``<name>/one-run-audit`` is refuted; VIPS without slots is not-checkable."""
    from dpclaims.claims.checks.whole_run import check_one_run_audit

    v, a = check_one_run_audit(_example("dpsep_one_run_sep_update"), 100, 1, 0.05, 0)
    assert v.claim.id == "dpsep-one-run-sep-update-paper-noise/one-run-audit"
    assert v.verdict == "refuted" and a.refutes_claim
    v, a = check_one_run_audit(VIPSRun(), 100, 1, 0.05, 0)
    assert v.verdict == "not-checkable" and a is None
