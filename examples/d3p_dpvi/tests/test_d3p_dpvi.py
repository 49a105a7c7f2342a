"""d3p 0.2.0's DPSVI through dpclaims' JAX adapter (examples/d3p_dpvi; `make test-d3p`).

The audits run ``check_variant`` at a fixed seed with :data:`N_TRIALS` runs per dataset
(about a minute in all, three compiles included); each certificate holds with
probability 0.95, so ``correct`` is falsely refuted with probability <= 0.05 at any seed
(here seed 0, fixed). The one-run audits (2,000 canaries in each of 10 runs, seed 0) have
the same false-refutation bound.
"""

import numpy as np
import pytest

pytest.importorskip("d3p")
jax = pytest.importorskip("jax")

import d3p_dpvi  # noqa: E402
from d3p_dpvi import dpvi  # noqa: E402

from dpclaims.adapters.jax import pad_dataset  # noqa: E402
from dpclaims.audits.whole_run import validate_algorithm  # noqa: E402
from dpclaims.claims.budgets import VariantBudget  # noqa: E402
from dpclaims.claims.checks.variant import check_variant  # noqa: E402
from dpclaims.claims.checks.whole_run import check_one_run_audit  # noqa: E402

#: Whole runs per dataset in the audits (2 x 16,384 runs per variant).
N_TRIALS = 16_384


def _verdicts(alg, seed=0, evidence=None):
    """{check kind: [verdict strings]} of check_variant at N_TRIALS runs per dataset;
    ``evidence`` (a dict), when given, gets each check kind's evidence list."""
    verdicts, _, _ = check_variant(alg, VariantBudget(n_trials=N_TRIALS), seed)
    out = {}
    for v in verdicts:
        kind = v.claim.id.rsplit("/", 1)[1]
        out.setdefault(kind, []).append(v.verdict)
        if evidence is not None:
            evidence.setdefault(kind, []).append(v.evidence)
    return out


def test_factories_build_with_their_claims():
    for factory in (d3p_dpvi.correct, d3p_dpvi.planted_bug, d3p_dpvi.d3p_own_claim):
        alg = factory()
        assert validate_algorithm(alg).threat_model == "full-trace"
        assert alg.sampling == d3p_dpvi.SAMPLING
    own = d3p_dpvi.d3p_own_claim()
    assert own.claim.relation == "add-remove"
    assert own.claim.epsilon == pytest.approx(2.524, abs=1e-3)   # the reading
    assert own.library_accounting == {"name": "d3p's DPSVI.get_epsilon",
                                      "epsilon": own.claim.epsilon, "delta": 1e-5,
                                      "relation": "add-remove", "assumes": "poisson"}
    assert d3p_dpvi.correct().claim.relation == "replace-one"


@pytest.fixture(scope="module")
def correct():
    """One ``correct`` for the module: its compile serves the run and the audit tests."""
    return d3p_dpvi.correct()


def test_a_run_is_reproducible_from_the_seed(correct):
    alg = correct
    a = alg.run(alg.data, np.random.default_rng(7), 3)
    b = alg.run(alg.data, np.random.default_rng(7), 3)
    c = alg.run(alg.data, np.random.default_rng(8), 3)
    assert a.shape == (3, dpvi.STEPS + 1, len(dpvi.COORDINATES))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a[0], a[1])


def test_the_canary_contributes_s_c_u_through_d3ps_clipping():
    # every record the canary with sign -1, noise 1e-6 of the usual: each step's noisy sum
    # is B * (-C) e_a = -25 e_a, up to the prior's 1/N share and float32
    padded, n_valid = pad_dataset(d3p_dpvi.adversarial_data(), dpvi.DATASET_SIZE + 1)
    fn = jax.jit(lambda d, n, k: dpvi.train(d, n, k, dp_scale=1e-6))
    out = np.asarray(fn(padded, np.int32(n_valid), jax.random.PRNGKey(0)))[None]
    sums = dpvi.noisy_sums(out)[0]
    np.testing.assert_allclose(sums[:, 0], -dpvi.BATCH_SIZE * dpvi.CLIP, rtol=1e-4)
    np.testing.assert_allclose(sums[:, 1:], 0.0, atol=0.05)


def test_batches_are_b_distinct_records_never_padding():
    keys = jax.vmap(dpvi.chacha_key)(jax.random.split(jax.random.PRNGKey(0), 2000))
    idx = np.asarray(jax.jit(jax.vmap(
        lambda k: dpvi.fixed_size_batch(k, np.int32(100), 101)))(keys))
    assert idx.shape == (2000, dpvi.BATCH_SIZE)
    assert idx.max() < 100 and idx.min() >= 0
    assert all(len(set(row)) == dpvi.BATCH_SIZE for row in idx)
    # each record is in a batch with probability 1/2: counts ~ Binomial(2000, 1/2), sd 22.4;
    # all 100 within 5 sd (false alarm < 1e-4, fixed key)
    counts = np.bincount(idx.ravel(), minlength=100)
    assert np.all(np.abs(counts - 1000) < 5 * 22.4)


@pytest.mark.slow
def test_planted_bug_is_refuted_and_correct_is_not(correct):
    bug = _verdicts(d3p_dpvi.planted_bug())
    assert bug["whole-run-audit"] == ["refuted"]
    ok = _verdicts(correct)
    assert "refuted" not in ok["whole-run-audit"]
    assert "holds" in ok["accounting"]


@pytest.mark.slow
def test_d3p_own_claim_is_refuted_on_the_dataset_the_search_finds():
    """d3p's own claim (its get_epsilon: Poisson under add/remove) for the fixed-size
    batches it draws, on its ordinary data: the audit's dataset search (pilot audits on
    runs of their own) picks a dataset whose other records are the canary with sign -1
    and the audit refutes there; the accounting of the sampling performed refutes the
    library's number on a certified lower bound (the exact pair). No dataset by hand."""
    evidence = {}
    own = _verdicts(d3p_dpvi.d3p_own_claim(), evidence=evidence)
    assert own["whole-run-audit"] == ["refuted"]
    [audit] = evidence["whole-run-audit"]
    assert audit["dataset_search"]["selected"].startswith("aligned against"), audit[
        "dataset_search"]
    assert own["library-accounting"] == ["refuted"]


def test_slot_canaries_add_exactly_signs_c_e_j_through_d3ps_clipping(correct):
    """The same keys with and without the one-run canaries: d3p's noise and batches are the
    same draws, the data's part of the run does not see the slots, so the difference of the
    noisy sums is signs[r, i] * C on coordinate 5 + i in the steps canary i joins and 0 on
    the others, up to float32 rounding (the sums are read off float32 parameters: 4 ulps of
    the largest, times the factor (B + t) / (step size (N + t)) of :func:`dpvi.noisy_sums`),
    and exactly 0 on the five coordinates of the data's parameters."""
    signs = np.random.default_rng(0).choice([-1.0, 0.0, 1.0], size=(10, 300))
    raw = correct.run_gradient_canaries(correct.data, np.random.default_rng(4), signs)
    without = correct.run_gradient_canaries(correct.data, np.random.default_rng(4),
                                            np.zeros_like(signs))
    diff = dpvi.noisy_sums(raw) - dpvi.noisy_sums(without)
    t = dpvi.CANARY_SLOTS
    assert diff.shape == (10, dpvi.STEPS, len(dpvi.COORDINATES) + t)
    np.testing.assert_array_equal(diff[:, :, :5], 0.0)
    ulp = np.spacing(np.float32(max(np.abs(raw).max(), np.abs(without).max())))
    tol = 4 * float(ulp) * (dpvi.BATCH_SIZE + t) / (dpvi.STEP_SIZE * (dpvi.DATASET_SIZE + t))
    assert tol < 1e-4
    np.testing.assert_allclose(diff[:, :, 5 + 300:], 0.0, atol=tol)
    d = diff[:, :, 5:5 + 300]
    want = np.broadcast_to(dpvi.CLIP * signs[:, None, :], d.shape)
    joined = np.abs(d) > dpvi.CLIP / 2
    np.testing.assert_allclose(d[joined], want[joined], rtol=0, atol=tol)
    np.testing.assert_allclose(d[~joined], 0.0, atol=tol)
    assert not joined[want == 0].any()
    # each canary joins each step with probability B / N = 1/2: of the n (about 8,000)
    # cells with a sign, Binomial(n, 1/2) joined; within 5 sd (false alarm < 1e-6)
    n = int((want != 0).sum())
    assert abs(joined.sum() - n / 2) < 5 * np.sqrt(n / 4), (joined.sum(), n)


def test_one_run_audit_of_ten_runs_refutes_planted_bug_and_not_correct(correct):
    """Issue 42's criterion: 2,000 canaries in each of 10 runs, seed 0 (certified 3.97
    against the claim 3.75; refuted at each of seeds 0-9, and ``correct`` at most 1.16:
    docs/benchmarks.md)."""
    bug, audit = check_one_run_audit(d3p_dpvi.planted_bug(), 2000, 10, 0.05, 0)
    assert bug.verdict == "refuted", audit.epsilon_lower_bound
    ok, audit = check_one_run_audit(correct, 2000, 10, 0.05, 0)
    assert ok.verdict != "refuted", audit.epsilon_lower_bound
    assert audit.epsilon_lower_bound < correct.claim.epsilon
