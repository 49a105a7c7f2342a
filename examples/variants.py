"""Two variants of a private mean, for `dpclaims check-variant` (README, worked example).

The query is the mean of N = 100 two-dimensional records clipped to norm C = 1.
Under replace-one (N public) its L2 sensitivity is 2C/N: one record can move from
c to -c. ``correct`` calibrates the Gaussian noise to 2C/N; ``wrong`` makes the
common mistake of using the add-remove sensitivity C/N under a replace-one claim,
so its noise is half what its claimed epsilon needs.

    dpclaims check-variant examples/variants.py:correct   # exit 0
    dpclaims check-variant examples/variants.py:wrong     # exit 1: refuted
"""

from dataclasses import dataclass, field

import dp_accounting
import numpy as np

from dpclaims.audits import PrivacyClaim, Sensitivity

N, C, SIGMA, DELTA, EPSILON = 100, 1.0, 2.0, 1e-5, 2.0


def _data():
    return np.random.default_rng(0).standard_normal((N, 2)) * 0.5


@dataclass(frozen=True)
class ClippedMean:
    """Gaussian mechanism on the clipped mean: noise std SIGMA * ``calibrated_sensitivity``."""

    calibrated_sensitivity: float
    name: str = "clipped-mean"
    data: np.ndarray = field(default_factory=_data, repr=False)
    # canaries for the search: 16 directions at norm 2 (clipped to C)
    candidates: tuple = tuple(2 * np.array([np.cos(a), np.sin(a)])
                              for a in np.linspace(0, 2 * np.pi, 16, endpoint=False))

    @property
    def claim(self):
        # the epsilon a paper would print: the exact 1.9933 of sigma = 2, rounded up
        return PrivacyClaim(EPSILON, DELTA, "replace-one", dp_accounting.GaussianDpEvent(SIGMA))

    @property
    def sensitivity(self):
        return Sensitivity(self.calibrated_sensitivity, 2)

    def query(self, data):
        norms = np.linalg.norm(data, axis=1, keepdims=True)
        return (data * np.minimum(1.0, C / np.maximum(norms, 1e-300))).mean(axis=0)

    def release(self, data, rng, n):
        q = self.query(data)
        return q + SIGMA * self.calibrated_sensitivity * rng.standard_normal((n, q.size))


def correct():
    return ClippedMean(calibrated_sensitivity=2 * C / N, name="clipped-mean (2C/N)")


def wrong():
    return ClippedMean(calibrated_sensitivity=C / N, name="clipped-mean (C/N)")
