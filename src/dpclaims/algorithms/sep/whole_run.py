"""DP-SEP as an algorithm (a whole run with a whole-run claim).

It follows the algorithm protocol of :mod:`dpclaims.audits.whole_run`: a
``claim`` about the whole run (its DpEvent), a ``threat_model`` and a ``run(data,
rng, n_runs)`` vectorised over runs (a Python loop over the steps only), with
``step`` (one noisy release from given states, for the sensitivity property test),
a canary, and planted-bug switches.

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

    One-run audits (``canary_slots = m_max``; :meth:`DPSEPPass.run_gradient_canaries`,
    the capability :class:`~dpclaims.audits.capabilities.HasGradientCanaries`): the last t
    features are zero in the background records, so every ordinary site (a probit site is
    h = a x, precision pi x x^T; Probit) is zero in the natural-parameter coordinates
    of those features, h_j and Lambda_jk for quiet j, k: t + t(t + 1)/2 coordinates,
    the smallest t that holds ``canary_slots``. The N records of a pass are N - m_max
    background records and m_max slot records; slot i holds canary i, a site canary
    whose clipped site theta_fn is sign_i C e_j(i) (Algorithm 3 step 6; Prop. 1 holds
    for every site of norm <= C), or an empty record (x = 0: site exactly 0).
"""


from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import dp_accounting
import numpy as np

from dpclaims.algorithms.sep.likelihoods import Probit
from dpclaims.algorithms.sep.sep import DPSEPParams, cavity_moments, dpsep_theta_new
from dpclaims.analysis.accounting import Sampling, dp_event_for
from dpclaims.analysis.gaussian import clip_to_norm, flatten_natural, natural_dim
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
    check_threat_model,
)

SEP_READINGS = ("as-printed", "sep-invariant", "sep-invariant-recalibrated")


# =========================================================================== DP-SEP


def dpsep_background(n_records: int, dim: int = 2, seed: int = 0, quiet_tail: int = 0):
    """Ordinary records for :class:`DPSEPPass`: x = (0, z, 0), z ~ N(0, I_{d-1-t}), y =
    sign of a probit draw in {-1, +1}, t = ``quiet_tail`` trailing zero features. A probit
    site is h = a x, precision b x x^T, so with x_1 = 0 the sites have no h_1 component
    (u = e_1 is quiet), and no component in h_j or Lambda_jk for a quiet feature j (the
    one-run audit's canary coordinates). With t = 0 the same numbers as before the
    parameter existed."""
    n = check_count(n_records, "n_records")
    t = check_count(quiet_tail, "quiet_tail", minimum=0)
    d = check_count(dim, "dim", minimum=2 + t)
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, 1:d - t] = rng.standard_normal((n, d - 1 - t))
    y = np.where(x[:, 1] + rng.standard_normal(n) > 0, 1.0, -1.0)
    return x, y, np.zeros(n)


@dataclass(frozen=True, eq=False)
class DPSEPPass(WholeRunAlgorithm):
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
    canary_slots : int
        m_max >= 0: room for the one-run audit's site canaries
        (:meth:`run_gradient_canaries`). The last t features (the smallest t with
        t + t(t+1)/2 >= m_max; d >= 2 + t) are zero in the background, whose N - m_max
        records every run completes with m_max slot records (empty in :meth:`run`), so a
        pass still covers N records. 0 (default): no slots, the same numbers as before.

    Raises
    ------
    ValueError
        N < 2, T < 1, d < 2, non-positive C, gamma, sigma or prior_scale, an unknown
        reading or threat model, delta outside (0, 1), ||theta_0|| > C, canary_slots < 0,
        N <= canary_slots, d too small for canary_slots.
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
    canary_slots: int = 0
    relation: str = field(default="replace-one", init=False)
    trace_reduction: str = field(default="max-per-epoch", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_records", check_count(self.n_records, "n_records", minimum=2))
        object.__setattr__(self, "epochs", check_count(self.epochs, "epochs"))
        for name in ("clip", "damping", "noise_multiplier", "prior_scale"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        if self.reading not in SEP_READINGS:
            raise ValueError(f"reading must be one of {SEP_READINGS}, got {self.reading!r}")
        check_threat_model(self.threat_model)
        object.__setattr__(self, "dim", check_count(self.dim, "dim", minimum=2))
        slots = check_count(self.canary_slots, "canary_slots", minimum=0)
        object.__setattr__(self, "canary_slots", slots)
        if slots and self.n_records <= slots:
            raise ValueError(f"n_records N = {self.n_records} must exceed canary_slots = "
                             f"{slots} (a pass covers N - canary_slots background records "
                             "and the slots)")
        if slots and self.dim < 2 + self.quiet_features:
            raise ValueError(f"canary_slots = {slots} needs dim >= {2 + self.quiet_features} "
                             f"({self.quiet_features} quiet features), got dim = {self.dim}")
        object.__setattr__(self, "delta", check_gaussian_delta(self.delta))
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
        """The background records: N of them, or N - canary_slots with t quiet features
        (:func:`dpsep_background`; each run adds the slot records)."""
        return dpsep_background(self.n_records - self.canary_slots, self.dim,
                                self.data_seed, self.quiet_features)

    @property
    def quiet_features(self) -> int:
        """t: the smallest t >= 0 with t + t(t + 1)/2 >= ``canary_slots`` (0 without slots)."""
        t = 0
        while t + t * (t + 1) // 2 < self.canary_slots:
            t += 1
        return t

    @property
    def gradient_canary_slots(self) -> int:
        """How many site canaries a one-run audit may place (``canary_slots``)."""
        return self.canary_slots

    def gradient_canary_coordinates(self, m: int) -> np.ndarray:
        """j(i) for canary i < m: flat natural-parameter coordinates of the quiet features
        (the last t): first h_j, then Lambda_jk (j <= k, both quiet) in the order of
        :func:`~dpclaims.analysis.gaussian.flatten_natural`. No background site has a
        component there (:func:`dpsep_background`). ValueError for m above the slots."""
        m = check_count(m, "m")
        if m > self.canary_slots:
            raise ValueError(f"{self.name}: room for {self.canary_slots} site canaries, "
                             f"asked for {m}")
        d, t = self.dim, self.quiet_features
        iu = np.triu_indices(d)
        block = np.flatnonzero((iu[0] >= d - t) & (iu[1] >= d - t))
        return np.concatenate([np.arange(d - t, d), d + block])[:m]

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
        x, y, c = check_flagged(data, "site_canary", self.dim)
        if not np.isin(y, (-1.0, 1.0)).all():
            raise ValueError("y must hold labels in {-1, +1} (probit)")
        return x, y, c

    def _sites(self, theta_f, x, y, c, j=None):
        """Clipped sites (n, p) of records (x (n, d), y (n,), c (n,)) at states theta_f; a
        record with c != 0 has the site c C e_j (j (n,) coordinates; None: u = e_1)."""
        cav = self.theta_0 + (self.n_records - 1) * theta_f
        mean, cov, _ = cavity_moments(cav, self.params.pd_floor)
        site = clip_to_norm(Probit().site(mean, cov, x, y), self.clip)
        if j is None:
            canary = c[:, None] * self.clip * self.canary_direction
        else:
            canary = np.zeros_like(site)
            canary[np.arange(c.shape[0]), j] = c * self.clip
        return np.where((c != 0)[:, None], canary, site)

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of T epochs (Algorithm 3 with the reading's update).

        Each epoch draws a permutation per run (``rng.permuted``), then each step the noise
        (n, p). Returns every theta~_new (n_runs, T N, p) or the final theta_q (n_runs, p).

        Raises ValueError on bad data or n_runs < 1.
        """
        return self._run(data, rng, check_count(n_runs, "n_runs"))

    def run_gradient_canaries(self, data, rng: np.random.Generator, signs) -> np.ndarray:
        """R runs on ``data`` with m site canaries (the one-run audit's capability,
        :class:`~dpclaims.audits.capabilities.HasGradientCanaries`).

        Canary i is slot record i: a record whose clipped site (Algorithm 3 step 6,
        theta_fn of norm <= C) is ``signs[r, i] * C * e_j(i)`` whatever the cavity, j(i)
        from :meth:`gradient_canary_coordinates`; the other slots (i >= m) are empty
        records (x = 0, site 0). Each pass processes every record once at a hidden random
        position (as every record), so the step that processes canary i releases
        theta~_new = w_n sign_i C e_j(i) + w_f theta_f + theta_0 + noise (eq. 4; w_n =
        gamma / N as printed, gamma for SEP's own update) and no other step's site has a
        component at j(i). Sensitivity (replace-one, as the claim): flipping sign_i
        replaces one record by another whose site differs by 2 C e_j(i), so theta_new
        moves by w_n 2 C = 2 gamma C / N, exactly Prop. 1's Delta (the bound attained),
        in the one step per epoch that processes it; every canary bit is a replace-one
        neighbour of the claim's (one Gaussian(sigma) per epoch, T epochs).

        Parameters
        ----------
        data : (x (N', d), y (N',), site_canary (N',))
            As for :meth:`run` (normally :attr:`data`, N' = N - canary_slots).
        rng : numpy Generator
        signs : array (R, m) in {-1, +1}
            The canaries' signs (replace-one: every canary is present).

        Returns
        -------
        ndarray
            As :meth:`run`: (R, T (N' + canary_slots), p) or (R, p).

        Raises
        ------
        ValueError
            signs not (R, m) in {-1, +1}, m above ``canary_slots``, bad data.
        """
        signs = check_canary_signs(signs, self.relation)
        self.gradient_canary_coordinates(signs.shape[1])        # checks m
        return self._run(data, rng, check_count(signs.shape[0], "R"), signs)

    def _run(self, data, rng: np.random.Generator, n: int, signs=None) -> np.ndarray:
        x, y, c = self.check_data(data)
        j = None
        if self.canary_slots:       # the slot records: canaries (signs) or empty
            t = self.canary_slots
            x = np.concatenate([x, np.zeros((t, self.dim))])
            y = np.concatenate([y, np.ones(t)])
            slot = np.zeros((n, t))
            if signs is not None:
                slot[:, :signs.shape[1]] = signs
            c = np.concatenate([np.broadcast_to(c, (n, c.size)), slot], axis=1)
            j = np.concatenate([np.zeros(x.shape[0] - t, dtype=np.int64),
                                self._slot_coordinates()])
        rows = np.arange(n)
        N, p = x.shape[0], self.p
        std = self.params.noise_std(self.n_records)
        theta_f = np.zeros((n, p))
        trace = (np.empty((n, self.epochs * N, p)) if self.threat_model == "full-trace"
                 else None)
        for t in range(self.epochs):
            perms = rng.permuted(np.tile(np.arange(N), (n, 1)), axis=1)
            for k in range(N):
                i = perms[:, k]
                if j is None:
                    site = self._sites(theta_f, x[i], y[i], c[i])
                else:
                    site = self._sites(theta_f, x[i], y[i], c[rows, i], j[i])
                new = dpsep_theta_new(theta_f, site, self.theta_0, self.n_records, self.params)
                new = new + std * rng.standard_normal((n, p))
                if trace is not None:
                    trace[:, t * N + k] = new
                theta_f = clip_to_norm((new - self.theta_0) / self.n_records, self.clip)
        return trace if trace is not None else self.theta_0 + self.n_records * theta_f

    def _slot_coordinates(self) -> np.ndarray:
        """The coordinates of all ``canary_slots`` slots (:meth:`gradient_canary_coordinates`)."""
        return self.gradient_canary_coordinates(self.canary_slots)

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
                "threat_model": self.threat_model, "d": self.dim, "delta": self.delta,
                **({"canary_slots": self.canary_slots} if self.canary_slots else {})}
