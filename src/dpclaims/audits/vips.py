"""VIPS's released steps as auditable mechanisms (Park et al., ``vips.txt``).

Each mechanism holds the global variational parameters fixed (public: the output of
earlier releases) and releases one noised statistic of a minibatch, vectorised over
trials, with the paper's claim for that one release.
"""

from __future__ import annotations

from dataclasses import dataclass

import dp_accounting
import numpy as np

from dpclaims.algorithms.vips_sbn import (
    JOINT_SENSITIVITY,
    SBNParams,
    _check_binary,
    claimed_sensitivities,
    concatenate_scaled,
    sbn_statistics,
)
from dpclaims.analysis.validation import check_count, check_delta, check_positive
from dpclaims.audits.mechanism import PrivacyClaim, Sensitivity

# --------------------------------------------------------------------------- mechanism


@dataclass(frozen=True)
class VIPSSBNStep:
    """One released step of VIPS-SBN as a :class:`~dpclaims.audits.mechanism.Mechanism`.

    The dataset is the minibatch y (S, J) (binary); the global variational parameters are held
    fixed (public, the output of earlier releases). ``query`` is the rescaled concatenated
    vector s' = [A / C_A, ..., G / C_G] of length 2K + 2J + 2JK + JK^2 (C_i =
    :func:`claimed_sensitivities` with S the number of records), ``release`` adds
    sqrt(7) sigma N(0, I) (VIPS Sec. 7, Eq. 72); :func:`split_scaled` maps a release back to
    the statistics (post-processing).

    The claim is the paper's: replace-one, L2 sensitivity sqrt(7) for s' ("so that the
    concatenated vector ... 's sensitivity becomes simply sqrt(7)"), noise multiplier sigma,
    epsilon = ``dp_accounting.get_epsilon_gaussian(sigma, delta)`` (Balle & Wang 2018).

    Parameters
    ----------
    params : SBNParams
    sigma : float
        > 0.
    delta : float
        In (0, 1).
    local_sweeps : int
    name : str
    """

    params: SBNParams
    sigma: float
    delta: float
    local_sweeps: int = 3
    name: str = "vips-sbn-step"

    def __post_init__(self) -> None:
        if not isinstance(self.params, SBNParams):
            raise TypeError(f"params must be SBNParams, got {type(self.params).__name__}")
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        delta = check_delta(self.delta)
        if delta == 0.0:
            raise ValueError(f"delta must lie in (0, 1) for a Gaussian mechanism, got "
                             f"{self.delta!r}")
        object.__setattr__(self, "delta", delta)
        check_count(self.local_sweeps, "local_sweeps")

    @property
    def claim(self) -> PrivacyClaim:
        eps = dp_accounting.get_epsilon_gaussian(self.sigma, self.delta)
        return PrivacyClaim(eps, self.delta, "replace-one",
                            dp_accounting.GaussianDpEvent(self.sigma))

    @property
    def sensitivity(self) -> Sensitivity:
        return Sensitivity(JOINT_SENSITIVITY, 2)

    def sensitivities(self, batch_size: int) -> dict[str, float]:
        """The per-statistic C_i for a minibatch of ``batch_size`` records."""
        return claimed_sensitivities(self.params.n_visible, self.params.n_hidden, batch_size)

    def query(self, data) -> np.ndarray:
        """s'(data), shape (2K + 2J + 2JK + JK^2,)."""
        y = _check_binary(data, "data", self.params.n_visible)
        stats = sbn_statistics(y, self.params, local_sweeps=self.local_sweeps)
        return concatenate_scaled(stats, self.sensitivities(y.shape[0]))

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        """n independent releases, shape (n, dim): s'(data) + sqrt(7) sigma N(0, I)."""
        n = check_count(n, "n")
        q = self.query(data)
        return q + JOINT_SENSITIVITY * self.sigma * rng.standard_normal((n, q.size))
