"""Tests of the DPVI gradient-canary mechanism (``dpclaims.algorithms.dpvi.step``) and the DPVIm
empirical-audit check (``dpclaims.papers.dpvim.checks_audit``).

Every random procedure is seeded, so each test is deterministic. The audit tests state
their false-alarm rate: a correct mechanism's certificate exceeds its (exact) claim with
probability at most alpha = 0.05 under a fresh seed.
"""

from __future__ import annotations

import math
from pathlib import Path

import dp_accounting
import numpy as np
import pytest

from dpclaims.algorithms.dpvi.dpvi import DPVIConfig, LogisticRegression, run_dpvi
from dpclaims.algorithms.dpvi.step import DPVIGradientCanary
from dpclaims.analysis.accounting import Sampling, account
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import add_one, validate_mechanism
from dpclaims.papers.dpvim.checks_audit import CLAIM, check_empirical_audit

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "dpvim.txt"


def _ordinary(n, d, seed=0):
    """n logistic-regression records with no feature along e_1."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    x[:, 0] = 0.0
    return x, (rng.random(n) < 0.5).astype(float), np.zeros(n)


def _with_canaries(data, signs):
    x, y, c = data
    k = len(signs)
    return (np.vstack([x, np.zeros((k, x.shape[1]))]), np.concatenate([y, np.zeros(k)]),
            np.concatenate([c, np.asarray(signs, float)]))


# --------------------------------------------------------------------------- protocol


@pytest.mark.parametrize("kw", [
    {"sampling": "full"},
    {"sampling": "full", "variant": "vanilla", "relation": "replace-one"},
    {"sampling": "wor", "batch_size": 4, "claim_reading": "paper-poisson-add-remove",
     "relation": "replace-one"},
    {"sampling": "poisson", "batch_size": 4, "claim_reading": "paper-poisson-add-remove"},
    {"sampling": "wor", "batch_size": 4, "claim_reading": "wor-replace-one-rdp",
     "relation": "replace-one"},
])
def test_mechanism_passes_validation_with_shape_and_reproducible_releases(kw):
    m = DPVIGradientCanary(8, steps=3, dim=3, **kw)
    assert validate_mechanism(m).source is m
    assert m.claim.delta == pytest.approx(1 / 8)           # App. F: delta = 1/N
    data = _with_canaries(_ordinary(8, 3), [1.0])[:3]
    data = tuple(a[:8] for a in data)                      # N = 8 records, one canary
    a = m.release(data, np.random.default_rng(5), 7)
    assert a.shape == (7, 3 * 6)
    np.testing.assert_array_equal(a, m.release(data, np.random.default_rng(5), 7))
    assert not np.array_equal(a, m.release(data, np.random.default_rng(6), 7))
    assert m.score(a).shape == (7,)


def test_claims_are_the_stated_accountings():
    m = DPVIGradientCanary(10, steps=2, noise_multiplier=1.0)
    assert m.claim.epsilon == pytest.approx(dp_accounting.get_epsilon_gaussian(1 / math.sqrt(2),
                                                                               0.1))
    assert m.claim.relation == "add-remove"
    ro = DPVIGradientCanary(10, steps=2, relation="replace-one")
    assert ro.claim.epsilon == pytest.approx(dp_accounting.get_epsilon_gaussian(
        0.5 / math.sqrt(2), 0.1))                          # sensitivity 2C under replace-one
    p = DPVIGradientCanary(20, steps=3, sampling="wor", batch_size=10,
                           claim_reading="paper-poisson-add-remove", relation="replace-one")
    s = Sampling("poisson", dataset_size=20, batch_size=10, steps=3)
    assert p.claim.epsilon == account(1.0, s, 0.05, "add-remove").row("dp_accounting-pld").epsilon
    assert p.claim.relation == "replace-one" and "paper-poisson-add-remove" in p.name
    with pytest.raises(ValueError, match="full-batch-exact"):
        DPVIGradientCanary(10, sampling="wor", batch_size=5)
    with pytest.raises(ValueError, match="wor-replace-one-rdp"):
        DPVIGradientCanary(10, sampling="wor", batch_size=5, claim_reading="wor-replace-one-rdp")


def test_release_matches_reference_run_dpvi_without_canaries():
    """Same seed, same draws: the mechanism's trace is run_dpvi's (SGD, fixed init)."""
    x, y, c = _ordinary(12, 2, seed=3)
    m = DPVIGradientCanary(12, steps=4, sampling="wor", batch_size=5, lr=0.05,
                           claim_reading="paper-poisson-add-remove", clip=0.7,
                           noise_multiplier=0.8, prior_std=1.0)
    cfg = DPVIConfig(variant="aligned", clip=0.7, noise_multiplier=0.8, steps=4, batch_size=5,
                     sampling="wor", optimiser="sgd", lr=0.05)
    ref = run_dpvi(LogisticRegression(1.0), x, y, cfg, n_runs=6, seed=9,
                   init=np.tile(m.init, (6, 1)))
    got = m.release((x, y, c), np.random.default_rng(9), 6)
    np.testing.assert_allclose(got, np.moveaxis(ref.trace[1:], 0, 1).reshape(6, -1),
                               rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- the canary


@pytest.mark.parametrize("variant", ["aligned", "vanilla"])
def test_score_recovers_canary_statistic_on_a_noiseless_run(variant):
    """All records are canaries (+u, +u, -u, +u): every step releases 2 C u, so g~_t = 2 C u
    and the score is sum_t <u, 2 C u> / C = 2 T, by hand."""
    u = np.array([0.6, 0.8])
    c = np.array([1.0, 1.0, -1.0, 1.0])
    data = (np.zeros((4, 2)), np.zeros(4), c)
    for sampling, b, want in (("full", None, 2.0), ("wor", 4, 2.0)):
        reading = "full-batch-exact" if sampling == "full" else "paper-poisson-add-remove"
        m = DPVIGradientCanary(4, steps=5, clip=0.5, noise_multiplier=1e-9, sampling=sampling,
                               batch_size=b, variant=variant, canary_direction=(3.0, 4.0),
                               claim_reading=reading)
        out = m.release(data, np.random.default_rng(0), 3)
        g = m.released_gradients(out)
        np.testing.assert_allclose(g, np.broadcast_to(want * 0.5 * u, g.shape), atol=1e-8)
        np.testing.assert_allclose(m.score(out), 2.0 * 5, atol=1e-8)


@pytest.mark.parametrize("variant", ["aligned", "vanilla"])
@pytest.mark.parametrize("n_canaries", [1, 2])
def test_canary_contributes_exactly_c_u(variant, n_canaries):
    """Full batch, same seed, one step: adding k canaries shifts g~_1 by exactly k C u (the
    batch is every record, so the draws eta, psi are the same with and without them)."""
    d0 = _ordinary(9, 3, seed=1)                       # N - 1 and N or N + 1 records
    d1 = _with_canaries(d0, [1.0] * n_canaries)
    m = DPVIGradientCanary(10, steps=1, dim=3, clip=0.8, variant=variant,
                           canary_direction=(1.0, 0.0, 0.0))
    a, b = (m.release(d, np.random.default_rng(4), 50) for d in (d0, d1))
    diff = m.released_gradients(b) - m.released_gradients(a)
    np.testing.assert_allclose(diff, np.broadcast_to([0.8 * n_canaries, 0, 0], diff.shape),
                               atol=1e-10)
    if variant == "vanilla":                           # the canary's joint gradient is (C u, 0)
        np.testing.assert_allclose(b[:, 3:], a[:, 3:], atol=1e-12)


def test_replacing_plus_by_minus_canary_under_wor_shifts_by_two_c_u_when_sampled():
    """Replace-one under WOR with the same seed: the batches are the same, so g~ differs
    by 2 C u exactly when record 0 is in the batch (probability B / N) and 0 otherwise."""
    m = DPVIGradientCanary(10, steps=1, sampling="wor", batch_size=5, relation="replace-one",
                           claim_reading="paper-poisson-add-remove")
    x, y, c = _ordinary(10, 2)
    c_plus, c_minus = c.copy(), c.copy()
    c_plus[0], c_minus[0] = 1.0, -1.0
    a = m.released_gradients(m.release((x, y, c_minus), np.random.default_rng(2), 4000))
    b = m.released_gradients(m.release((x, y, c_plus), np.random.default_rng(2), 4000))
    shift = (b - a)[:, 0, 0]
    assert np.all(np.isclose(shift, 0.0, atol=1e-10) | np.isclose(shift, 2.0, atol=1e-10))
    np.testing.assert_allclose((b - a)[:, 0, 1], 0.0, atol=1e-10)
    # inclusion frequency: Binomial(4000, 1/2); |z| < 5 fails with probability < 1e-6
    assert abs(np.mean(shift > 1) - 0.5) < 5 * math.sqrt(0.25 / 4000)


# --------------------------------------------------------------------------- audits


def _full_batch_pair(m):
    return add_one(_ordinary(m.dataset_size, m.dim, seed=2), (np.zeros(m.dim), 0.0, 1.0))


def test_planted_half_noise_bug_is_refuted_and_correct_mechanism_is_not():
    """Full batch, add-remove, T = 2, sigma_DP = 1, delta = 1/N = 0.1: claimed epsilon 2.12.
    With noise at half the claimed multiplier the true epsilon is 6.81, and 20,000
    trials certify above the claim. The correct mechanism's certificate stays below its exact
    claim except with probability alpha = 0.05 (the false-alarm rate); the seed is fixed."""
    kw = {"steps": 2, "noise_multiplier": 1.0}
    good = DPVIGradientCanary(10, **kw)
    bad = DPVIGradientCanary(10, actual_noise_multiplier=0.5, **kw)
    pair = _full_batch_pair(good)
    r_good = audit(good, pair, 20_000, 0.05, score=good.score, seed=3)
    r_bad = audit(bad, pair, 20_000, 0.05, score=bad.score, seed=3)
    assert r_bad.claim.epsilon == r_good.claim.epsilon
    assert r_bad.refutes_claim and r_bad.epsilon_lower_bound > r_good.claim.epsilon
    assert not r_good.refutes_claim
    assert r_good.epsilon_lower_bound > 0.7 * r_good.claim.epsilon   # and the audit is tight


def test_check_empirical_audit_small_budget():
    vs = check_empirical_audit(20_000, 0)
    assert [v.verdict for v in vs] == ["inconclusive", "refuted"]
    for v in vs:
        ev = v.evidence
        for key in ("N", "B", "T", "sigma_DP", "C", "delta", "relation", "pair",
                    "trials_per_dataset", "certificate", "claimed_epsilon", "seed"):
            assert key in ev, key
        assert ev["delta"] == 1 / ev["N"] and v.seed == 0
        # the Clopper-Pearson certificate is the kernel's lower bound; no upper bound
        basis = ev["basis"]
        assert basis["lower"]["value"] == ev["certificate"] and basis["upper"] is None
        assert basis["lower"]["confidence"] == pytest.approx(0.95)
    # an audit can refute privacy, never prove it: only the refutation is a certificate
    assert not vs[0].certificate and vs[1].certificate
    assert "An audit can refute privacy but not prove it" in vs[0].sentence
    assert vs[1].sentence.startswith("Refuted: Clopper-Pearson audit")
    a, b = vs[0].evidence, vs[1].evidence
    assert 0.7 * a["claimed_epsilon"] < a["certificate"] <= a["claimed_epsilon"]
    assert a["claimed_epsilon"] == a["exact_epsilon"]
    assert b["certificate"] > b["claimed_epsilon"]
    assert b["epsilon_this_pair"] <= b["epsilon_wor_replace_one_upper_bound"]
    assert b["certificate"] <= b["epsilon_this_pair"] <= b["epsilon_wor_replace_one_upper_bound"]


@pytest.mark.skipif(not PAPER.is_file(), reason="../shared/papers/dpvim.txt not present")
def test_statement_is_quoted_exactly():
    assert CLAIM.statement in PAPER.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kw, name", [
    ({"clip": 0.0}, "clip"), ({"clip": -1.0}, "clip"),
    ({"sampling": "wor", "batch_size": 11, "claim_reading": "paper-poisson-add-remove"},
     "batch_size = 11"),
    ({"sampling": "poisson", "batch_size": 10.5, "claim_reading": "paper-poisson-add-remove"},
     "batch_size = 10.5"),
    ({"steps": 0}, "steps"), ({"noise_multiplier": 0.0}, "noise_multiplier"),
    ({"noise_multiplier": -2.0}, "noise_multiplier"), ({"sampling": "shuffle"}, "sampling"),
    ({"variant": "natural"}, "variant"), ({"canary_direction": (0.0, 0.0)}, "canary_direction"),
    ({"relation": "swap"}, "relation"), ({"lr": 0.0}, "lr"),
    ({"actual_noise_multiplier": 0.0}, "actual_noise_multiplier"),
])
def test_bad_parameters_raise_value_error_naming_the_value(kw, name):
    with pytest.raises(ValueError, match=name):
        DPVIGradientCanary(10, **kw)


def test_bad_data_raises_value_error():
    m = DPVIGradientCanary(5, sampling="wor", batch_size=5,
                           claim_reading="paper-poisson-add-remove")
    x, y, c = _ordinary(5, 2)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="batch_size = 5 exceeds"):
        m.release((x[:4], y[:4], c[:4]), rng, 2)
    with pytest.raises(ValueError, match="is_canary"):
        m.release((x, y, c + 2), rng, 2)
    with pytest.raises(ValueError, match="tuple"):
        m.release(x, rng, 2)
    with pytest.raises(ValueError, match="records"):
        DPVIGradientCanary(5).release(_ordinary(8, 2), rng, 2)
