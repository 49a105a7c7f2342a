"""Tests of dpclaims.audits.mechanism: claims, the mechanism protocol, neighbouring pairs
and the canary search."""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
import pytest

from dpclaims.audits import (
    GaussianMechanism,
    InvalidMechanismError,
    Mechanism,
    NeighbouringPair,
    PrivacyClaim,
    Sensitivity,
    add_one,
    canary_pair,
    remove_one,
    replace_one,
    sensitivity_note,
    sensitivity_of,
    validate_mechanism,
)

DELTA = 1e-5


def test_privacy_claim_validates_and_serialises():
    c = PrivacyClaim(1.0, DELTA, "add-remove", dp_accounting.GaussianDpEvent(2.0))
    assert c.to_dict() == {"epsilon": 1.0, "delta": DELTA, "relation": "add-remove",
                           "dp_event": "GaussianDpEvent(noise_multiplier=2.0)"}
    for eps in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            PrivacyClaim(eps, DELTA)
    for delta in (1.0, -0.1, math.nan):
        with pytest.raises(ValueError, match="delta"):
            PrivacyClaim(1.0, delta)
    with pytest.raises(ValueError, match="relation"):
        PrivacyClaim(1.0, DELTA, "swap-two")
    with pytest.raises(TypeError, match="dp_event"):
        PrivacyClaim(1.0, DELTA, dp_event="gaussian")


def test_sensitivity_distance_and_validation():
    s = Sensitivity(2.0, 1)
    assert s.distance([1.0, 2.0], [0.0, 0.0]) == 3.0
    assert Sensitivity(1.0).distance([3.0, 4.0], [0.0, 0.0]) == 5.0
    assert Sensitivity(1.0, math.inf).distance([3.0, -4.0], [0.0, 0.0]) == 4.0
    with pytest.raises(ValueError, match="different shapes"):
        s.distance([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="sensitivity value"):
        Sensitivity(0.0)
    with pytest.raises(ValueError, match="norm"):
        Sensitivity(1.0, 3)


def test_gaussian_mechanism_is_a_mechanism_with_exact_claim():
    m = GaussianMechanism(np.sum, 1.0, 2.0, DELTA)
    assert isinstance(m, Mechanism) and validate_mechanism(m).source is m
    assert m.claim.epsilon == dp_accounting.get_epsilon_gaussian(2.0, DELTA)
    out = m.release(np.ones(4), np.random.default_rng(0), 100_000)
    assert out.shape == (100_000, 1)
    # mean 4 and std 2 within 5 standard errors (false alarm < 1e-6)
    assert abs(out.mean() - 4) < 5 * 2 / math.sqrt(1e5)
    assert abs(out.std() - 2) < 5 * 2 / math.sqrt(2e5)
    assert GaussianMechanism(np.sum, 1.0, 2.0, DELTA, calibrated_to=0.5).noise_std == 1.0
    with pytest.raises(ValueError, match="noise_multiplier"):
        GaussianMechanism(np.sum, 1.0, 0.0, DELTA)


def test_validate_mechanism_names_what_is_missing():
    with pytest.raises(InvalidMechanismError, match="`name`"):
        validate_mechanism(object())

    @dataclass
    class NoClaim:
        name: str = "x"
        claim: object = None

    with pytest.raises(InvalidMechanismError, match="`claim` must be a PrivacyClaim"):
        validate_mechanism(NoClaim())

    @dataclass
    class NoRelease:
        name: str = "x"
        claim: PrivacyClaim = PrivacyClaim(1.0, DELTA)

    with pytest.raises(InvalidMechanismError, match="release"):
        validate_mechanism(NoRelease())

    @dataclass
    class PlainSensitivity(NoRelease):
        sensitivity: object = 1.5

        def release(self, data, rng, n):
            return np.zeros((n, 1))

    # a plain number is the L2 sensitivity, and the reports say so
    plain = validate_mechanism(PlainSensitivity())
    assert sensitivity_of(plain) == Sensitivity(1.5, 2)
    assert "read as the L2 sensitivity" in sensitivity_note(plain)
    assert sensitivity_of(PlainSensitivity(sensitivity=Sensitivity(2.0, 1))) == Sensitivity(2.0, 1)
    assert sensitivity_note(PlainSensitivity(sensitivity=Sensitivity(2.0, 1))) == ""
    # any other type, or a number that is not > 0, is a clear error naming it
    for bad, word in (("1.0", "str"), (True, "bool"), ((1.0, 2), "tuple"), (-1.0, "-1.0"),
                      (float("nan"), "nan")):
        with pytest.raises(InvalidMechanismError, match=f"sensitivity.*{word}"):
            validate_mechanism(PlainSensitivity(sensitivity=bad))
    # the error is both a TypeError and a ValueError
    assert issubclass(InvalidMechanismError, TypeError)
    assert issubclass(InvalidMechanismError, ValueError)


def test_pair_constructors_on_arrays_and_tuples():
    x = np.arange(12.0).reshape(4, 3)
    y = np.array([0.0, 1.0, 0.0, 1.0])
    p = replace_one(x, 2, np.full(3, -1.0))
    assert p.relation == "replace-one" and np.all(p.d1[2] == -1) and np.all(p.d0 == x)
    pt = replace_one((x, y), 1, (np.zeros(3), 5.0))
    assert pt.d1[1][1] == 5.0 and np.all(pt.d1[0][1] == 0)
    assert x[1, 0] == 3.0  # the input is not overwritten
    pa = add_one((x, y), (np.ones(3), 1.0))
    assert pa.relation == "add-remove" and pa.d1[0].shape == (5, 3)
    pr = remove_one(x, 0)
    assert pr.d1.shape == (3, 3) and np.all(pr.d1 == x[1:])
    assert pr.to_dict()["n_records"] == [4, 3]


def test_pairs_that_are_not_neighbours_raise():
    x = np.zeros((4, 2))
    with pytest.raises(ValueError, match="differ in at most one record; these differ in 2"):
        NeighbouringPair(x, np.ones((4, 2)) * [[1], [1], [0], [0]])
    with pytest.raises(ValueError, match="equal sizes"):
        NeighbouringPair(x, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="differ in size by one"):
        NeighbouringPair(x, np.zeros((6, 2)), "add-remove")
    with pytest.raises(ValueError, match="minus one record"):
        NeighbouringPair(np.arange(4.0), np.array([0.0, 5.0, 2.0]), "add-remove")
    with pytest.raises(ValueError, match="record index"):
        replace_one(x, 4, np.zeros(2))
    with pytest.raises(ValueError, match="record has shape"):
        replace_one(x, 0, np.zeros(3))
    with pytest.raises(ValueError, match="share their leading"):
        replace_one((x, np.zeros(3)), 0, (np.zeros(2), 0.0))
    with pytest.raises(ValueError, match="relation"):
        NeighbouringPair(x, x, "nearby")


@dataclass(frozen=True)
class ClippedMean:
    """Mean of records clipped to norm C, N public: sensitivity 2C/N under replace-one."""

    c: float = 1.0
    name: str = "clipped-mean"
    claim: PrivacyClaim = PrivacyClaim(1.0, DELTA)

    @property
    def sensitivity(self):
        return Sensitivity(2 * self.c / 10, 2)

    def query(self, data):
        norms = np.linalg.norm(data, axis=1, keepdims=True)
        return (data * np.minimum(1, self.c / np.maximum(norms, 1e-300))).mean(axis=0)

    def release(self, data, rng, n):
        return self.query(data) + rng.standard_normal((n, data.shape[1]))


def test_canary_search_finds_the_antipodal_pair_and_states_its_cost():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((10, 2)) * 0.1
    angles = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    cands = [3 * np.array([np.cos(a), np.sin(a)]) for a in angles]
    pair = canary_pair(ClippedMean(), data, cands, index=4)
    # antipodal clipped records: distance 2C/N exactly, the claimed sensitivity
    assert pair.search_cost["query_distance"] == pytest.approx(0.2, rel=1e-12)
    assert pair.search_cost["query_evaluations"] == 16
    assert pair.search_cost["distances"] == 16 * 15 // 2
    assert np.linalg.norm(pair.d0[4] + pair.d1[4]) == pytest.approx(0, abs=1e-12)
    # add-remove: adding a large record moves the mean by about C/(N+1)
    pa = canary_pair(ClippedMean(), data, cands, relation="add-remove")
    assert pa.relation == "add-remove" and pa.search_cost["query_evaluations"] == 16 + 10 + 1
    assert pa.search_cost["query_distance"] > 0.05


def test_canary_search_needs_a_query_and_enough_candidates():
    with pytest.raises(InvalidMechanismError, match="no `query`"):
        canary_pair(_NoQuery(),
                    np.zeros((3, 1)), [np.zeros(1), np.ones(1)])
    with pytest.raises(ValueError, match="candidates"):
        canary_pair(ClippedMean(), np.zeros((3, 2)), [np.zeros(2)])


@dataclass(frozen=True)
class _NoQuery:
    name: str = "no-query"
    claim: PrivacyClaim = PrivacyClaim(1.0, DELTA)

    def release(self, data, rng, n):
        return np.zeros((n, 1))


def test_lossy_record_casts_and_nan_records_raise():
    with pytest.raises(ValueError, match="cannot be stored in a dataset of dtype int64"):
        replace_one(np.array([0, 1, 2]), 0, 0.7)
    with pytest.raises(ValueError, match="cannot be stored"):
        add_one(np.array([0, 1, 2]), 0.5)
    assert replace_one(np.array([0, 1, 2]), 0, 5).d1.tolist() == [5, 1, 2]  # exact: fine
    with pytest.raises(ValueError, match="NaN"):
        NeighbouringPair(np.array([0.0, np.nan]), np.array([1.0, np.nan]))
