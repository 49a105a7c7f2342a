"""Tests of dpclaims.property_tests: the sensitivity checker finds planted violations,
passes correct bounds, and reproduces DP-SEP Prop. 1's verdicts under both readings.

Within one process everything is deterministic: hypothesis runs with ``database=None`` and
a seeded ``random.Random`` inside :func:`check_sensitivity`. Across processes the search
also depends on the literal constants hypothesis harvests from *local* modules in
``sys.modules`` (hypothesis >= 6.13x), so assertions about how close the search gets to a
tight bound use margins that held over 20-40 seeds, not the value of one run.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import strategies as st

from dpclaims.algorithms.sep.likelihoods import LinearGaussian, Probit
from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.algorithms.sep.strategies import DPSEPStepExample, dpsep_step_examples
from dpclaims.analysis.gaussian import flatten_natural, natural_dim
from dpclaims.property_tests.sensitivity import check_sensitivity
from dpclaims.property_tests.strategies import (
    gaussian_natural_params,
    records,
    replace_one_pairs,
)

UNIT_PAIRS = st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
LIKELIHOODS = [(Probit(), "classification"), (LinearGaussian(1.0), "regression")]
# DP-SEP examples: N <= 1e5, gamma >= 0.01, ||theta_new|| <= (N + 2) C. The checker forgives
# 64 eps (||F(D)|| + ||F(D')||) / Delta <= 64 eps N (N + 2) / gamma ~ 0.0142 of rounding.
ROUNDING_TOLERANCE = 64 * np.finfo(float).eps * 1e5 * (1e5 + 2) / 0.01


def sum_of_features_distance(example):
    x, _, x2, _, _ = example
    return float(np.linalg.norm(x.sum(axis=0) - x2.sum(axis=0)))


# --------------------------------------------------------------------------- planted bugs


def test_finds_planted_violation_on_scalar_records():
    # True sensitivity of 2|x - x'| on [0, 1] is 2; the (false) claim is 1.
    res = check_sensitivity(UNIT_PAIRS, lambda e: 2 * abs(e[0] - e[1]), 1.0,
                            max_examples=200, seed=0)
    assert res.violated
    assert res.counterexample is not None
    assert res.counterexample_ratio > 1.0
    assert res.counterexample_ratio == pytest.approx(2 * abs(res.counterexample[0]
                                                             - res.counterexample[1]))
    assert res.max_ratio >= res.counterexample_ratio
    assert res.max_ratio <= 2.0
    assert res.n_examples >= 1
    assert res.claimed == 1.0


def test_finds_planted_violation_on_replace_one_datasets_and_shrinks_it():
    # F(D) = sum of the feature rows, ||x|| <= 1: true replace-one sensitivity 2, claim 1.
    strategy = replace_one_pairs(records(2, "regression", max_feature_norm=1.0), 1, 8)
    res = check_sensitivity(strategy, sum_of_features_distance, 1.0, max_examples=300, seed=0)
    assert res.violated
    assert res.counterexample_ratio > 1.0
    x, y, x2, y2, index = res.counterexample
    # shrunk to something a person can read: one record, zero targets, index 0
    assert x.shape == (1, 2) and index == 0
    np.testing.assert_array_equal(y, 0.0)
    np.testing.assert_array_equal(y2, 0.0)
    assert sum_of_features_distance(res.counterexample) == pytest.approx(
        res.counterexample_ratio)
    # the report is JSON-serialisable and carries the counterexample
    d = json.loads(json.dumps(res.to_dict()))
    assert d["violated"] is True
    assert d["counterexample"][0] == x.round(12).tolist()


# --------------------------------------------------------------------------- correct bounds


def test_passes_correct_tight_bound_on_scalar_records():
    res = check_sensitivity(UNIT_PAIRS, lambda e: abs(e[0] - e[1]), 1.0,
                            max_examples=200, seed=0)
    assert not res.violated
    assert res.counterexample is None and res.counterexample_ratio is None
    assert res.max_ratio <= 1.0
    assert res.max_ratio > 0.95  # tight: (0, 1) attains it; >= 0.989 over seeds 0-19
    assert res.n_examples == 200


def test_passes_correct_tight_bound_on_replace_one_datasets():
    strategy = replace_one_pairs(records(2, "regression", max_feature_norm=1.0), 1, 8)
    res = check_sensitivity(strategy, sum_of_features_distance, 2.0, max_examples=300, seed=1)
    assert not res.violated
    assert res.max_ratio <= 1.0 + 1e-12
    assert res.max_ratio > 0.75  # attained at x = -x', ||x|| = 1; >= 0.83 over 40 seeds
    assert sum_of_features_distance(
        (np.array([[0.6, 0.8]]), np.zeros(1), np.array([[-0.6, -0.8]]), np.zeros(1), 0)
    ) == pytest.approx(2.0)
    assert res.worst_example is not None


def test_loose_bound_is_reported_as_loose():
    res = check_sensitivity(UNIT_PAIRS, lambda e: abs(e[0] - e[1]), 10.0,
                            max_examples=100, seed=0)
    assert not res.violated
    assert res.max_ratio <= 0.1


# --------------------------------------------------------------------------- DP-SEP Prop. 1


def normalised_prop1(strategy_reading, lik, task, seed, max_examples=200):
    """Prop. 1 as the reports check it: distance / (2 gamma C / N) against claim 1."""
    return check_sensitivity(
        dpsep_step_examples(task, strategy_reading),
        lambda ex: ex.distance(lik) / ex.params.claimed_sensitivity(ex.n_records),
        1.0,
        max_examples=max_examples,
        seed=seed,
        magnitude=lambda ex: ex.magnitude(lik) / ex.params.claimed_sensitivity(ex.n_records),
    )


@pytest.mark.parametrize(("lik", "task"), LIKELIHOODS, ids=["probit", "linear-gaussian"])
def test_prop1_holds_under_as_printed_reading(lik, task):
    res = normalised_prop1("as-printed", lik, task, seed=0)
    assert not res.violated
    assert res.counterexample is None
    assert res.max_ratio <= 1.0 + ROUNDING_TOLERANCE
    # Clipping makes 2 gamma C / N nearly attainable (test below); over seeds 0-27 the
    # search reached 0.71-1.0 of it in 200 examples. Half is the non-vacuity check.
    assert res.max_ratio > 0.5
    assert res.n_examples == 200


def near_tight_example(reading):
    """Hand-made pair: x = 0.1, y = +-10 (s^2 = 1), C = 0.5. The sites are (+-1, 0.01),
    both clipped to C, nearly antipodal: ||f_n - f_n'|| = 2C / sqrt(1 + 1e-4)."""
    params = DPSEPParams(clipping_norm=0.5, damping=0.7, reading=reading)
    x = np.array([[0.1]])
    pair = (x, np.array([10.0]), x.copy(), np.array([-10.0]), 0)
    theta_0 = flatten_natural(np.zeros(1), np.eye(1) / 4.0)
    return DPSEPStepExample(params, 50, np.zeros(2), theta_0, pair)


@pytest.mark.parametrize(("reading", "ratio"), [("as-printed", 1.0),
                                                 ("sep-invariant", 50.0)])
def test_prop1_bound_is_nearly_attained_by_hand_made_pair(reading, ratio):
    ex = near_tight_example(reading)
    lik = LinearGaussian(1.0)
    got = ex.distance(lik) / ex.params.claimed_sensitivity(ex.n_records)
    assert got == pytest.approx(ratio / np.sqrt(1 + 1e-4), rel=1e-9)


@pytest.mark.parametrize(("lik", "task"), LIKELIHOODS, ids=["probit", "linear-gaussian"])
def test_prop1_is_refuted_under_sep_invariant_reading(lik, task):
    res = normalised_prop1("sep-invariant", lik, task, seed=0)
    assert res.violated
    cex = res.counterexample
    assert isinstance(cex, DPSEPStepExample)
    assert cex.params.reading == "sep-invariant"
    assert res.counterexample_ratio > 1.0
    # The true sensitivity under this reading is 2 gamma C = N x the claim.
    assert res.counterexample_ratio <= cex.n_records * (1 + 1e-9)
    assert cex.distance(lik) <= cex.params.true_sensitivity_bound(cex.n_records) * (1 + 1e-9)
    assert cex.distance(lik) > cex.params.claimed_sensitivity(cex.n_records)
    assert res.max_ratio > 1.0


def test_same_seed_same_result():
    a = normalised_prop1("sep-invariant", Probit(), "classification", seed=3, max_examples=100)
    b = normalised_prop1("sep-invariant", Probit(), "classification", seed=3, max_examples=100)
    assert json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)
    c = check_sensitivity(UNIT_PAIRS, lambda e: 2 * abs(e[0] - e[1]), 1.0, max_examples=50,
                          seed=5)
    d = check_sensitivity(UNIT_PAIRS, lambda e: 2 * abs(e[0] - e[1]), 1.0, max_examples=50,
                          seed=5)
    assert c == d


# --------------------------------------------------------------------------- strategies


def test_strategies_respect_their_bounds():
    """Draw from the strategies through the checker: every example obeys its stated bounds."""
    def probe(ex):
        assert isinstance(ex, DPSEPStepExample)
        c = ex.params.clipping_norm
        p = ex.theta_f.shape[0]
        d = ex.pair[0].shape[1]
        assert p == natural_dim(d) and ex.theta_0.shape == (p,)
        assert np.linalg.norm(ex.theta_f) <= c * (1 + 1e-12)
        assert np.linalg.norm(ex.theta_0) <= c * (1 + 1e-12)
        assert 2 <= ex.n_records <= 100_000
        assert 0 < ex.params.damping <= min(ex.n_records, 10)
        assert np.all(np.linalg.norm(ex.pair[0], axis=1) <= 10 * (1 + 1e-12))
        assert set(np.unique(ex.pair[1])) <= {-1.0, 1.0}
        return 0.5

    res = check_sensitivity(dpsep_step_examples("classification", "as-printed"), probe, 1.0,
                            max_examples=50, seed=0)
    assert res.n_examples == 50 and not res.violated

    def psd_probe(theta):
        from dpclaims.analysis.gaussian import unflatten_natural

        _, precision = unflatten_natural(theta)
        assert np.linalg.norm(theta) <= 2.0 * (1 + 1e-12)
        assert np.linalg.eigvalsh(precision)[0] >= -1e-9
        return 0.0

    res = check_sensitivity(gaussian_natural_params(3, 2.0, psd=True), psd_probe, 1.0,
                            max_examples=50, seed=0)
    assert res.n_examples == 50 and res.max_ratio == 0.0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("claimed", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_claimed_raises(claimed):
    with pytest.raises(ValueError, match="claimed") as info:
        check_sensitivity(UNIT_PAIRS, lambda e: 0.0, claimed)
    assert repr(claimed) in str(info.value)


def test_bad_max_examples_raises():
    with pytest.raises(ValueError, match="max_examples"):
        check_sensitivity(UNIT_PAIRS, lambda e: 0.0, 1.0, max_examples=0)


def test_non_finite_distance_raises():
    with pytest.raises(ValueError, match="non-finite"):
        check_sensitivity(UNIT_PAIRS, lambda e: float("nan"), 1.0, max_examples=10)


# --------------------------------------------------------------------------- reproducibility

_SCRIPT = '''
import json
from dpclaims.algorithms.sep.likelihoods import Probit
from dpclaims.property_tests.sensitivity import check_sensitivity
from dpclaims.algorithms.sep.strategies import dpsep_step_examples
lik = Probit()
{extra}
r = check_sensitivity(dpsep_step_examples("classification", "as-printed"),
                      lambda ex: ex.distance(lik) / ex.params.claimed_sensitivity(ex.n_records),
                      1.0, max_examples=60, seed=0)
print(json.dumps(r.to_dict(), sort_keys=True))
'''


def test_same_seed_same_json_whatever_the_calling_script(tmp_path):
    import subprocess
    import sys

    outputs = []
    for extra in ("", "UNRELATED = (0.3125, 7.25, 2.5, 1234.5, 0.001953125, 33)"):
        script = tmp_path / f"run_{len(outputs)}.py"
        script.write_text(_SCRIPT.format(extra=extra))
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              cwd=tmp_path, check=True, timeout=120)
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("missing", ["_get_local_constants", "CONSTANTS_CACHE",
                                     "_local_constants"])
def test_a_hypothesis_without_the_patched_internals_is_named_not_silently_unpatched(
        monkeypatch, missing):
    """Issue 13: hypothesis is a range now; before 6.131.9 (or after a future change)
    the internals the seed-only patch needs are missing, and the check says which."""
    from hypothesis.internal.conjecture import providers

    monkeypatch.delattr(providers, missing)
    with pytest.raises(RuntimeError, match="6.131.9"):
        check_sensitivity(st.floats(0, 1), lambda x: 0.0, 1.0, max_examples=5)
