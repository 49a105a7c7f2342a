"""The DP-SEP step as an auditable mechanism, and a worst-case canary pair.

Threat model (Prop. 1's own): the state theta_f and prior theta_0 are fixed and
known, and the step that processes record ``index`` is observed, i.e. its released
theta~_new (Alg. 3 step 8). Prop. 1 + the Gaussian mechanism claim that this one
release is (epsilon_step, delta)-DP with epsilon_step the exact epsilon of a
Gaussian mechanism of noise multiplier sigma (noise std sigma * 2 gamma C / N for
sensitivity 2 gamma C / N).
"""

from __future__ import annotations

from dataclasses import dataclass

import dp_accounting
import numpy as np

from dpclaims.algorithms.sep.sep import DPSEPParams, cavity_moments, dpsep_theta_new
from dpclaims.analysis.gaussian import clip_to_norm
from dpclaims.audits.mechanism import NeighbouringPair, PrivacyClaim, Sensitivity


@dataclass(frozen=True)
class DPSEPStep:
    """One noised DP-SEP step at a fixed state, processing record ``index``.

    A :class:`~dpclaims.audits.mechanism.Mechanism`: ``release(data, rng, n)``
    returns n independent theta~_new, shape (n, p), in one vectorised call;
    ``query(data)`` the noiseless theta_new (p,). ``data`` is a tuple
    (x (N, d), y (N,)). ``claim``: Prop. 1's sensitivity with the Gaussian
    mechanism, i.e. epsilon = get_epsilon_gaussian(sigma, delta) for this one
    release under replace-one; ``sensitivity``: Prop. 1's 2 gamma C / N (L2).
    """

    params: DPSEPParams
    likelihood: object
    theta_f: np.ndarray
    theta_0: np.ndarray
    n_records: int
    index: int
    delta: float = 1e-5

    @property
    def name(self) -> str:
        return f"dpsep-step[{self.params.reading}]"

    @property
    def claim(self) -> PrivacyClaim:
        sigma = self.params.noise_multiplier
        if sigma is None:
            raise ValueError("a DP-SEP step without noise (noise_multiplier=None) claims nothing")
        return PrivacyClaim(dp_accounting.get_epsilon_gaussian(sigma, self.delta), self.delta,
                            "replace-one", dp_accounting.GaussianDpEvent(sigma))

    @property
    def sensitivity(self) -> Sensitivity:
        return Sensitivity(self.params.claimed_sensitivity(self.n_records), 2)

    def query(self, data) -> np.ndarray:
        x, y = data
        theta_cav = self.theta_0 + (self.n_records - 1) * self.theta_f
        mean, cov, _ = cavity_moments(theta_cav[None], self.params.pd_floor)
        site = self.likelihood.site(mean, cov, x[self.index][None], np.asarray(y)[[self.index]])
        site = clip_to_norm(site, self.params.clipping_norm)[0]
        return dpsep_theta_new(self.theta_f, site, self.theta_0, self.n_records, self.params)

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        mean = self.query(data)
        std = self.params.noise_std(self.n_records)
        return mean + std * rng.standard_normal((n, mean.shape[0]))


@dataclass(frozen=True)
class CanaryPair:
    """Two records (x_a, y_a), (x_b, y_b) for position ``index`` and the search's cost."""

    x_a: np.ndarray
    y_a: float
    x_b: np.ndarray
    y_b: float
    site_distance: float
    n_candidates: int
    n_site_evaluations: int


def worst_case_canary(mechanism: DPSEPStep, x, y, *, scales=(1.0, 3.0, 10.0, 30.0),
                      n_directions: int = 64, seed: int = 0) -> CanaryPair:
    """Choose the replace-one pair at ``mechanism.index`` that moves theta_new most.

    Candidates: ``n_directions`` directions (the data's rows with the largest norms
    and random unit vectors) times ``scales`` times both labels (or, for regression,
    targets +-3 and +-10). Each candidate's clipped site theta_fn is computed in one
    batched call; the pair maximising ||theta_fn(a) - theta_fn(b)|| (<= 2C by
    clipping) is returned. Cost: K = n_directions * len(scales) * 2 (or 4) site
    evaluations and K^2 distances. The search is over a finite set, so the pair is
    a lower bound on the worst case: an audit on it stays sound.
    """
    rng = np.random.default_rng(seed)
    x = np.asarray(x, float)
    d = x.shape[1]
    top = x[np.argsort(-np.linalg.norm(x, axis=1))[: n_directions // 2]]
    rand = rng.standard_normal((n_directions - len(top), d))
    dirs = np.concatenate([top, rand])
    dirs /= np.maximum(np.linalg.norm(dirs, axis=1, keepdims=True), 1e-300)
    labels = (-1.0, 1.0) if set(np.unique(y)) <= {-1.0, 1.0} else (-10.0, -3.0, 3.0, 10.0)
    cx = np.concatenate([s * dirs for s in scales for _ in labels])
    cy = np.concatenate([np.full(len(dirs), lab) for _ in scales for lab in labels])
    m = mechanism
    theta_cav = m.theta_0 + (m.n_records - 1) * m.theta_f
    mean, cov, _ = cavity_moments(np.broadcast_to(theta_cav, (len(cx), theta_cav.size)).copy(),
                                  m.params.pd_floor)
    sites = clip_to_norm(m.likelihood.site(mean, cov, cx, cy), m.params.clipping_norm)
    dist = np.linalg.norm(sites[:, None, :] - sites[None, :, :], axis=-1)
    i, j = np.unravel_index(int(np.argmax(dist)), dist.shape)
    return CanaryPair(cx[i], float(cy[i]), cx[j], float(cy[j]), float(dist[i, j]),
                      len(cx), len(cx))


def neighbouring_datasets(x, y, index: int, canary: CanaryPair) -> NeighbouringPair:
    """The replace-one pair: the data with record ``index`` replaced by canary a, resp. b."""
    x0, y0 = np.array(x, float), np.array(y, float)
    x1, y1 = x0.copy(), y0.copy()
    x0[index], y0[index] = canary.x_a, canary.y_a
    x1[index], y1[index] = canary.x_b, canary.y_b
    return NeighbouringPair((x0, y0), (x1, y1), "replace-one",
                            f"worst-case canary at record {index}: site distance "
                            f"{canary.site_distance:.4g} of {canary.n_candidates} candidates",
                            {"site_evaluations": canary.n_site_evaluations,
                             "site_distance": canary.site_distance})
