"""DPVI as an algorithm (a whole run with a whole-run claim).

It follows the algorithm protocol of :mod:`dpclaims.audits.whole_run`: a
``claim`` about the whole run (its DpEvent), a ``threat_model`` and a ``run(data,
rng, n_runs)`` vectorised over runs (a Python loop over the steps only), with
``step`` (one noisy release from given states, for the sensitivity property test),
a canary, and planted-bug switches.

:class:`DPVIRun`
    Jälkö, Prediger, Honkela & Kaski, DPVIm, ``../shared/papers/dpvim.txt``, Sec. 3.1.1,
    Algorithm 1; variants "vanilla", "aligned", "natural" of
    :mod:`dpclaims.algorithms.dpvi.dpvi`. T steps of DP-SGD on the ELBO of logistic regression,
    Poisson(q) batches, plain SGD
    from a public xi_0. Data ``(x (N, d), y (N,), is_canary (N,))``; a record with
    ``is_canary = s`` in {-1, +1} is the gradient canary: its clipped per-example
    contribution to the released vector is s C u (u = e_1 of the released space).
    Claim (add-remove): ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(sigma)), T)``, epsilon from dp_accounting's PLD accountant. Planted
    bug ``noise_clip``: the noise std is sigma * noise_clip while the clip is C (the
    noise not rescaled when the clipping norm changed: effective multiplier
    sigma * noise_clip / C). Option ``batching="fixed-size"``: each step draws exactly
    B = round(q N) records without replacement (as d3p 0.2.0's ``DPSVI`` does) while the
    claim stays the Poisson add/remove accounting: the sampling-accounting flaw of issue 40
    (an added record can push an aligned-against record out of a batch: the batch sum
    moves by 2C).
"""


from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from dpclaims.algorithms.dpvi.dpvi import (
    DPVIConfig,
    LogisticRegression,
    MeanField,
    Transform,
    dp_step,
    draw_batches,
    released_dim,
)
from dpclaims.analysis.accounting import Sampling, account_event, dp_event_for
from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
)
from dpclaims.audits.mechanism import PrivacyClaim, Sensitivity
from dpclaims.audits.whole_run import (
    WholeRunAlgorithm,
    check_canary_signs,
    check_flagged,
    check_gaussian_delta,
    check_sampling_rate,
    check_threat_model,
)

DPVI_VARIANTS = ("vanilla", "aligned", "natural")


# =========================================================================== DPVI


def dpvi_background(n_records: int, dim: int = 2, seed: int = 0, quiet_tail: int = 0):
    """Ordinary records for :class:`DPVIRun`: x = (0, z, 0) with z ~ N(0, I_{d-1-t}), y ~
    Bernoulli(sigmoid(z_1)), no canary, t = ``quiet_tail`` trailing zero features. Their
    loglik gradients have no e_1 component (nor any in the last t coordinates), so the
    canary direction u = e_1 is quiet (up to the prior's 1/N share), and so are the t
    coordinates of the one-run audit's gradient canaries (:class:`DPVIRun`,
    ``canary_slots``). With t = 0 the same numbers as before the parameter existed."""
    n = check_count(n_records, "n_records")
    t = check_count(quiet_tail, "quiet_tail", minimum=0)
    d = check_count(dim, "dim", minimum=2 + t)
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, 1:d - t] = rng.standard_normal((n, d - 1 - t))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x[:, 1]))).astype(float)
    return x, y, np.zeros(n)


@dataclass(frozen=True, eq=False)
class DPVIRun(WholeRunAlgorithm):
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
        :mod:`dpclaims.algorithms.dpvi.dpvi`'s variants (Sec. 3.1.1, eqs. 15, 16).
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
    batching : {"poisson", "fixed-size"}
        The sampler performed: Poisson(q) batches, or exactly B = round(q N) records
        drawn afresh without replacement each step (of the records given to ``run``).
        The claim is the Poisson add/remove accounting either way (for "fixed-size" a
        planted accounting flaw).
    canary_slots : int
        t >= 0: the last t of the d features are zero in the background records and hold
        the one-run audit's Dirac gradient canaries (:meth:`run_gradient_canaries`; d >=
        2 + t). 0 (default): no one-run audit (Poisson batches only).

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
    batching: str = "poisson"
    canary_slots: int = 0
    relation: str = field(default="add-remove", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_records", check_count(self.n_records, "n_records"))
        object.__setattr__(self, "steps", check_count(self.steps, "steps"))
        object.__setattr__(self, "clip", check_positive(self.clip, "clip"))
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "sampling_rate", check_sampling_rate(self.sampling_rate))
        if self.variant not in DPVI_VARIANTS:
            raise ValueError(f"variant must be one of {DPVI_VARIANTS}, got {self.variant!r}")
        check_threat_model(self.threat_model)
        object.__setattr__(self, "canary_slots",
                           check_count(self.canary_slots, "canary_slots", minimum=0))
        object.__setattr__(self, "dim", check_count(self.dim, "dim",
                                                    minimum=2 + self.canary_slots))
        object.__setattr__(self, "lr", check_positive(self.lr, "lr"))
        object.__setattr__(self, "delta", check_gaussian_delta(self.delta))
        if self.noise_clip is not None:
            object.__setattr__(self, "noise_clip", check_positive(self.noise_clip, "noise_clip"))
        if self.batches not in ("mask", "gather"):
            raise ValueError(f"batches must be 'mask' or 'gather', got {self.batches!r}")
        if self.batching not in ("poisson", "fixed-size"):
            raise ValueError(f"batching must be 'poisson' or 'fixed-size', got "
                             f"{self.batching!r}")
        if self.batching == "fixed-size" and round(self.sampling_rate * self.n_records) < 1:
            raise ValueError(f"fixed-size batches need B = round(q N) >= 1, got q = "
                             f"{self.sampling_rate:g}, N = {self.n_records}")

    # ------------------------------------------------------------------ description

    @property
    def name(self) -> str:
        fixed = "" if self.batching == "poisson" else f"fixed-size B={self.batch_size}, "
        return self.label or (f"dpvi-{self.variant}[{fixed}T={self.steps}, "
                              f"q={self.sampling_rate:g}, "
                              f"sigma={self.noise_multiplier:g}, C={self.clip:g}"
                              + (f", noise for C={self.noise_clip:g}" if self.noise_clip else "")
                              + f"; {self.threat_model}]")

    @cached_property
    def data(self):
        return dpvi_background(self.n_records, self.dim, self.data_seed, self.canary_slots)

    @property
    def gradient_canary_slots(self) -> int:
        """How many Dirac gradient canaries a run takes (``canary_slots``; 0 with
        fixed-size batches, whose sampler would have to draw the canaries too)."""
        return self.canary_slots if self.batching == "poisson" else 0

    def gradient_canary_coordinates(self, m: int) -> np.ndarray:
        """j(i) = d - t + i: canary i's coordinate of the released sum (the m_j gradient;
        also m_j of the final xi)."""
        m = check_count(m, "m")
        if m > self.gradient_canary_slots:
            raise ValueError(f"{self.name}: room for {self.gradient_canary_slots} gradient "
                             f"canaries, asked for {m}")
        return self.dim - self.canary_slots + np.arange(m)

    @property
    def batch_size(self) -> int | None:
        """B = round(q N) for fixed-size batches; None for Poisson batches."""
        if self.batching == "poisson":
            return None
        return int(round(self.sampling_rate * self.n_records))

    @property
    def sampling(self) -> Sampling:
        """The sampler performed: Poisson(q), or exactly B of N without replacement."""
        if self.batching == "poisson":
            return Sampling("poisson", dataset_size=self.n_records,
                            batch_size=self.sampling_rate * self.n_records, steps=self.steps)
        return Sampling("without-replacement", dataset_size=self.n_records,
                        batch_size=self.batch_size, steps=self.steps)

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

    def _release(self, xi, eta, psi, xb, yb, wb, s, extra=None):
        """One step's release; ``s`` (n,) the flagged canary records' signs summed,
        ``extra`` the one-run canaries' (contribution (n, k), count (n,)) or None."""
        k = self.released_dim
        canary = s[:, None] * (self.clip * self.canary_direction[None, :k])
        count = np.abs(s)
        if extra is not None:
            canary, count = canary + extra[0], count + extra[1]
        return dp_step(self.variant, self.model, self.family, xi, eta, xb, yb, wb,
                       self.n_records, self.clip, self.effective_noise_multiplier, psi,
                       self.sampling_rate * self.n_records, canary=canary,
                       canary_count=count)

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of T steps: final xi (n_runs, 2d) or the released sums (n_runs,
        T, k), per ``threat_model``. Each step draws the Poisson batches, then eta (n, d),
        psi (n, k), as :func:`~dpclaims.algorithms.dpvi.dpvi.run_dpvi` does. ``batches =
        "mask"`` (default) draws the batch as a mask over all N records (one uniform per
        record: the same law, no gather; fastest for small N); ``"gather"`` uses
        :func:`~dpclaims.algorithms.dpvi.dpvi.draw_batches` (the reference's random stream).

        Raises ValueError on bad data (:meth:`check_data`) or n_runs < 1.
        """
        return self._run(data, rng, check_count(n_runs, "n_runs"))

    def run_gradient_canaries(self, data, rng: np.random.Generator, signs) -> np.ndarray:
        """R runs on ``data`` with m Dirac gradient canaries (the one-run audit's capability,
        :class:`~dpclaims.audits.capabilities.HasGradientCanaries`).

        Parameters
        ----------
        data : (x (N', d), y (N',), is_canary (N',))
            As for :meth:`run`.
        rng : numpy Generator
        signs : array (R, m) in {-1, 0, +1}
            Canary i of run r contributes ``signs[r, i] * C * e_j(i)`` (j(i) from
            :meth:`gradient_canary_coordinates`) to the released sum of every step that
            samples it: each canary joins each step's batch independently with probability
            q, as every record does (a uniform per canary and step, drawn after the
            records' batch). 0: the canary is not in the data.

        Returns
        -------
        ndarray
            As :meth:`run`: (R, T, k) or (R, 2d).

        Raises
        ------
        ValueError
            signs not (R, m) with values in {-1, 0, 1}, m above ``gradient_canary_slots``,
            bad data.
        """
        signs = check_canary_signs(signs)
        coords = self.gradient_canary_coordinates(signs.shape[1])
        return self._run(data, rng, check_count(signs.shape[0], "R"), (signs, coords))

    def _run(self, data, rng: np.random.Generator, n: int, canaries=None) -> np.ndarray:
        x, y, c = self.check_data(data)
        config, fam = self._config(), self.family
        xi = np.broadcast_to(fam.init(0.0, 1.0, 1)[0], (n, fam.n_params)).copy()
        trace = (np.empty((n, self.steps, self.released_dim))
                 if self.threat_model == "full-trace" else None)
        n_rec = x.shape[0]
        xb, yb = np.broadcast_to(x, (n, n_rec, self.dim)), np.broadcast_to(y, (n, n_rec))
        for t in range(self.steps):
            if self.batching == "fixed-size":   # exactly B records, without replacement
                b = min(self.batch_size, n_rec)
                pick = np.argpartition(rng.random((n, n_rec)), b - 1, axis=1)[:, :b]
                w = np.zeros((n, n_rec))
                np.put_along_axis(w, pick, 1.0, axis=1)
                bx, by, bc = xb, yb, np.broadcast_to(c, (n, n_rec))
            elif self.batches == "mask":    # every record, weight 1 if sampled (no gather)
                w = (rng.random((n, n_rec)) < self.sampling_rate).astype(float)
                bx, by, bc = xb, yb, np.broadcast_to(c, (n, n_rec))
            else:
                idx, w = draw_batches(rng, n, n_rec, config)
                bx, by, bc = x[idx], y[idx], c[idx]
            extra = None
            if canaries is not None:        # the one-run audit's Dirac canaries
                signs, coords = canaries
                sampled = signs * (rng.random(signs.shape) < self.sampling_rate)
                extra = np.zeros((n, self.released_dim))
                extra[:, coords] = self.clip * sampled
                extra = (extra, np.abs(sampled).sum(axis=1))
            eta = rng.standard_normal((n, self.dim))
            psi = rng.standard_normal((n, self.released_dim))
            s = np.sum(bc * w, axis=1)
            out = self._release(xi, eta, psi, bx, by, w * (bc == 0), s, extra)
            xi = xi + self.lr * out.direction
            if trace is not None:
                trace[:, t] = out.released
        return xi if trace is None else trace

    def check_data(self, data):
        """``(x (N', d), y (N',), is_canary (N',))`` checked (ValueError naming the part)."""
        x, y, c = check_flagged(data, "is_canary", self.dim)
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
                "batching": self.batching, "B": self.batch_size,
                "optimiser": "sgd", "lr": self.lr, "delta": self.delta,
                "noise_clip": self.noise_clip,
                "effective_noise_multiplier": self.effective_noise_multiplier,
                **({"canary_slots": self.canary_slots} if self.canary_slots else {})}
