"""DPVI / DPVIm runs as auditable mechanisms: a gradient canary in a short SGD run.

Jälkö, Prediger, Honkela & Kaski, "DPVIm" (``../shared/papers/dpvim.txt``), Alg. 1, run by
the reference implementation :mod:`dpclaims.algorithms.dpvi.dpvi` (mean-field, logistic
regression, variant "aligned" or "vanilla").

The mechanism
-------------
:class:`DPVIGradientCanary` is T steps of DPVI with **plain SGD** (learning rate ``lr``)
from a fixed, public initial value xi_0 (m_q = 0, sigma_q = ``init_std``). It releases the
whole trace of iterates (xi_1, ..., xi_T), flattened to length T P (P = 2d): "privacy
guarantees of DP-SGD algorithms extend to all parameter iterates" (Sec. 3.2). With SGD
the released noisy gradient of every step is a post-processing of the trace,

    g~_t = (xi_t - xi_{t-1})_m * B / lr      (the m-block; B the batch scale),

which is what :meth:`DPVIGradientCanary.score` uses. (With Adam, the paper's optimiser,
the iterates are still post-processing of the g~_t, so the privacy claim is the same; the
audit uses SGD only so that the g~_t can be read back off the trace.)

Data: a tuple ``(x (N', d), y (N',), is_canary (N',))``. ``is_canary`` is 0 for an
ordinary record (its per-example gradient is the model's, clipped to C), +1 for a
**gradient canary** whose per-example m-gradient is the fixed vector C u
(u = ``canary_direction``, a unit vector, so clipping leaves it), and -1 for a canary with
direction -u. For the vanilla variant the canary's joint gradient is (C u, 0). This is the
white-box "Dirac gradient canary" of DP-SGD audits (Nasr et al., "Tight auditing of
differentially private machine learning", USENIX Security 2023): DP-SGD's guarantee holds
for every per-example gradient of norm <= C, so the adversary may choose them.

Batches (``sampling``): "full" (every record every step; batch scale N), "wor" (a fresh
uniformly random subset of exactly B records each step, what d3p draws; batch scale B),
"poisson" (each record independently with probability q = B / N, what the paper's Fourier
accountant assumes; batch scale q N = B). N is the public ``dataset_size``; the data may
hold N - 1, N or N + 1 records (an add-remove neighbour). Per-example prior and entropy
shares are 1 / N (eq. 10).

Neighbouring pairs under sampling without replacement
-----------------------------------------------------
Under replace-one the two data sets have the same N, so a fixed index i joins each step's
batch with probability q = B / N, independently over steps, with the same law in both.
If every other record contributes the same vector w along u (or nothing), the released sum
along u is, per step, B w + b (c_i - w) against B w + b (c_i' - w), b ~ Bernoulli(q),
plus N(0, sigma^2 C^2):

* a record with zero gradient (e.g. x = 0, up to the prior's share) replaced by a +u
  canary, no background: N(0) against (1 - q) N(0) + q N(C), exactly the Poisson
  add-remove curve, so no audit on this pair can exceed the paper's Poisson add-remove
  epsilon (an ordinary record whose clipped gradient has norm C orthogonal to u gives a
  difference of norm sqrt(2) C instead, in between);
* +u against -u, no background: (1 - q) N(0) + q N(C) against (1 - q) N(0) + q N(-C),
  the Poisson replace-one curve (dp_accounting's PLD under REPLACE_ONE);
* +u against -u with every other record a -u canary (w = -C u): N(0) against
  (1 - q) N(0) + q N(2C), the Poisson add-remove curve at multiplier sigma / 2, the
  strongest of the three (what :mod:`dpclaims.papers.dpvim.checks_audit` audits).

When every other record is a canary, the released iterates are a post-processing of these
sums with data-independent randomness (eta), so these curves are the pairs' exact privacy
curves; ordinary background records add a shift common to both data sets (given the past
iterates and eta), which cannot make the pair easier to tell apart.

The claim (``claim_reading``)
-----------------------------
``"full-batch-exact"`` (sampling "full"): T-fold composition of the Gaussian mechanism,
``SelfComposedDpEvent(GaussianDpEvent(s), T)``, epsilon =
``get_epsilon_gaussian(s / sqrt(T), delta)`` (Balle & Wang 2018), exact; s = sigma_DP
under add-remove (sensitivity C) and sigma_DP / 2 under replace-one (sensitivity 2C).

``"paper-poisson-add-remove"`` (sampling "wor" or "poisson"): the paper's accounting,
Sec. 4.1 "we use the Fourier accountant method": the Poisson(q = B / N)-subsampled
Gaussian with multiplier sigma_DP, T steps, add-remove, by dp_accounting's PLD accountant
(:func:`dpclaims.analysis.accounting.account`, PLD row). ``relation`` says under which
neighbouring relation that number is read as a guarantee: "add-remove" for Poisson batches
is the accountant's own setting; "replace-one" for "wor" batches is what the algorithm
does (fixed-size batches, N public) under Def. 2.1's "two data sets different in only one
element".

``"wor-replace-one-rdp"`` (sampling "wor", relation "replace-one"): an upper bound for
what the algorithm does: ``SampledWithoutReplacementDpEvent(N, B, GaussianDpEvent(sigma_DP
/ 2))`` by dp_accounting's RDP accountant (Wang, Balle & Kasiviswanathan 2019, Thm. 27).

``delta`` defaults to 1 / N (App. F: "the δ privacy parameter was set to 1/N").

Planted bug: ``actual_noise_multiplier`` (default: sigma_DP) is the multiplier the
release really uses; a smaller value is the classic "noise calibrated below the claim".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import dp_accounting
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
from dpclaims.analysis.accounting import Sampling, account, dp_event_for
from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_finite_array,
    check_positive,
)
from dpclaims.audits.mechanism import PrivacyClaim, check_relation

AUDIT_VARIANTS = ("aligned", "vanilla")
AUDIT_SAMPLINGS = ("full", "wor", "poisson")
CLAIM_READINGS = {
    "full-batch-exact": "exact T-fold Gaussian composition (full batch)",
    "paper-poisson-add-remove": ("the paper's accounting: Poisson-subsampled Gaussian, "
                                 "add-remove, PLD (Fourier) accountant"),
    "wor-replace-one-rdp": ("sampling without replacement, replace-one, RDP upper bound "
                            "(Wang, Balle & Kasiviswanathan 2019, Thm. 27)"),
}


@dataclass(frozen=True, eq=False)
class DPVIGradientCanary:
    """T steps of DPVI (SGD) on a dataset with gradient canaries, as a mechanism.

    Parameters
    ----------
    dataset_size : int
        N, the public data size (q = B / N, per-example prior share 1 / N, delta = 1 / N).
    steps : int
        T >= 1 noisy steps.
    clip : float
        C > 0.
    noise_multiplier : float
        sigma_DP > 0, the claimed multiplier (noise std sigma_DP C per step).
    sampling : {"full", "wor", "poisson"}
    batch_size : int, optional
        B: records per step ("wor"), expected records per step ("poisson"; q = B / N);
        must be omitted or equal N for "full". 1 <= B <= N.
    variant : {"aligned", "vanilla"}
    dim : int
        d, the number of features (>= 1).
    canary_direction : sequence of d floats, optional
        u, normalised to a unit vector (default e_1).
    lr : float
        SGD learning rate (> 0).
    prior_std : float
        Prior std of the logistic-regression weights. The default 10 keeps the prior's
        share of an ordinary record's gradient along u small (1 / (N prior_std^2) times
        theta_u), so ordinary records with x_u = 0 hardly move the canary statistic.
    init_std : float
        sigma_q at xi_0 (m_q = 0 at xi_0).
    delta : float, optional
        Default 1 / N.
    claim_reading : str
        One of :data:`CLAIM_READINGS` (module notes).
    relation : {"add-remove", "replace-one"}
        The neighbouring relation of the claim.
    actual_noise_multiplier : float, optional
        The multiplier the release really uses (default ``noise_multiplier``); a smaller
        value plants a bug.

    Raises
    ------
    ValueError
        A non-positive C, sigma_DP, lr, prior_std or init_std; T < 1; B > N or B < 1; an
        unknown sampling, variant, reading or relation; a reading that does not fit the
        sampling; a zero or wrong-length ``canary_direction``; delta outside (0, 1).
    """

    dataset_size: int
    steps: int = 3
    clip: float = 1.0
    noise_multiplier: float = 1.0
    sampling: str = "full"
    batch_size: int | float | None = None
    variant: str = "aligned"
    dim: int = 2
    canary_direction: tuple | None = None
    lr: float = 0.01
    prior_std: float = 10.0
    init_std: float = 1.0
    delta: float | None = None
    claim_reading: str = "full-batch-exact"
    relation: str = "add-remove"
    actual_noise_multiplier: float | None = None

    def __post_init__(self) -> None:
        n = check_count(self.dataset_size, "dataset_size")
        object.__setattr__(self, "dataset_size", n)
        object.__setattr__(self, "steps", check_count(self.steps, "steps"))
        object.__setattr__(self, "clip", check_positive(self.clip, "clip"))
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        if self.actual_noise_multiplier is not None:
            object.__setattr__(self, "actual_noise_multiplier", check_positive(
                self.actual_noise_multiplier, "actual_noise_multiplier"))
        if self.sampling not in AUDIT_SAMPLINGS:
            raise ValueError(f"sampling must be one of {AUDIT_SAMPLINGS}, got {self.sampling!r}")
        b = self.batch_size
        if self.sampling == "full":
            if b is not None and b != n:
                raise ValueError(f"sampling 'full' uses all N = {n} records: batch_size must "
                                 f"be omitted or equal N, got {b!r}")
            b = n
        elif self.sampling == "wor":
            b = check_count(b, "batch_size")
        else:
            b = check_positive(b, "batch_size")
        if b > n:
            raise ValueError(f"batch_size = {b!r} exceeds the data size N = {n}")
        object.__setattr__(self, "batch_size", b)
        if self.variant not in AUDIT_VARIANTS:
            raise ValueError(f"variant must be one of {AUDIT_VARIANTS}, got {self.variant!r}")
        d = check_count(self.dim, "dim")
        object.__setattr__(self, "dim", d)
        u = np.eye(d)[0] if self.canary_direction is None else check_finite_array(
            self.canary_direction, "canary_direction", ndim=1)
        if u.shape != (d,) or not np.linalg.norm(u) > 0:
            raise ValueError(f"canary_direction must be a non-zero vector of length dim = {d}, "
                             f"got {self.canary_direction!r}")
        object.__setattr__(self, "canary_direction", tuple(float(v) for v in u / np.linalg.norm(u)))
        for name in ("lr", "prior_std", "init_std"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        delta = 1.0 / n if self.delta is None else check_delta(self.delta)
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1) for a Gaussian mechanism, got {delta!r} "
                             f"(default 1/N needs N >= 2)")
        object.__setattr__(self, "delta", delta)
        check_relation(self.relation)
        if self.claim_reading not in CLAIM_READINGS:
            raise ValueError(f"claim_reading must be one of {tuple(CLAIM_READINGS)}, got "
                             f"{self.claim_reading!r}")
        if self.claim_reading == "full-batch-exact" and self.sampling != "full":
            raise ValueError(f"claim_reading 'full-batch-exact' needs sampling 'full', got "
                             f"{self.sampling!r}")
        if self.claim_reading == "paper-poisson-add-remove" and self.sampling == "full":
            raise ValueError("claim_reading 'paper-poisson-add-remove' needs subsampling "
                             "('wor' or 'poisson'), got sampling 'full'")
        if self.claim_reading == "wor-replace-one-rdp" and (
                self.sampling != "wor" or self.relation != "replace-one"):
            raise ValueError(f"claim_reading 'wor-replace-one-rdp' needs sampling 'wor' and "
                             f"relation 'replace-one', got {self.sampling!r} and "
                             f"{self.relation!r}")

    # ------------------------------------------------------------------ description

    @property
    def name(self) -> str:
        return (f"dpvi-{self.variant}-gradient-canary[{self.sampling}; claim: "
                f"{self.claim_reading} under {self.relation}]")

    @property
    def sampling_rate(self) -> float:
        """q = B / N (1 for full batch)."""
        return self.batch_size / self.dataset_size

    @property
    def family(self) -> MeanField:
        return MeanField(self.dim, Transform("softplus"))

    @property
    def model(self) -> LogisticRegression:
        return LogisticRegression(prior_std=self.prior_std)

    @property
    def n_params(self) -> int:
        """P = 2d (mean-field)."""
        return 2 * self.dim

    @property
    def init(self) -> np.ndarray:
        """xi_0 (P,): m_q = 0, sigma_q = init_std (public)."""
        return self.family.init(0.0, self.init_std, 1)[0]

    @property
    def u(self) -> np.ndarray:
        return np.asarray(self.canary_direction)

    @property
    def used_noise_multiplier(self) -> float:
        """The multiplier the release really uses."""
        return (self.noise_multiplier if self.actual_noise_multiplier is None
                else self.actual_noise_multiplier)

    def to_dict(self) -> dict:
        """The settings (JSON-able), for evidence."""
        return {"N": self.dataset_size, "T": self.steps, "C": self.clip,
                "sigma_DP": self.noise_multiplier,
                "actual_noise_multiplier": self.used_noise_multiplier,
                "sampling": self.sampling, "B": self.batch_size, "q": self.sampling_rate,
                "variant": self.variant, "d": self.dim, "u": list(self.canary_direction),
                "optimiser": "sgd", "lr": self.lr, "prior_std": self.prior_std,
                "init_std": self.init_std, "delta": self.delta,
                "claim_reading": self.claim_reading, "relation": self.relation,
                "claimed_epsilon": self.claim.epsilon}

    # ------------------------------------------------------------------ the claim

    @cached_property
    def claim(self) -> PrivacyClaim:
        """The claimed (epsilon, delta) under ``relation`` (module notes, "The claim")."""
        sigma, t, n, b = self.noise_multiplier, self.steps, self.dataset_size, self.batch_size
        if self.claim_reading == "full-batch-exact":
            s = sigma if self.relation == "add-remove" else sigma / 2
            eps = dp_accounting.get_epsilon_gaussian(s / math.sqrt(t), self.delta)
            event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(s), t)
        elif self.claim_reading == "paper-poisson-add-remove":
            sampling = Sampling("poisson", dataset_size=n, batch_size=b, steps=t)
            event = dp_event_for(sigma, sampling)
            eps = account(sigma, sampling, self.delta, "add-remove").row(
                "dp_accounting-pld").epsilon
        else:
            sampling = Sampling("without-replacement", dataset_size=n, batch_size=b, steps=t)
            event = dp_event_for(sigma / 2, sampling)
            eps = account(sigma / 2, sampling, self.delta, "replace-one").row(
                "dp_accounting-rdp").epsilon
        return PrivacyClaim(float(eps), self.delta, self.relation, event)

    # ------------------------------------------------------------------ the release

    def check_data(self, data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x (N', d), y (N',), is_canary (N',))`` checked; N' in {N - 1, N, N + 1}.

        Raises ValueError naming the bad part (shape, labels outside {0, 1}, canary flags
        outside {-1, 0, 1}, a size that is not N or a neighbour's, fewer than B records
        for "wor").
        """
        if not isinstance(data, tuple) or len(data) != 3:
            raise ValueError("data must be a tuple (x (N, d), y (N,), is_canary (N,))")
        x = check_finite_array(data[0], "x", ndim=2)
        y = check_finite_array(data[1], "y", ndim=1)
        c = check_finite_array(data[2], "is_canary", ndim=1)
        n = x.shape[0]
        if x.shape[1] != self.dim:
            raise ValueError(f"x must have dim = {self.dim} columns, got {x.shape[1]}")
        if y.shape[0] != n or c.shape[0] != n:
            raise ValueError(f"x, y, is_canary must have the same number of rows, got "
                             f"{n}, {y.shape[0]}, {c.shape[0]}")
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("y must hold labels in {0, 1}")
        if not np.isin(c, (-1.0, 0.0, 1.0)).all():
            raise ValueError("is_canary must hold 0 (ordinary), 1 (canary +u) or -1 (canary -u)")
        if abs(n - self.dataset_size) > 1:
            raise ValueError(f"data has {n} records; the mechanism is for N = "
                             f"{self.dataset_size} (or a neighbour with N +- 1)")
        if self.sampling == "wor" and self.batch_size > n:
            raise ValueError(f"batch_size = {self.batch_size} exceeds the {n} records of data")
        return x, y, c

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        """n independent runs, the trace (xi_1, ..., xi_T) flattened: shape (n, T P).

        Vectorised over the n runs (a Python loop over the T steps only). Each step draws
        the batches (not for "full"), then eta (n, d), then psi (n, k), as
        :func:`~dpclaims.algorithms.dpvi.dpvi.run_dpvi` does, and calls
        :func:`~dpclaims.algorithms.dpvi.dpvi.dp_step` with the ordinary records of the batch.
        The canaries of a batch contribute s C u (s = their signed count; (s C u, 0) for
        vanilla), passed as ``dp_step``'s ``canary`` with ``canary_count`` = abs(s).
        """
        n = check_count(n, "n")
        x, y, c = self.check_data(data)
        n_rec, d = x.shape
        fam, model = self.family, self.model
        k = released_dim(self.variant, fam)
        u_k = np.zeros(k)
        u_k[:d] = self.u
        sigma, clip, bs = self.used_noise_multiplier, self.clip, float(self.batch_size)
        ordinary = (c == 0).astype(float)
        if self.sampling != "full":
            config = DPVIConfig(variant=self.variant, clip=clip, noise_multiplier=sigma,
                                steps=self.steps,
                                batch_size=int(self.batch_size) if self.sampling == "wor"
                                else None,
                                sampling=self.sampling,
                                sampling_rate=(self.sampling_rate if self.sampling == "poisson"
                                               else None),
                                optimiser="sgd", lr=self.lr)
        xi = np.broadcast_to(self.init, (n, fam.n_params)).copy()
        out = np.empty((n, self.steps, fam.n_params))
        for t in range(self.steps):
            if self.sampling == "full":                           # views, no gather
                xb, yb = np.broadcast_to(x, (n, n_rec, d)), np.broadcast_to(y, (n, n_rec))
                wb = np.broadcast_to(ordinary, (n, n_rec))
                s = np.full(n, c.sum())
            else:
                idx, w = draw_batches(rng, n, n_rec, config)
                xb, yb, wb = x[idx], y[idx], w * ordinary[idx]
                s = np.sum(c[idx] * w, axis=1)                   # signed canary count (n,)
            eta = rng.standard_normal((n, d))
            psi = rng.standard_normal((n, k))
            step = dp_step(self.variant, model, fam, xi, eta, xb, yb, wb, self.dataset_size,
                           clip, sigma, psi, bs, canary=s[:, None] * (clip * u_k),
                           canary_count=np.abs(s))
            xi = xi + self.lr * step.direction
            out[:, t] = xi
        return out.reshape(n, -1)

    # ------------------------------------------------------------------ post-processing

    def released_gradients(self, outputs) -> np.ndarray:
        """g~_t = (xi_t - xi_{t-1})_m B / lr from released traces (n, T P): shape (n, T, d)."""
        outputs = np.asarray(outputs, dtype=float)
        p = self.n_params
        if outputs.ndim != 2 or outputs.shape[1] != self.steps * p:
            raise ValueError(f"outputs must have shape (n, T P) = (n, {self.steps * p}), got "
                             f"{outputs.shape}")
        trace = outputs.reshape(-1, self.steps, p)
        prev = np.concatenate([np.broadcast_to(self.init, (trace.shape[0], 1, p)),
                               trace[:, :-1]], axis=1)
        return (trace - prev)[..., :self.dim] * (self.batch_size / self.lr)

    def score(self, outputs) -> np.ndarray:
        """The canary statistic sum_t <u, g~_t> / C of each release, shape (n,).

        A function of the release only (post-processing); high when the canary (+u) is
        present. Under full batch and add-remove it is N(0, T sigma^2) without the canary
        and N(T, T sigma^2) with it, up to the ordinary records' share along u.
        """
        return np.sum(self.released_gradients(outputs) @ self.u, axis=1) / self.clip
