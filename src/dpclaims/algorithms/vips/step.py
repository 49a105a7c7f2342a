"""VIPS's released steps as auditable mechanisms (Park et al., ``vips.txt``).

Each mechanism holds the global variational parameters fixed (public: the output of
earlier releases) and releases one noised statistic of a minibatch, vectorised over
trials, with the paper's claim for that one release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
import scipy.sparse as sp

from dpclaims.algorithms.vips.blr import (
    _check_bound,
    _check_second_moment,
    _statistics,
    blr_sensitivities,
    check_blr_data,
    symmetric_from_triu,
    triu_vector,
)
from dpclaims.algorithms.vips.lda import (
    VIPSLDA,
    _check_lambda,
    _clip_factors,
    _dirichlet_expectation,
    _document_norms,
    _e_step,
    _sum_over_documents,
    as_count_matrix,
)
from dpclaims.algorithms.vips.sbn import (
    JOINT_SENSITIVITY,
    SBNParams,
    _check_binary,
    claimed_sensitivities,
    concatenate_scaled,
    sbn_statistics,
)
from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_finite_array,
    check_positive,
)
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


# --------------------------------------------------------------------------- LDA step


@dataclass(frozen=True, eq=False)
class VIPSLDAStep:
    """One released step of Algorithm 3 at a fixed lambda: the noised minibatch statistic.

    A mechanism in the sense of :mod:`dpclaims.audits.mechanism`. ``data`` is the
    minibatch, a dense array (S, V) of word counts whose rows each hold at most N
    tokens (exactly N after :func:`resample_documents`); a record is one
    document (row). ``query(data)`` is the clipped statistic sum_d clip(s_bar^d)
    flattened to (K V,); ``release(data, rng, n)`` returns n independent
    ``query(data) + Y`` with Y ~ N(0, noise_std^2 I), shape (n, K V), the
    quantity Algorithm 3 outputs ("Output the perturbed expected sufficient
    statistics ... Clip negative entries of s~ to 0" comes after the output; set
    ``nonnegative=True`` to release the clipped-at-zero version instead, a
    post-processing).

    ``claim``: the Gaussian mechanism's exact epsilon
    ``dp_accounting.get_epsilon_gaussian(sigma, delta)`` for this one release,
    under replace-one (the paper's relation), with sensitivity ``sensitivity``:
    a N / S for ``calibration="paper"`` (the paper's claim; the true replace-one
    sensitivity is sqrt(2) a N / S, module notes), sqrt(2) a N / S for
    ``"replace-one"``.

    Parameters
    ----------
    lambda_ : ndarray (K, V)
    alpha : float
    doc_length : int
        N.
    batch_size : int
        S; ``data`` must have S rows.
    noise_multiplier : float
        sigma.
    clip_fraction : float or None
        a (None: no clipping, a = 1 in the sensitivity; then rows must have at most
        N tokens for the bound).
    delta : float in (0, 1)
    calibration : {"paper", "replace-one"}
    nonnegative : bool
    e_step_max_iter, e_step_tol : E-step controls (the query is deterministic).
    """

    lambda_: np.ndarray
    alpha: float
    doc_length: int
    batch_size: int
    noise_multiplier: float
    clip_fraction: float | None = 0.1
    delta: float = 1e-5
    calibration: str = "paper"
    nonnegative: bool = False
    e_step_max_iter: int = 100
    e_step_tol: float = 1e-3

    def __post_init__(self) -> None:
        lam = _check_lambda(self.lambda_)
        object.__setattr__(self, "lambda_", lam)
        # Reuse VIPSLDA's checks of the shared parameters.
        VIPSLDA(n_topics=lam.shape[0], batch_size=self.batch_size, n_iterations=1,
                doc_length=self.doc_length, noise_multiplier=self.noise_multiplier,
                clip_fraction=self.clip_fraction, alpha=self.alpha,
                calibration=self.calibration, e_step_max_iter=self.e_step_max_iter,
                e_step_tol=self.e_step_tol)
        delta = check_delta(self.delta)
        if delta <= 0:
            raise ValueError(f"delta must lie in (0, 1) for a Gaussian mechanism, got "
                             f"{self.delta!r}")

    @property
    def _config(self) -> VIPSLDA:
        return VIPSLDA(n_topics=self.lambda_.shape[0], batch_size=self.batch_size,
                       n_iterations=1, doc_length=self.doc_length,
                       noise_multiplier=self.noise_multiplier, clip_fraction=self.clip_fraction,
                       alpha=self.alpha, calibration=self.calibration)

    @property
    def name(self) -> str:
        return f"vips-lda-step[{self.calibration}]"

    @property
    def noise_std(self) -> float:
        return self._config.noise_std()

    @property
    def claim(self):
        eps = dp_accounting.get_epsilon_gaussian(self.noise_multiplier, self.delta)
        return PrivacyClaim(eps, self.delta, "replace-one",
                            dp_accounting.GaussianDpEvent(self.noise_multiplier))

    @property
    def sensitivity(self):
        cfg = self._config
        value = (cfg.claimed_sensitivity() if self.calibration == "paper"
                 else cfg.true_sensitivity_bound("replace-one"))
        return Sensitivity(value, 2)

    def _check_data(self, data) -> sp.csr_matrix:
        mat = as_count_matrix(data, "data", vocabulary_size=self.lambda_.shape[1])
        if mat.shape[0] != self.batch_size:
            raise ValueError(f"data must hold the S={self.batch_size} minibatch documents, got "
                             f"{mat.shape[0]} rows")
        lengths = np.asarray(mat.sum(axis=1)).ravel()
        if (lengths > self.doc_length).any():
            d = int(np.argmax(lengths > self.doc_length))
            raise ValueError(f"document {d} has {lengths[d]:.0f} tokens, more than "
                             f"doc_length N={self.doc_length}")
        return mat

    def query(self, data) -> np.ndarray:
        """The clipped minibatch statistic sum_d clip(s_bar^d), flattened to (K V,)."""
        mat = self._check_data(data)
        exp_elog_beta = np.exp(_dirichlet_expectation(self.lambda_))
        _, contrib, rows, _, _, _ = _e_step(mat, exp_elog_beta, self.alpha,
                                            self.e_step_max_iter, self.e_step_tol)
        contrib = contrib / self.batch_size
        clip_norm = self._config.clip_norm
        if clip_norm is not None:
            norms = _document_norms(contrib, rows, self.batch_size)
            contrib = contrib * _clip_factors(norms, clip_norm)[rows, None]
        return _sum_over_documents(contrib, mat.indices, self.lambda_.shape[1]).ravel()

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        """n independent releases, shape (n, K V), in one vectorised draw."""
        n = check_count(n, "n")
        q = self.query(data)
        out = q + self.noise_std * rng.standard_normal((n, q.size))
        return np.maximum(out, 0.0) if self.nonnegative else out


def lda_step_mechanism(config: VIPSLDA, lambda_, delta: float = 1e-5) -> VIPSLDAStep:
    """The one-release mechanism of a private :class:`VIPSLDA` configuration at ``lambda_``.

    Raises ValueError for a configuration without noise (it claims nothing).
    """
    if not config.private:
        raise ValueError("a run without noise (noise_multiplier=None) has no privacy claim")
    return VIPSLDAStep(lambda_=np.asarray(lambda_, float), alpha=config.alpha,
                       doc_length=config.doc_length, batch_size=config.batch_size,
                       noise_multiplier=config.noise_multiplier,
                       clip_fraction=config.clip_fraction, delta=delta,
                       calibration=config.calibration, e_step_max_iter=config.e_step_max_iter,
                       e_step_tol=config.e_step_tol)


# --------------------------------------------------------------------------- BLR step


@dataclass(frozen=True)
class VIPSBLRStep:
    """One VIPS-BLR release, (s1~, s2~) at fixed variational parameters, as a mechanism.

    The noiseless query of a batch ``data = (x (S, d), y (S,))`` is the joint vector
    ``[s1, triu(s2)]`` of length d + d(d+1)/2 (the upper triangle is what is noised;
    the lower one is a copy). :meth:`release` adds N(0, (sigma Delta_s1)^2) to each s1
    coordinate and N(0, (sigma Delta_s2)^2) to each upper-triangle entry (eqs. 56, 58).

    Claim: replace-one, ``ComposedDpEvent([GaussianDpEvent(sigma)] * 2)``: two Gaussian
    mechanisms on the same batch, each with multiplier sigma relative to its block's
    claimed sensitivity. Composed they are one Gaussian mechanism with multiplier
    sigma / sqrt(2) (Gaussian-DP composition), so epsilon =
    ``dp_accounting.get_epsilon_gaussian(sigma / sqrt(2), delta)`` (Balle & Wang 2018),
    exact for the claimed sensitivities. The claimed joint sensitivity is
    sqrt(Delta_s1^2 + Delta_s2^2) in L2. No subsampling is part of this event: it is
    one step on a given batch.

    Parameters
    ----------
    mean : array (d,)
        mu of the current q(m) (public: post-processing of earlier releases).
    cov : array (d, d)
        Sigma of the current q(m), symmetric PSD.
    noise_multiplier : float
        sigma > 0.
    delta : float
        In (0, 1).
    batch_size : int
        S, the number of records the statistics average over; ``data`` must have S rows.
    sensitivity_bound : {"paper", "tight"}
        Which bounds the noise is calibrated to and claimed (:func:`blr_sensitivities`).
    name : str
    """

    mean: np.ndarray
    cov: np.ndarray
    noise_multiplier: float
    delta: float
    batch_size: int
    sensitivity_bound: str = "paper"
    name: str = "vips-blr-step"

    def __post_init__(self) -> None:
        mean = check_finite_array(self.mean, "mean", ndim=1)
        cov = check_finite_array(self.cov, "cov", ndim=2)
        d = mean.size
        if cov.shape != (d, d):
            raise ValueError(f"cov must have shape ({d}, {d}), got {cov.shape}")
        mm = _check_second_moment(cov + np.outer(mean, mean), d)
        if np.linalg.eigvalsh(0.5 * (cov + cov.T))[0] < -1e-12:
            raise ValueError("cov must be positive semi-definite")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)
        object.__setattr__(self, "_second_moment", mm)
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        delta = check_delta(self.delta)
        if delta == 0:
            raise ValueError("delta must lie in (0, 1) for a Gaussian mechanism, got 0")
        object.__setattr__(self, "batch_size", check_count(self.batch_size, "batch_size"))
        _check_bound(self.sensitivity_bound)

    @property
    def dim(self) -> int:
        return self.mean.size

    @property
    def block_sensitivities(self) -> tuple[float, float]:
        """(Delta_s1, Delta_s2) for S = ``batch_size`` under ``sensitivity_bound``."""
        return blr_sensitivities(self.batch_size, self.sensitivity_bound)

    @property
    def noise_std(self) -> np.ndarray:
        """Per-coordinate noise std of the joint vector, shape (d + d(d+1)/2,)."""
        d1, d2 = self.block_sensitivities
        d = self.dim
        return np.concatenate([np.full(d, self.noise_multiplier * d1),
                               np.full(d * (d + 1) // 2, self.noise_multiplier * d2)])

    @property
    def dp_event(self) -> dp_accounting.DpEvent:
        g = dp_accounting.GaussianDpEvent(self.noise_multiplier)
        return dp_accounting.ComposedDpEvent([g, g])

    @property
    def claim(self):
        eps = dp_accounting.get_epsilon_gaussian(self.noise_multiplier / math.sqrt(2.0),
                                                 self.delta)
        return PrivacyClaim(eps, self.delta, "replace-one", self.dp_event)

    @property
    def sensitivity(self):
        d1, d2 = self.block_sensitivities
        return Sensitivity(math.hypot(d1, d2), 2)

    def _check(self, data):
        if not isinstance(data, tuple) or len(data) != 2:
            raise ValueError("data must be a tuple (x (S, d), y (S,))")
        x, y = check_blr_data(*data)
        if x.ndim != 2 or x.shape != (self.batch_size, self.dim):
            raise ValueError(f"x must have shape ({self.batch_size}, {self.dim}) (batch_size, "
                             f"d), got {x.shape}")
        return x, y

    def query(self, data) -> np.ndarray:
        """[s1, triu(s2)] of the batch, shape (d + d(d+1)/2,)."""
        x, y = self._check(data)
        s1, s2 = _statistics(x, y, self._second_moment)
        return np.concatenate([s1, triu_vector(s2)])

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        """n independent releases, shape (n, d + d(d+1)/2): query + noise_std * N(0, I)."""
        n = check_count(n, "n")
        q = self.query(data)
        return q + self.noise_std * rng.standard_normal((n, q.size))

    def unpack(self, released) -> tuple[np.ndarray, np.ndarray]:
        """Split (..., d + d(d+1)/2) into s1~ (..., d) and the symmetric s2~ (..., d, d)."""
        released = np.asarray(released, dtype=float)
        return released[..., :self.dim], symmetric_from_triu(released[..., self.dim:], self.dim)
