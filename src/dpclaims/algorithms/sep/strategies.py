"""Hypothesis strategies of the SEP family: random DP-SEP states and replace-one pairs
for the property test of Prop. 1 (:func:`dpsep_step_examples`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from dpclaims.algorithms.sep.sep import DPSEPParams, cavity_moments, dpsep_theta_new
from dpclaims.analysis.gaussian import clip_to_norm, flatten_natural, natural_dim
from dpclaims.property_tests.strategies import gaussian_natural_params, records, replace_one_pairs

_finite = dict(allow_nan=False, allow_infinity=False)


@dataclass(frozen=True)
class DPSEPStepExample:
    """One DP-SEP step on a replace-one pair, with the state it starts from.

    ``n_records`` is N in Alg. 3 (the size of the full training set the step's
    weights use); the pair holds the records the hypothesis search varied.
    """

    params: DPSEPParams
    n_records: int
    theta_f: np.ndarray
    theta_0: np.ndarray
    pair: tuple

    def theta_new(self, likelihood, which: int) -> np.ndarray:
        """Noiseless theta_new (p,) when the step processes D[index] (0) or D'[index] (1)."""
        x, y, x2, y2, index = self.pair
        xs, ys = (x, y) if which == 0 else (x2, y2)
        theta_cav = self.theta_0 + (self.n_records - 1) * self.theta_f
        mean, cov, _ = cavity_moments(theta_cav[None], None)
        site = likelihood.site(mean, cov, xs[index][None], np.array([ys[index]]))
        site = clip_to_norm(site, self.params.clipping_norm)[0]
        return dpsep_theta_new(self.theta_f, site, self.theta_0, self.n_records, self.params)

    def distance(self, likelihood) -> float:
        """||theta_new(D) - theta_new(D')||_2 (the quantity Prop. 1 bounds)."""
        return float(np.linalg.norm(self.theta_new(likelihood, 0) - self.theta_new(likelihood, 1)))

    def magnitude(self, likelihood) -> float:
        """||theta_new(D)|| + ||theta_new(D')||: the scale of the rounding error."""
        return float(np.linalg.norm(self.theta_new(likelihood, 0))
                     + np.linalg.norm(self.theta_new(likelihood, 1)))


@st.composite
def dpsep_step_examples(draw, task: str, reading: str, max_dim: int = 3,
                        max_records: int = 100_000):
    """Random DP-SEP states and replace-one pairs for Prop. 1's property test.

    Draws d in [1, max_dim], N in [2, max_records], C in [0.1, 10], gamma in
    (0, min(N, 10)], a site theta_f with PSD precision and ||theta_f|| <= C, a prior
    theta_0 with positive definite precision and ||theta_0|| <= C (Alg. 3's
    "Require"), and a replace-one pair of records with ||x|| <= 10.
    """
    d = draw(st.integers(1, max_dim))
    n_records = draw(st.integers(2, max_records))
    clipping_norm = draw(st.floats(0.1, 10.0, **_finite))
    damping = draw(st.floats(0.01, float(min(n_records, 10)), **_finite))
    params = DPSEPParams(clipping_norm=clipping_norm, damping=damping, reading=reading)
    theta_f = draw(gaussian_natural_params(d, clipping_norm, psd=True))
    prior_var = draw(st.floats(0.5, 100.0, **_finite))
    theta_0 = flatten_natural(np.zeros(d), np.eye(d) / prior_var)
    theta_0 = clip_to_norm(theta_0, clipping_norm)
    pair = draw(replace_one_pairs(records(d, task), 1, 5))
    assert theta_f.shape == (natural_dim(d),)
    return DPSEPStepExample(params, n_records, theta_f, theta_0, pair)
