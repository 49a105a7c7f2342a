"""DPVI, DP-SEP and VIPS as algorithms (whole runs with whole-run claims).

Each class follows the algorithm protocol of :mod:`dpclaims.audits.whole_run`: a
``claim`` about the whole run (its DpEvent), a ``threat_model`` and a ``run(data, rng,
n_runs)`` vectorised over runs (a Python loop over the steps only), built on the
reference implementations in :mod:`dpclaims.algorithms` (``dpvi``, ``sep``,
``vips_blr``). Each has ``step`` (one noisy release from given states, for the
sensitivity property test), a canary, and planted-bug switches.

:class:`DPVIRun`
    Jälkö, Prediger, Honkela & Kaski, DPVIm, ``../shared/papers/dpvim.txt``, Sec. 3.1.1,
    Algorithm 1; variants "vanilla", "aligned", "natural" of
    :mod:`dpclaims.algorithms.dpvi`. T steps of DP-SGD on the ELBO of logistic regression,
    Poisson(q) batches, plain SGD
    from a public xi_0. Data ``(x (N, d), y (N,), is_canary (N,))``; a record with
    ``is_canary = s`` in {-1, +1} is the gradient canary: its clipped per-example
    contribution to the released vector is s C u (u = e_1 of the released space).
    Claim (add-remove): ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(sigma)), T)``, epsilon from dp_accounting's PLD accountant. Planted
    bug ``noise_clip``: the noise std is sigma * noise_clip while the clip is C (the
    noise not rescaled when the clipping norm changed: effective multiplier
    sigma * noise_clip / C).

:class:`DPSEPPass`
    Vinaroz & Park, DP-SEP v0, ``../shared/papers/dpsep_full_v0.txt``, Algorithm 3,
    eq. 4, Prop. 1. T epochs, each a pass over a hidden random permutation of the N records; every
    step
    releases theta~_new (step 8). eq. 4: "theta_new = (gamma/N) theta_fn + (N - gamma/N)
    theta_f + theta_0", with noise for "Delta_theta_new = 2 gamma C / N" (Prop. 1).
    Reading ``"as-printed"`` is eq. 4; ``"sep-invariant"`` is SEP's own update
    theta_new = gamma theta_fn + (N - gamma) theta_f + theta_0 (sensitivity 2 gamma C)
    with the paper's noise: the planted bug (noise N times too small). Data ``(x (N, d),
    y (N,), site_canary (N,))``: a record with ``site_canary = s`` in {-1, +1} has the
    clipped site s C u (u = e_1 of the natural parameters, the h_1 coordinate) whatever
    the cavity: the DP-SEP analogue of a gradient canary (Prop. 1 holds for every site of
    norm <= C). Claim (replace-one): one unamplified Gaussian per epoch,
    ``SelfComposedDpEvent(GaussianDpEvent(sigma), T)`` (each record is processed once per
    epoch; :func:`dpclaims.analysis.accounting.dp_event_for` with a shuffled pass), exact
    epsilon ``get_epsilon_gaussian(sigma / sqrt(T), delta)``. (The paper accounts the pass
    as subsampling with autodp; that is a separate claim, ``dpsep/prop2-privacy``.)

:class:`VIPSRun`
    Park, Foulds, Chaudhuri, Welling, VIPS, ``../shared/papers/vips.txt``, Sec. 6.2,
    eqs. 56, 58; Algorithms 4, 5. J iterations of private stochastic VB for Bayesian logistic
    regression; each
    releases s1~ and s2~ (eqs. 56, 58) of a batch of S records. ``batching="wor"``: a
    fresh uniformly random batch of S records each iteration (what the claim accounts);
    ``"shuffle"``: each epoch a random permutation cut into N / S disjoint batches (the
    planted bug: a shuffled partition accounted as sampling without replacement). Claim
    (replace-one): ``SelfComposedDpEvent(SampledWithoutReplacementDpEvent(N, S,
    GaussianDpEvent(sigma / sqrt(2))), J)`` (the two Gaussian releases of a step are one
    Gaussian of multiplier sigma / sqrt(2)), epsilon from dp_accounting's RDP accountant
    (Wang, Balle, Kasiviswanathan 2019). Noise calibrated to the tight sensitivities
    (Delta_s1 = 1/S, Delta_s2 = sqrt(2)/(4S), :func:`~dpclaims.algorithms.vips_blr.
    blr_sensitivities`). Canary: input-space, record 0 set to (e_1, y = 0), resp.
    (e_1, y = 1): s1 moves by e_1 / S (the full Delta_s1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import dp_accounting
import numpy as np

from dpclaims.algorithms.dpvi import (
    DPVIConfig,
    LogisticRegression,
    MeanField,
    Transform,
    dp_step,
    draw_batches,
    released_dim,
)
from dpclaims.algorithms.likelihoods import Probit
from dpclaims.algorithms.sep import DPSEPParams, cavity_moments, dpsep_theta_new
from dpclaims.algorithms.vips_blr import (
    _moments_from_nu,
    _statistics,
    blr_sensitivities,
    check_blr_data,
    project_psd,
    step_sizes,
    symmetric_noise,
    triu_vector,
)
from dpclaims.analysis.accounting import Sampling, account_event, dp_event_for
from dpclaims.analysis.gaussian import clip_to_norm, flatten_natural, natural_dim
from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_finite_array,
    check_positive,
)
from dpclaims.audits.mechanism import PrivacyClaim, Sensitivity
from dpclaims.audits.whole_run import THREAT_MODELS

DPVI_VARIANTS = ("vanilla", "aligned", "natural")
SEP_READINGS = ("as-printed", "sep-invariant", "sep-invariant-recalibrated")
BATCHINGS = ("wor", "shuffle")


def _check_threat_model(tm: str) -> str:
    if tm not in THREAT_MODELS:
        raise ValueError(f"threat_model must be one of {THREAT_MODELS}, got {tm!r}")
    return tm


def _check_gaussian_delta(delta: float) -> float:
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must lie in (0, 1) for a Gaussian mechanism, got 0")
    return delta


def _check_flagged(data, name: str, n_cols: int | None):
    """(x (N, d), y (N,), flag (N,)) checked: finite, one length, flags in {-1, 0, 1}."""
    if not isinstance(data, tuple) or len(data) != 3:
        raise ValueError(f"data must be a tuple (x (N, d), y (N,), {name} (N,))")
    x = check_finite_array(data[0], "x", ndim=2)
    y = check_finite_array(data[1], "y", ndim=1)
    c = check_finite_array(data[2], name, ndim=1)
    if y.shape[0] != x.shape[0] or c.shape[0] != x.shape[0]:
        raise ValueError(f"x, y, {name} must have the same number of rows, got "
                         f"{x.shape[0]}, {y.shape[0]}, {c.shape[0]}")
    if n_cols is not None and x.shape[1] != n_cols:
        raise ValueError(f"x must have d = {n_cols} columns, got {x.shape[1]}")
    if not np.isin(c, (-1.0, 0.0, 1.0)).all():
        raise ValueError(f"{name} must hold 0 (ordinary), 1 (canary +u) or -1 (canary -u)")
    return x, y, c


# =========================================================================== DPVI


def dpvi_background(n_records: int, dim: int = 2, seed: int = 0):
    """Ordinary records for :class:`DPVIRun`: x = (0, z) with z ~ N(0, I_{d-1}), y ~
    Bernoulli(sigmoid(z_1)), no canary. Their loglik gradients have no e_1 component,
    so the canary direction u = e_1 is quiet (up to the prior's 1/N share)."""
    n = check_count(n_records, "n_records")
    d = check_count(dim, "dim", minimum=2)
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, 1:] = rng.standard_normal((n, d - 1))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x[:, 1]))).astype(float)
    return x, y, np.zeros(n)


@dataclass(frozen=True, eq=False)
class DPVIRun:
    """T steps of DPVI (module docstring) as an algorithm.

    Parameters
    ----------
    n_records : int
        N, the public size of the base data (the per-example prior and entropy share is
        1 / N; the Poisson rate is q).
    steps : int
        T >= 1.
    clip : float
        C > 0, the clipping norm of the per-example (joint / natural) gradients.
    noise_multiplier : float
        sigma > 0, the claimed multiplier.
    sampling_rate : float
        q in (0, 1): each record joins each batch independently with probability q.
    variant : {"vanilla", "aligned", "natural"}
        :mod:`dpclaims.algorithms.dpvi`'s variants (Sec. 3.1.1, eqs. 15, 16).
    threat_model : {"final-iterate", "full-trace"}
        ``run`` returns the final xi (n, 2d), or every released noisy sum (n, T, k),
        k = d (aligned) or 2d.
    dim : int
        d >= 2 features.
    lr : float
        SGD learning rate (> 0).
    delta : float
        In (0, 1); default 1e-5.
    noise_clip : float, optional
        Planted bug: the noise std is sigma * noise_clip instead of sigma * C.
    data_seed : int
        Seed of the background records (:func:`dpvi_background`).
    label : str, optional
        The name (default: built from the parameters).
    batches : {"mask", "gather"}
        How Poisson batches are drawn (:meth:`run`); the same law.

    Raises
    ------
    ValueError
        A non-positive C, sigma, lr or noise_clip; q outside (0, 1]; T < 1; d < 2; an
        unknown variant or threat model; delta outside (0, 1).
    """

    n_records: int = 20
    steps: int = 4
    clip: float = 1.0
    noise_multiplier: float = 2.0
    sampling_rate: float = 0.5
    variant: str = "aligned"
    threat_model: str = "full-trace"
    dim: int = 2
    lr: float = 0.05
    delta: float = 1e-5
    noise_clip: float | None = None
    data_seed: int = 0
    label: str | None = None
    batches: str = "mask"
    relation: str = field(default="add-remove", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_records", check_count(self.n_records, "n_records"))
        object.__setattr__(self, "steps", check_count(self.steps, "steps"))
        object.__setattr__(self, "clip", check_positive(self.clip, "clip"))
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "sampling_rate", _check_rate(self.sampling_rate))
        if self.variant not in DPVI_VARIANTS:
            raise ValueError(f"variant must be one of {DPVI_VARIANTS}, got {self.variant!r}")
        _check_threat_model(self.threat_model)
        object.__setattr__(self, "dim", check_count(self.dim, "dim", minimum=2))
        object.__setattr__(self, "lr", check_positive(self.lr, "lr"))
        object.__setattr__(self, "delta", _check_gaussian_delta(self.delta))
        if self.noise_clip is not None:
            object.__setattr__(self, "noise_clip", check_positive(self.noise_clip, "noise_clip"))
        if self.batches not in ("mask", "gather"):
            raise ValueError(f"batches must be 'mask' or 'gather', got {self.batches!r}")

    # ------------------------------------------------------------------ description

    @property
    def name(self) -> str:
        return self.label or (f"dpvi-{self.variant}[T={self.steps}, q={self.sampling_rate:g}, "
                              f"sigma={self.noise_multiplier:g}, C={self.clip:g}"
                              + (f", noise for C={self.noise_clip:g}" if self.noise_clip else "")
                              + f"; {self.threat_model}]")

    @cached_property
    def data(self):
        return dpvi_background(self.n_records, self.dim, self.data_seed)

    @property
    def family(self) -> MeanField:
        return MeanField(self.dim, Transform("softplus"))

    @property
    def model(self) -> LogisticRegression:
        return LogisticRegression(prior_std=10.0)

    @property
    def released_dim(self) -> int:
        """k: d for aligned, 2d for vanilla and natural (the jointly clipped vector)."""
        return released_dim(self.variant, self.family)

    @property
    def canary_direction(self) -> np.ndarray:
        """u = e_1 of the released space (the m_1 gradient)."""
        u = np.zeros(self.released_dim)
        u[0] = 1.0
        return u

    @property
    def effective_noise_multiplier(self) -> float:
        """The multiplier the noise really has: sigma (or sigma * noise_clip / C)."""
        if self.noise_clip is None:
            return self.noise_multiplier
        return self.noise_multiplier * self.noise_clip / self.clip

    @cached_property
    def claim(self) -> PrivacyClaim:
        """Add-remove, the Poisson-subsampled Gaussian composed T times, PLD epsilon."""
        event = dp_event_for(self.noise_multiplier, Sampling(
            "poisson", dataset_size=self.n_records,
            batch_size=self.sampling_rate * self.n_records, steps=self.steps))
        eps = account_event(event, self.delta, "add-remove").row("dp_accounting-pld").epsilon
        return PrivacyClaim(float(eps), self.delta, "add-remove", event)

    @property
    def step_sensitivity(self) -> Sensitivity:
        """C: adding a record adds one clipped vector of norm <= C to the released sum."""
        return Sensitivity(self.clip, 2)

    def gradient_canary(self, sign: float):
        """The record (x = 0, y = 0, is_canary = sign): clipped contribution sign C u."""
        return (np.zeros(self.dim), 0.0, float(np.sign(sign)))

    @property
    def input_canary(self):
        """An input-space record (x = 10 e_1, y = 1): its m_1 gradient is clipped to ~C."""
        x = np.zeros(self.dim)
        x[0] = 10.0
        return (x, 1.0, 0.0)

    @property
    def candidates(self) -> list:
        """Records for the property test: both gradient canaries, the input canary, its
        mirror (x = -10 e_1, y = 0) and a large record along e_2."""
        x2 = np.zeros(self.dim)
        x2[1] = 10.0
        return [self.gradient_canary(1), self.gradient_canary(-1), self.input_canary,
                (-self.input_canary[0], 0.0, 0.0), (x2, 0.0, 0.0)]

    # ------------------------------------------------------------------ running

    def _config(self) -> DPVIConfig:
        return DPVIConfig(variant=self.variant, clip=self.clip,
                          noise_multiplier=self.effective_noise_multiplier, steps=self.steps,
                          batch_size=None, sampling="poisson",
                          sampling_rate=self.sampling_rate, optimiser="sgd", lr=self.lr)

    def _release(self, xi, eta, psi, xb, yb, wb, s):
        k = self.released_dim
        return dp_step(self.variant, self.model, self.family, xi, eta, xb, yb, wb,
                       self.n_records, self.clip, self.effective_noise_multiplier, psi,
                       self.sampling_rate * self.n_records,
                       canary=s[:, None] * (self.clip * self.canary_direction[None, :k]),
                       canary_count=np.abs(s))

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of T steps: final xi (n_runs, 2d) or the released sums (n_runs,
        T, k), per ``threat_model``. Each step draws the Poisson batches, then eta (n, d),
        psi (n, k), as :func:`~dpclaims.algorithms.dpvi.run_dpvi` does. ``batches =
        "mask"`` (default) draws the batch as a mask over all N records (one uniform per
        record: the same law, no gather; fastest for small N); ``"gather"`` uses
        :func:`~dpclaims.algorithms.dpvi.draw_batches` (the reference's random stream).

        Raises ValueError on bad data (:meth:`check_data`) or n_runs < 1.
        """
        n = check_count(n_runs, "n_runs")
        x, y, c = self.check_data(data)
        config, fam = self._config(), self.family
        xi = np.broadcast_to(fam.init(0.0, 1.0, 1)[0], (n, fam.n_params)).copy()
        trace = (np.empty((n, self.steps, self.released_dim))
                 if self.threat_model == "full-trace" else None)
        n_rec = x.shape[0]
        xb, yb = np.broadcast_to(x, (n, n_rec, self.dim)), np.broadcast_to(y, (n, n_rec))
        for t in range(self.steps):
            if self.batches == "mask":      # every record, weight 1 if sampled (no gather)
                w = (rng.random((n, n_rec)) < self.sampling_rate).astype(float)
                bx, by, bc = xb, yb, np.broadcast_to(c, (n, n_rec))
            else:
                idx, w = draw_batches(rng, n, n_rec, config)
                bx, by, bc = x[idx], y[idx], c[idx]
            eta = rng.standard_normal((n, self.dim))
            psi = rng.standard_normal((n, self.released_dim))
            s = np.sum(bc * w, axis=1)
            out = self._release(xi, eta, psi, bx, by, w * (bc == 0), s)
            xi = xi + self.lr * out.direction
            if trace is not None:
                trace[:, t] = out.released
        return xi if trace is None else trace

    def check_data(self, data):
        """``(x (N', d), y (N',), is_canary (N',))`` checked (ValueError naming the part)."""
        x, y, c = _check_flagged(data, "is_canary", self.dim)
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("y must hold labels in {0, 1}")
        return x, y, c

    # ------------------------------------------------------------------ one step

    def random_states(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n states xi = (m, s): m ~ N(0, 4 I), s ~ U(-3, 2) (sigma_q from 0.05 to 2.1)."""
        return np.concatenate([2.0 * rng.standard_normal((n, self.dim)),
                               rng.uniform(-3.0, 2.0, (n, self.dim))], axis=1)

    def step(self, state, batch, rng: np.random.Generator) -> np.ndarray:
        """The released noisy sum (n, k) of one step from states (n, 2d) on all of
        ``batch`` (no sampling); draws eta then psi from ``rng``."""
        xi = check_finite_array(state, "state", ndim=2)
        x, y, c = self.check_data(batch)
        n = xi.shape[0]
        eta = rng.standard_normal((n, self.dim))
        psi = rng.standard_normal((n, self.released_dim))
        b = x.shape[0]
        out = self._release(xi, eta, psi, np.broadcast_to(x, (n, b, self.dim)),
                            np.broadcast_to(y, (n, b)), np.broadcast_to((c == 0) * 1.0, (n, b)),
                            np.full(n, c.sum()))
        return out.released

    def to_dict(self) -> dict:
        return {"N": self.n_records, "T": self.steps, "C": self.clip,
                "sigma": self.noise_multiplier, "q": self.sampling_rate,
                "variant": self.variant, "threat_model": self.threat_model, "d": self.dim,
                "optimiser": "sgd", "lr": self.lr, "delta": self.delta,
                "noise_clip": self.noise_clip,
                "effective_noise_multiplier": self.effective_noise_multiplier}


def _check_rate(q) -> float:
    q = float(q)
    if not (math.isfinite(q) and 0 < q < 1):  # DPVIConfig's Poisson rate: q = 1 is no sampling
        raise ValueError(f"sampling_rate must lie in (0, 1), got {q!r}")
    return q


# =========================================================================== DP-SEP


def dpsep_background(n_records: int, dim: int = 2, seed: int = 0):
    """Ordinary records for :class:`DPSEPPass`: x = (0, z), z ~ N(0, I_{d-1}), y = sign of
    a probit draw in {-1, +1}. A probit site is h = a x, precision b x x^T, so with
    x_1 = 0 the sites have no h_1 component: u = e_1 is quiet."""
    n = check_count(n_records, "n_records")
    d = check_count(dim, "dim", minimum=2)
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, 1:] = rng.standard_normal((n, d - 1))
    y = np.where(x[:, 1] + rng.standard_normal(n) > 0, 1.0, -1.0)
    return x, y, np.zeros(n)


@dataclass(frozen=True, eq=False)
class DPSEPPass:
    """T epochs of DP-SEP (module docstring) as an algorithm; every theta~_new released.

    Parameters
    ----------
    n_records : int
        N >= 2.
    epochs : int
        T >= 1 passes over a hidden random permutation.
    clip : float
        C > 0 (steps 6 and 9 of Algorithm 3).
    damping : float
        gamma > 0.
    noise_multiplier : float
        sigma > 0: step 8's noise std is sigma * 2 gamma C / N (Prop. 1's Delta), or
        sigma * 2 gamma C for "sep-invariant-recalibrated".
    reading : {"as-printed", "sep-invariant", "sep-invariant-recalibrated"}
    threat_model : {"full-trace", "final-iterate"}
        Every theta~_new (n, T N, p), or the final theta_q (n, p).
    dim : int
        d >= 2 (p = d + d(d + 1) / 2).
    delta : float
    prior_scale : float
        theta_0 = prior_scale * (0, ..., 0; I) (precision prior_scale I): ||theta_0|| <= C
        is checked (Algorithm 3 requires it).

    Raises
    ------
    ValueError
        N < 2, T < 1, d < 2, non-positive C, gamma, sigma or prior_scale, an unknown
        reading or threat model, delta outside (0, 1), ||theta_0|| > C.
    """

    n_records: int = 10
    epochs: int = 1
    clip: float = 1.0
    damping: float = 1.0
    noise_multiplier: float = 2.0
    reading: str = "as-printed"
    threat_model: str = "full-trace"
    dim: int = 2
    delta: float = 1e-5
    prior_scale: float = 0.5
    data_seed: int = 0
    label: str | None = None
    relation: str = field(default="replace-one", init=False)
    trace_reduction: str = field(default="max-per-epoch", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_records", check_count(self.n_records, "n_records", minimum=2))
        object.__setattr__(self, "epochs", check_count(self.epochs, "epochs"))
        for name in ("clip", "damping", "noise_multiplier", "prior_scale"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        if self.reading not in SEP_READINGS:
            raise ValueError(f"reading must be one of {SEP_READINGS}, got {self.reading!r}")
        _check_threat_model(self.threat_model)
        object.__setattr__(self, "dim", check_count(self.dim, "dim", minimum=2))
        object.__setattr__(self, "delta", _check_gaussian_delta(self.delta))
        if np.linalg.norm(self.theta_0) > self.clip * (1 + 1e-12):
            raise ValueError(f"||theta_0|| = {np.linalg.norm(self.theta_0):.4g} exceeds C = "
                             f"{self.clip} (Algorithm 3 needs it bounded by C): lower "
                             "prior_scale")

    @property
    def name(self) -> str:
        return self.label or (f"dpsep-pass[{self.reading}; N={self.n_records}, "
                              f"T={self.epochs}, sigma={self.noise_multiplier:g}; "
                              f"{self.threat_model}]")

    @property
    def params(self) -> DPSEPParams:
        return DPSEPParams(clipping_norm=self.clip, damping=self.damping,
                           noise_multiplier=self.noise_multiplier, reading=self.reading)

    @property
    def theta_0(self) -> np.ndarray:
        d = self.dim
        return flatten_natural(np.zeros(d), self.prior_scale * np.eye(d))

    @property
    def p(self) -> int:
        return natural_dim(self.dim)

    @cached_property
    def data(self):
        return dpsep_background(self.n_records, self.dim, self.data_seed)

    @property
    def epoch_length(self) -> int:
        return self.n_records

    @property
    def canary_direction(self) -> np.ndarray:
        u = np.zeros(self.p)
        u[0] = 1.0
        return u

    @cached_property
    def claim(self) -> PrivacyClaim:
        """Replace-one, one Gaussian(sigma) per epoch: epsilon exact (Balle & Wang 2018)."""
        event = dp_event_for(self.noise_multiplier, Sampling(
            "shuffle", dataset_size=self.n_records, batch_size=1, epochs=self.epochs))
        eps = dp_accounting.get_epsilon_gaussian(self.noise_multiplier / math.sqrt(self.epochs),
                                                 self.delta)
        return PrivacyClaim(float(eps), self.delta, "replace-one", event)

    @property
    def step_sensitivity(self) -> Sensitivity:
        """The sensitivity the step's noise is calibrated to: Prop. 1's "Delta_theta_new =
        2 gamma C / N" for "as-printed" and "sep-invariant" (the paper's noise, the
        planted bug), 2 gamma C for "sep-invariant-recalibrated" (noise recalibrated to
        SEP's own update, :meth:`DPSEPParams.true_sensitivity_bound`)."""
        n = self.n_records
        if self.reading == "sep-invariant-recalibrated":
            return Sensitivity(self.params.true_sensitivity_bound(n), 2)
        return Sensitivity(self.params.claimed_sensitivity(n), 2)

    @property
    def _weights(self) -> tuple[float, float]:
        """(weight of theta_fn, weight of theta_f) in theta_new under the reading."""
        g, n = self.damping, self.n_records
        return (g / n, n - g / n) if self.reading == "as-printed" else (g, n - g)

    def gradient_canary(self, sign: float):
        """The site canary (x = 0, y = 1, site_canary = sign): clipped site sign C e_1."""
        return (np.zeros(self.dim), 1.0, float(np.sign(sign)))

    @property
    def candidates(self) -> list:
        """Records for the property test: both site canaries and records 5 e_j, y = +-1
        (their sites are clipped to norm C)."""
        out = [self.gradient_canary(1), self.gradient_canary(-1)]
        for j in range(self.dim):
            e = np.zeros(self.dim)
            e[j] = 5.0
            out += [(e, 1.0, 0.0), (e, -1.0, 0.0)]
        return out

    def check_data(self, data):
        x, y, c = _check_flagged(data, "site_canary", self.dim)
        if not np.isin(y, (-1.0, 1.0)).all():
            raise ValueError("y must hold labels in {-1, +1} (probit)")
        return x, y, c

    def _sites(self, theta_f, x, y, c):
        """Clipped sites (n, p) of records (x (n, d), y (n,), c (n,)) at states theta_f."""
        cav = self.theta_0 + (self.n_records - 1) * theta_f
        mean, cov, _ = cavity_moments(cav, self.params.pd_floor)
        site = clip_to_norm(Probit().site(mean, cov, x, y), self.clip)
        return np.where((c != 0)[:, None], c[:, None] * self.clip * self.canary_direction, site)

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of T epochs (Algorithm 3 with the reading's update).

        Each epoch draws a permutation per run (``rng.permuted``), then each step the noise
        (n, p). Returns every theta~_new (n_runs, T N, p) or the final theta_q (n_runs, p).

        Raises ValueError on bad data or n_runs < 1.
        """
        n = check_count(n_runs, "n_runs")
        x, y, c = self.check_data(data)
        N, p = x.shape[0], self.p
        std = self.params.noise_std(self.n_records)
        theta_f = np.zeros((n, p))
        trace = (np.empty((n, self.epochs * N, p)) if self.threat_model == "full-trace"
                 else None)
        for t in range(self.epochs):
            perms = rng.permuted(np.tile(np.arange(N), (n, 1)), axis=1)
            for k in range(N):
                i = perms[:, k]
                site = self._sites(theta_f, x[i], y[i], c[i])
                new = dpsep_theta_new(theta_f, site, self.theta_0, self.n_records, self.params)
                new = new + std * rng.standard_normal((n, p))
                if trace is not None:
                    trace[:, t * N + k] = new
                theta_f = clip_to_norm((new - self.theta_0) / self.n_records, self.clip)
        return trace if trace is not None else self.theta_0 + self.n_records * theta_f

    def updates(self, releases) -> np.ndarray:
        """Residuals theta~_new - (w_f theta_f + theta_0) (n, S, p), theta_f =
        clip((previous theta~_new - theta_0) / N, C) (0 before the first step): the
        record's own w_n theta_fn plus noise, read off the trace (post-processing)."""
        r = np.asarray(releases, dtype=float)
        prev = np.concatenate([np.broadcast_to(self.theta_0, (r.shape[0], 1, r.shape[2])),
                               r[:, :-1]], axis=1)
        theta_f = clip_to_norm((prev - self.theta_0) / self.n_records, self.clip)
        return r - self._weights[1] * theta_f - self.theta_0

    def random_states(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n sites theta_f (n, p) of norm <= C: clip(N(0, (C/2)^2 I))."""
        return clip_to_norm(0.5 * self.clip * rng.standard_normal((n, self.p)), self.clip)

    def step(self, state, batch, rng: np.random.Generator) -> np.ndarray:
        """theta~_new (n, p) of one step from sites theta_f (n, p) processing ``batch``'s
        single record (Algorithm 3, steps 4-8)."""
        theta_f = check_finite_array(state, "state", ndim=2)
        x, y, c = self.check_data(batch)
        if x.shape[0] != 1:
            raise ValueError(f"a DP-SEP step processes one record, got a batch of {x.shape[0]}")
        n = theta_f.shape[0]
        site = self._sites(theta_f, np.repeat(x, n, 0), np.repeat(y, n), np.repeat(c, n))
        new = dpsep_theta_new(theta_f, site, self.theta_0, self.n_records, self.params)
        return new + self.params.noise_std(self.n_records) * rng.standard_normal(new.shape)

    def to_dict(self) -> dict:
        return {"N": self.n_records, "T": self.epochs, "C": self.clip, "gamma": self.damping,
                "sigma": self.noise_multiplier, "reading": self.reading,
                "noise_std": self.params.noise_std(self.n_records),
                "threat_model": self.threat_model, "d": self.dim, "delta": self.delta}


# =========================================================================== VIPS


def vips_background(n_records: int, dim: int = 2, seed: int = 0):
    """Ordinary BLR records for :class:`VIPSRun`: x = (0, +-1, 0...) (unit norm, x_1 = 0),
    y ~ Bernoulli(sigmoid(2 x_2)). Their s1 has no e_1 component."""
    n = check_count(n_records, "n_records")
    d = check_count(dim, "dim", minimum=2)
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, 1] = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * x[:, 1]))).astype(float)
    return x, y


@dataclass(frozen=True, eq=False)
class VIPSRun:
    """J iterations of VIPS for Bayesian logistic regression (module docstring).

    Parameters
    ----------
    n_records : int
        N.
    batch_size : int
        S, 1 <= S <= N; for ``batching="shuffle"`` S must divide N.
    epochs : int
        E >= 1: J = E N / S iterations.
    noise_multiplier : float
        sigma > 0: noise std sigma Delta_s1 on s1, sigma Delta_s2 on triu(s2).
    batching : {"wor", "shuffle"}
    threat_model : {"full-trace", "final-iterate"}
        Every released (s1~, triu(s2~)) (n, J, d + d(d+1)/2), or the final (mu,
        triu(<m m^T>)) (n, d + d(d+1)/2).
    dim, delta, prior_precision, tau0, kappa, psd_floor
        As :func:`~dpclaims.algorithms.vips_blr.run_vips_blr`.

    Raises
    ------
    ValueError
        S > N, S not dividing N for "shuffle", E < 1, sigma <= 0, an unknown batching or
        threat model, delta outside (0, 1), kappa outside (0.5, 1].
    """

    n_records: int = 20
    batch_size: int = 10
    epochs: int = 2
    noise_multiplier: float = 2.0
    batching: str = "wor"
    threat_model: str = "full-trace"
    dim: int = 2
    delta: float = 1e-5
    prior_precision: float = 4.0
    tau0: float = 1.0
    kappa: float = 0.7
    psd_floor: float = 1e-4
    data_seed: int = 0
    label: str | None = None
    relation: str = field(default="replace-one", init=False)

    def __post_init__(self) -> None:
        n = check_count(self.n_records, "n_records", minimum=2)
        object.__setattr__(self, "n_records", n)
        s = check_count(self.batch_size, "batch_size")
        if s > n:
            raise ValueError(f"batch_size S = {s} exceeds N = {n}")
        object.__setattr__(self, "batch_size", s)
        object.__setattr__(self, "epochs", check_count(self.epochs, "epochs"))
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        if self.batching not in BATCHINGS:
            raise ValueError(f"batching must be one of {BATCHINGS}, got {self.batching!r}")
        if self.batching == "shuffle" and n % s:
            raise ValueError(f"a shuffled partition needs S = {s} to divide N = {n}")
        if (self.epochs * n) % s:
            raise ValueError(f"E N / S = {self.epochs} x {n} / {s} is not an integer")
        _check_threat_model(self.threat_model)
        object.__setattr__(self, "dim", check_count(self.dim, "dim", minimum=2))
        object.__setattr__(self, "delta", _check_gaussian_delta(self.delta))
        check_positive(self.prior_precision, "prior_precision")
        step_sizes(1, self.tau0, self.kappa)

    @property
    def name(self) -> str:
        return self.label or (f"vips-blr[{self.batching}; N={self.n_records}, "
                              f"S={self.batch_size}, E={self.epochs}, "
                              f"sigma={self.noise_multiplier:g}; {self.threat_model}]")

    @property
    def iterations(self) -> int:
        """J = E N / S."""
        return self.epochs * self.n_records // self.batch_size

    @cached_property
    def data(self):
        return vips_background(self.n_records, self.dim, self.data_seed)

    @property
    def input_canary(self):
        """Records (e_1, y = 0) and (e_1, y = 1): s1 differs by e_1 / S = Delta_s1 e_1."""
        e1 = np.zeros(self.dim)
        e1[0] = 1.0
        return ((e1, 0.0), (e1, 1.0))

    @property
    def candidates(self) -> list:
        """Records for the property test: +-e_1, +-e_2 with both labels."""
        out = []
        for j in range(2):
            for sgn in (1.0, -1.0):
                e = np.zeros(self.dim)
                e[j] = sgn
                out += [(e, 0.0), (e, 1.0)]
        return out

    @property
    def sensitivities(self) -> tuple[float, float]:
        """(Delta_s1, Delta_s2) = (1/S, sqrt(2)/(4S)), the tight bounds."""
        return blr_sensitivities(self.batch_size, "tight")

    @cached_property
    def claim(self) -> PrivacyClaim:
        """Replace-one, WOR(N, S) of a Gaussian(sigma / sqrt 2), J times; RDP epsilon."""
        event = dp_event_for(self.noise_multiplier / math.sqrt(2.0), Sampling(
            "without-replacement", dataset_size=self.n_records, batch_size=self.batch_size,
            steps=self.iterations))
        eps = account_event(event, self.delta, "replace-one").row("dp_accounting-rdp").epsilon
        return PrivacyClaim(float(eps), self.delta, "replace-one", event)

    @property
    def performed_is_shuffle(self) -> bool:
        """True for "shuffle": :meth:`performed_event` is then the per-epoch composition,
        exact for a known pass order and an upper bound for a hidden one."""
        return self.batching == "shuffle"

    @property
    def performed_event(self):
        """The DpEvent of the sampling really performed, when it differs from the claim's:
        for "shuffle", one unamplified Gaussian(sigma / sqrt 2) per epoch (exact when the
        pass order is known to the adversary, an upper bound for a hidden shuffle;
        :class:`~dpclaims.analysis.accounting.Sampling`). None for "wor"."""
        if self.batching == "wor":
            return None
        return dp_event_for(self.noise_multiplier / math.sqrt(2.0), Sampling(
            "shuffle", dataset_size=self.n_records, batch_size=self.batch_size,
            epochs=self.epochs))

    @property
    def step_sensitivity(self) -> Sensitivity:
        """sqrt 2 for the noise-scaled release of :meth:`step`.

        s1 and s2 get noise of different scales (sigma Delta_s1, sigma Delta_s2), so one
        L2 bound on the joint (s1, triu(s2)) says nothing about the claim. Each block
        divided by the sensitivity its noise is calibrated to has noise N(0, sigma^2 I);
        the claim's one Gaussian of multiplier sigma / sqrt 2 per step is then exactly an
        L2 sensitivity of sqrt 2 of the scaled release (each block's change at most 1)."""
        return Sensitivity(math.sqrt(2.0), 2)

    def check_data(self, data):
        if not isinstance(data, tuple) or len(data) != 2:
            raise ValueError("data must be a tuple (x (N, d), y (N,))")
        x, y = check_blr_data(*data)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape (N, {self.dim}), got {x.shape}")
        return x, y

    def _release(self, x, y, mm, rng):
        """(s1~, s2~) of batches x (n, S, d), y (n, S) at second moments mm (n, d, d)."""
        s1, s2 = _statistics(x, y, mm)
        d1, d2 = self.sensitivities
        n = x.shape[0]
        s1 = s1 + self.noise_multiplier * d1 * rng.standard_normal(s1.shape)
        s2 = s2 + symmetric_noise(rng, self.dim, self.noise_multiplier * d2, size=(n,))
        return s1, s2

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of J iterations (Algorithms 4, 5 with the batching).

        Returns every released [s1~, triu(s2~)] (n_runs, J, d + d(d+1)/2), or the final
        [mu, triu(<m m^T>)] (n_runs, d + d(d+1)/2). Raises ValueError on bad data.
        """
        n = check_count(n_runs, "n_runs")
        x, y = self.check_data(data)
        N, S, d = x.shape[0], self.batch_size, self.dim
        rho = step_sizes(self.iterations, self.tau0, self.kappa)
        alpha = self.prior_precision
        nu2 = np.broadcast_to(alpha * np.eye(d), (n, d, d)).copy()
        nu1 = np.zeros((n, d))
        mean, cov, mm = _moments_from_nu(nu1, nu2)
        k = d + d * (d + 1) // 2
        trace = np.empty((n, self.iterations, k)) if self.threat_model == "full-trace" else None
        per_epoch = N // S
        perm = None
        for j in range(self.iterations):
            if self.batching == "wor":
                batch = rng.random((n, N)).argpartition(S - 1, axis=1)[:, :S]
            else:
                if j % per_epoch == 0:
                    perm = rng.permuted(np.tile(np.arange(N), (n, 1)), axis=1)
                batch = perm[:, (j % per_epoch) * S:(j % per_epoch + 1) * S]
            s1, s2 = self._release(x[batch], y[batch], mm, rng)
            if trace is not None:
                trace[:, j] = np.concatenate([s1, triu_vector(s2)], axis=1)
            s2, _ = project_psd(s2, self.psd_floor)
            nu1 = (1 - rho[j]) * nu1 + rho[j] * N * s1
            nu2 = (1 - rho[j]) * nu2 + rho[j] * (N * s2 + alpha * np.eye(d))
            mean, cov, mm = _moments_from_nu(nu1, nu2)
        if trace is not None:
            return trace
        return np.concatenate([mean, triu_vector(mm)], axis=1)

    def random_states(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n second moments <m m^T> (n, d, d) flattened (n, d^2): A A^T + 0.01 I, A ~ N(0, I)."""
        a = rng.standard_normal((n, self.dim, self.dim))
        return (a @ np.swapaxes(a, 1, 2) + 0.01 * np.eye(self.dim)).reshape(n, -1)

    def step(self, state, batch, rng: np.random.Generator) -> np.ndarray:
        """The noise-scaled release [s1~ / Delta_s1, triu(s2~) / Delta_s2] (n, d +
        d(d+1)/2) of the S-record ``batch`` at second moments ``state`` (n, d^2): each
        block in units of the sensitivity its noise is calibrated to
        (:attr:`step_sensitivity`)."""
        mm = check_finite_array(state, "state", ndim=2).reshape(-1, self.dim, self.dim)
        x, y = self.check_data(batch)
        if x.shape[0] != self.batch_size:
            raise ValueError(f"a VIPS step averages S = {self.batch_size} records, got "
                             f"{x.shape[0]}")
        n = mm.shape[0]
        s1, s2 = self._release(np.broadcast_to(x, (n,) + x.shape),
                               np.broadcast_to(y, (n,) + y.shape), mm, rng)
        d1, d2 = self.sensitivities
        return np.concatenate([s1 / d1, triu_vector(s2) / d2], axis=1)

    def to_dict(self) -> dict:
        return {"N": self.n_records, "S": self.batch_size, "E": self.epochs,
                "J": self.iterations, "sigma": self.noise_multiplier,
                "batching": self.batching, "threat_model": self.threat_model, "d": self.dim,
                "delta": self.delta, "sensitivities": list(self.sensitivities)}
