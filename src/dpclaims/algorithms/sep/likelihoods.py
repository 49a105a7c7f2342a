"""Likelihood terms for EP-family algorithms: the moment-matched site of one record.

Every likelihood computes, for a batch of cavities and a batch of records, the
natural parameters of the intermediate factor

    f_n(theta) = proj[ q_{-1}(theta) p(x_n | theta) ] / q_{-1}(theta)

(DP-SEP v0 Alg. 1 step 4, Alg. 2 step 4, Alg. 3 step 6) in the flat
parametrisation of :mod:`dpclaims.analysis.gaussian`. The leading axis is the
trial axis: row ``i`` of the cavity goes with row ``i`` of the records.

A record is a row ``(x, y)``: features ``x`` in R^d and a scalar target ``y``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from dpclaims.analysis.gaussian import flatten_natural
from dpclaims.analysis.validation import check_positive


@dataclass(frozen=True)
class LinearGaussian:
    """Bayesian linear regression with known noise variance: y = x^T theta + N(0, s^2).

    The likelihood is itself Gaussian in theta, so moment matching is exact and the
    site does not depend on the cavity: h = x y / s^2, Lambda = x x^T / s^2. SEP's
    fixed point q = p0 f^N with f = mean of the sites is then the exact posterior.

    Parameters
    ----------
    noise_variance : float
        s^2 > 0, in squared units of y.
    """

    noise_variance: float = 1.0
    name: str = "linear-gaussian"

    def __post_init__(self):
        check_positive(self.noise_variance, "noise_variance")

    def site(self, cavity_mean, cavity_cov, x, y) -> np.ndarray:
        """Site natural parameters (n, p) for records x (n, d), y (n,); cavity unused."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        s2 = self.noise_variance
        return flatten_natural(x * (y / s2)[:, None], np.einsum("ni,nj->nij", x, x) / s2)

    def log_likelihood(self, theta, x, y) -> np.ndarray:
        """log p(y | x, theta) for theta (..., d), x (n, d), y (n,): shape (..., n)."""
        mean = np.einsum("...d,nd->...n", theta, x)
        s2 = self.noise_variance
        return -0.5 * np.log(2 * np.pi * s2) - 0.5 * (y - mean) ** 2 / s2


@dataclass(frozen=True)
class Probit:
    """Probit regression p(y | x, theta) = Phi(y x^T theta), y in {-1, +1}.

    Closed-form tilted moments (Minka 2001; Rasmussen & Williams 2006, Sec. 3.6):
    with cavity mean m and covariance V, s = 1 + x^T V x, z = y x^T m / sqrt(s)
    and r = phi(z) / Phi(z),

        m_tilted = m + y r V x / sqrt(s)
        V_tilted = V - beta V x x^T V,   beta = r (z + r) / s.

    By Sherman-Morrison the site is rank one: precision pi x x^T with
    pi = beta / (1 - beta x^T V x) >= 0 and h = x (c + pi (x^T m + c x^T V x)),
    c = y r / sqrt(s). r is evaluated in log space (scipy.special.log_ndtr).
    """

    name: str = "probit"

    def site(self, cavity_mean, cavity_cov, x, y) -> np.ndarray:
        """Site natural parameters (n, p) for cavities (n, d), (n, d, d) and records."""
        m = np.asarray(cavity_mean, dtype=float)
        V = np.asarray(cavity_cov, dtype=float)
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        vx = np.einsum("nij,nj->ni", V, x)
        xvx = np.einsum("ni,ni->n", x, vx)
        s = 1.0 + xvx
        sqrt_s = np.sqrt(s)
        xm = np.einsum("ni,ni->n", x, m)
        z = y * xm / sqrt_s
        log_phi = -0.5 * z**2 - 0.5 * np.log(2 * np.pi)
        r = np.exp(log_phi - log_ndtr(z))
        beta = r * (z + r) / s
        pi = beta / (1.0 - beta * xvx)
        c = y * r / sqrt_s
        h = x * (c + pi * (xm + c * xvx))[:, None]
        return flatten_natural(h, pi[:, None, None] * np.einsum("ni,nj->nij", x, x))

    def log_likelihood(self, theta, x, y) -> np.ndarray:
        """log Phi(y x^T theta) for theta (..., d), x (n, d), y (n,): shape (..., n)."""
        return log_ndtr(y * np.einsum("...d,nd->...n", theta, x))


LIKELIHOODS = {"linear-gaussian": LinearGaussian, "probit": Probit}
