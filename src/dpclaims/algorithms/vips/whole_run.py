"""VIPS as an algorithm (a whole run with a whole-run claim).

It follows the algorithm protocol of :mod:`dpclaims.audits.whole_run`: a
``claim`` about the whole run (its DpEvent), a ``threat_model`` and a ``run(data,
rng, n_runs)`` vectorised over runs (a Python loop over the steps only), with
``step`` (one noisy release from given states, for the sensitivity property test),
a canary, and planted-bug switches.

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
    (Delta_s1 = 1/S, Delta_s2 = sqrt(2)/(4S), :func:`~dpclaims.algorithms.vips.blr.
    blr_sensitivities`). Canary: input-space, record 0 set to (e_1, y = 0), resp.
    (e_1, y = 1): s1 moves by e_1 / S (the full Delta_s1).

    One-run audits (``canary_slots = t``; :meth:`VIPSRun.run_gradient_canaries`, the
    capability :class:`~dpclaims.audits.capabilities.HasGradientCanaries`): the
    background records are zero beyond their second feature, so the last t features hold
    Dirac canaries of s1: canary i is the record (e_j(i), y = (1 + sign_i)/2), a record of
    the paper's domain (Sec. 3.2.1: ||x|| <= 1, y in {0, 1}). Planted bug
    ``noise_batch_size``: the noise is calibrated to the sensitivities of an average over
    that many records instead of the batch's S (eq. 57 read with N, the dataset size).
"""


from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from dpclaims.algorithms.vips.blr import (
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
from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
)
from dpclaims.audits.mechanism import PrivacyClaim, Sensitivity
from dpclaims.audits.whole_run import (
    WholeRunAlgorithm,
    check_canary_signs,
    check_gaussian_delta,
    check_threat_model,
)

BATCHINGS = ("wor", "shuffle")


# =========================================================================== VIPS


def vips_background(n_records: int, dim: int = 2, seed: int = 0):
    """Ordinary BLR records for :class:`VIPSRun`: x = (0, +-1, 0...) (unit norm, x_1 = 0),
    y ~ Bernoulli(sigmoid(2 x_2)). Their s1 has no e_1 component, nor any component in
    features 3..d (the one-run audit's canary features, ``canary_slots``)."""
    n = check_count(n_records, "n_records")
    d = check_count(dim, "dim", minimum=2)
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    x[:, 1] = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * x[:, 1]))).astype(float)
    return x, y


@dataclass(frozen=True, eq=False)
class VIPSRun(WholeRunAlgorithm):
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
        As :func:`~dpclaims.algorithms.vips.blr.run_vips_blr`.
    canary_slots : int
        t >= 0: room for the one-run audit's canaries (:meth:`run_gradient_canaries`) in
        the last t features (d >= 2 + t). The background then has N - t records and every
        run completes it with t slot records (empty, x = 0 and y = 0, in :meth:`run`),
        so a run still samples from N records. 0 (default): the same numbers as before.
    noise_batch_size : int, optional
        Planted bug: the noise is sigma times the sensitivities of an average over this
        many records (e.g. N: eq. 57 read with the dataset size) instead of over S.

    Raises
    ------
    ValueError
        S > N, S not dividing N for "shuffle", E < 1, sigma <= 0, an unknown batching or
        threat model, delta outside (0, 1), kappa outside (0.5, 1], canary_slots < 0 or
        >= N, d < 2 + canary_slots, noise_batch_size < 1.
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
    canary_slots: int = 0
    noise_batch_size: int | None = None
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
        check_threat_model(self.threat_model)
        slots = check_count(self.canary_slots, "canary_slots", minimum=0)
        object.__setattr__(self, "canary_slots", slots)
        if slots >= n:
            raise ValueError(f"canary_slots = {slots} must be below N = {n} (the background "
                             "holds N - canary_slots records)")
        object.__setattr__(self, "dim", check_count(self.dim, "dim", minimum=2 + slots))
        if self.noise_batch_size is not None:
            object.__setattr__(self, "noise_batch_size",
                               check_count(self.noise_batch_size, "noise_batch_size"))
        object.__setattr__(self, "delta", check_gaussian_delta(self.delta))
        check_positive(self.prior_precision, "prior_precision")
        step_sizes(1, self.tau0, self.kappa)

    @property
    def name(self) -> str:
        bug = (f", noise for S={self.noise_batch_size}" if self.noise_batch_size is not None
               else "")
        return self.label or (f"vips-blr[{self.batching}; N={self.n_records}, "
                              f"S={self.batch_size}, E={self.epochs}, "
                              f"sigma={self.noise_multiplier:g}{bug}; {self.threat_model}]")

    @property
    def iterations(self) -> int:
        """J = E N / S."""
        return self.epochs * self.n_records // self.batch_size

    @cached_property
    def data(self):
        """The background records: N of them, or N - canary_slots (each run adds the
        slot records; :func:`vips_background`)."""
        return vips_background(self.n_records - self.canary_slots, self.dim, self.data_seed)

    @property
    def clip(self) -> float | None:
        """1 / (2S): the largest norm of one record's term (y - 1/2) x / S of s1 (eq. 56,
        ||x|| <= 1), the norm of a one-run canary's contribution; None without slots."""
        return 0.5 / self.batch_size if self.canary_slots else None

    @property
    def gradient_canary_slots(self) -> int:
        """How many Dirac canaries a one-run audit may place (``canary_slots``)."""
        return self.canary_slots

    def gradient_canary_coordinates(self, m: int) -> np.ndarray:
        """j(i) = d - t + i: canary i's feature, its coordinate of s1 in the released
        [s1~, triu(s2~)] (and of mu in the final [mu, triu(<m m^T>)]). ValueError for m
        above the slots."""
        m = check_count(m, "m")
        if m > self.canary_slots:
            raise ValueError(f"{self.name}: room for {self.canary_slots} canaries, asked "
                             f"for {m}")
        return self.dim - self.canary_slots + np.arange(m)

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

    @property
    def noise_sensitivities(self) -> tuple[float, float]:
        """The sensitivities the noise is calibrated to: :attr:`sensitivities`, or those of
        an average over ``noise_batch_size`` records (the planted bug)."""
        return blr_sensitivities(self.noise_batch_size or self.batch_size, "tight")

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
        d1, d2 = self.noise_sensitivities
        n = x.shape[0]
        s1 = s1 + self.noise_multiplier * d1 * rng.standard_normal(s1.shape)
        s2 = s2 + symmetric_noise(rng, self.dim, self.noise_multiplier * d2, size=(n,))
        return s1, s2

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of J iterations (Algorithms 4, 5 with the batching).

        Returns every released [s1~, triu(s2~)] (n_runs, J, d + d(d+1)/2), or the final
        [mu, triu(<m m^T>)] (n_runs, d + d(d+1)/2). Raises ValueError on bad data.
        """
        return self._run(data, rng, check_count(n_runs, "n_runs"))

    def run_gradient_canaries(self, data, rng: np.random.Generator, signs) -> np.ndarray:
        """R runs on ``data`` with m Dirac canaries (the one-run audit's capability,
        :class:`~dpclaims.audits.capabilities.HasGradientCanaries`).

        Canary i is slot record i, (x, y) = (e_j(i), (1 + sign_i)/2), j(i) from
        :meth:`gradient_canary_coordinates`; the other slots are empty records (0, 0).
        Every iteration draws its batch of S from all N records (or cuts the epoch's
        permutation, ``batching="shuffle"``), canaries included. Its contribution to the
        released s1~ (eq. 56; s1 = (1/S) sum_n (y_n - 1/2) x_n, the expected sufficient
        statistic of the batch) is sign_i e_j(i) / (2S) = sign_i C e_j(i) with C =
        :attr:`clip` = 1/(2S), at a coordinate no background record uses; to s2~ (eq.
        58) <xi> e_j e_j^T / S, the same for both signs (the PG mean <xi> does not
        depend on y). Sensitivity (replace-one, as the claim): flipping sign_i replaces
        one record by another; s1 moves by e_j(i) / S, the whole Delta_s1 = 1/S (tight
        form of eq. 57), s2 not at all. In units of each block's noise that is a
        Gaussian of multiplier sigma in each iteration that samples the canary, where
        the claim accounts sigma / sqrt 2 (both blocks at their full sensitivity): a
        correct run's canary leaks less than the claim allows, so the audit is valid and
        conservative.

        Parameters
        ----------
        data : (x (N', d), y (N',))
            As for :meth:`run` (normally :attr:`data`, N' = N - canary_slots).
        rng : numpy Generator
        signs : array (R, m) in {-1, +1}
            The canaries' signs (replace-one: every canary is present).

        Returns
        -------
        ndarray
            As :meth:`run`: (R, J, d + d(d+1)/2) or (R, d + d(d+1)/2).

        Raises
        ------
        ValueError
            signs not (R, m) in {-1, +1}, m above ``canary_slots``, bad data.
        """
        signs = check_canary_signs(signs, self.relation)
        coords = self.gradient_canary_coordinates(signs.shape[1])
        return self._run(data, rng, check_count(signs.shape[0], "R"), (signs, coords))

    def _run(self, data, rng: np.random.Generator, n: int, canaries=None) -> np.ndarray:
        x, y = self.check_data(data)
        if self.canary_slots:       # the slot records: canaries or empty (0, 0)
            t = self.canary_slots
            slot_x, slot_y = np.zeros((t, self.dim)), np.zeros((n, t))
            if canaries is not None:
                signs, coords = canaries
                slot_x[np.arange(coords.size), coords] = 1.0
                slot_y[:, :coords.size] = (1.0 + signs) / 2
            x = np.concatenate([x, slot_x])
            y = np.concatenate([np.broadcast_to(y, (n, y.size)), slot_y], axis=1)
        rows = np.arange(n)[:, None]
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
            yb = y[rows, batch] if y.ndim == 2 else y[batch]
            s1, s2 = self._release(x[batch], yb, mm, rng)
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
                "delta": self.delta, "sensitivities": list(self.sensitivities),
                **({"canary_slots": self.canary_slots} if self.canary_slots else {}),
                **({"noise_batch_size": self.noise_batch_size}
                   if self.noise_batch_size is not None else {})}
