"""One-run audits: m canaries, each included with probability 1/2, one run, one certificate.

A multi-run audit (:mod:`dpclaims.audits.core`, :mod:`dpclaims.audits.whole_run`) runs the
algorithm hundreds of thousands of times on two datasets. A one-run audit (Steinke, Nasr &
Jagielski, NeurIPS 2023) runs it once (or a few times) on one dataset holding m canaries,
each included independently with probability 1/2 from a seeded stream; a guesser reads
each canary's score off the output and the number of canaries it places correctly is the
evidence (:mod:`dpclaims.analysis.guessing_game`).

The canaries (Dirac canaries: canary i lives in a coordinate of its own, e_j(i))
------------------------------------------------------------------------------------
* **mechanism** (a release of a sum query, such as
  :class:`~dpclaims.audits.mechanism.GaussianMechanism` over ``sum_query``): the data are
  vector records in R^m; add-remove, the included canaries' rows Delta e_i (Delta the
  claimed sensitivity); replace-one, every canary's row present as +-(Delta/2) e_i (the
  sign is the inclusion). Score of canary i: coordinate i of the one release.
* **algorithm** with the capability
  :class:`~dpclaims.audits.capabilities.HasGradientCanaries`: gradient canaries whose
  clipped contribution to every step that samples them is +-C e_j(i) (add-remove: +C or
  absent; replace-one: -C or +C). Score of canary i: the full-trace statistic of the
  multi-run audit, sum_s <update_s, e_j(i)> / C (Nasr et al. 2023, Sec. 4), or the final
  output's coordinate j(i) for a final-iterate run.

What is certified
-----------------
Each canary's inclusion changes the input by one record under the claim's relation, so an
(epsilon, delta)-DP algorithm is (epsilon, delta)-DP in each inclusion bit, which is all
Steinke et al.'s Theorem 5.2 needs. R independent runs with independent inclusions are one
algorithm in R m bits that is (epsilon, delta)-DP in each of them, so the canaries of R
runs are pooled into one game of R m canaries (the basis says so). The guessers: "included"
for the k highest scores (one-sided), and also "excluded" for the k lowest (two-sided);
with a Gaussian-DP claim (delta > 0), the f-DP analysis of Mahloujifar, Melis & Chaudhuri
(2024) of the one-sided guesses. The guess counts must not depend on the inclusions: by
default (``strategy="scores"``) each is chosen from the scores alone (the guesser is a
function of the output, which the theorem allows; :func:`choose_from_scores`); "split"
chooses them on canaries set apart, "grid" tests every k of a grid fixed by m. Every
analysis at every k it tests is a test at alpha / (number of tests) (Bonferroni), so the
largest bound is a
certificate at 1 - alpha. The f-DP bound rejects "mu-GDP", which refutes the claim only when
the claim's curve is Gaussian-DP (:func:`~dpclaims.analysis.guessing_game.gdp_mu_of_event`);
for any other claim (e.g. Poisson-subsampled DP-SGD) it is an estimate, shown and never
used, and spends no alpha.

What it cannot certify: a one-run bound saturates near log(r / log(1/alpha)) (r guesses all
correct) and is far from tight at small epsilon; docs/guide/one-run.md gives the measured
gap to the multi-run audit on the same algorithm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtr

from dpclaims.analysis.guessing_game import (
    GUESS_FRACTIONS,
    gdp_epsilon,
    gdp_mu_lower_bound,
    gdp_mu_of_event,
    guess_grid,
    one_run_counts,
    snj_epsilon_lower_bound,
)
from dpclaims.analysis.seeds import rng_for
from dpclaims.analysis.validation import check_count, check_delta, check_probability
from dpclaims.audits.capabilities import has_run, read_algorithm, read_mechanism
from dpclaims.audits.mechanism import InvalidMechanismError, real_array, sensitivity_of

#: Names of the three analyses (the ``method`` of each test).
METHODS = {
    "one-sided": "Steinke, Nasr & Jagielski 2023, Thm. 5.2: 'included' for the k highest "
                 "scores",
    "two-sided": "Steinke, Nasr & Jagielski 2023, Thm. 5.2: 'included' for the k highest "
                 "and 'excluded' for the k lowest scores",
    "f-DP (GDP)": "Mahloujifar, Melis & Chaudhuri 2024: the Gaussian trade-off curve G_mu, "
                  "'included' for the k highest scores; epsilon of the mu-GDP mechanism at "
                  "delta",
}


@dataclass(frozen=True)
class OneRunCertificate:
    """The certificates of n one-run audits, each over M pooled canaries.

    Per analysis (one-sided, two-sided, f-DP) and audit, the guess count k that was tested,
    its correct guesses and its bound; each analysis is one test per k it tests
    (``strategy="scores"``: one k, chosen from the unlabeled scores; ``"split"``: one k,
    chosen on the selection canaries; ``"grid"``: every k of the grid, the largest bound
    kept), each test at ``alpha / n_tests``.

    Attributes
    ----------
    canaries : int
        M, the canaries of one audit (all its runs pooled).
    test_canaries : int
        The canaries the bounds are computed on (M less the selection canaries).
    strategy : {"scores", "split", "grid"}
    n_tests : int
        Tests that spend alpha (Bonferroni).
    alpha, delta : float
        The audit's significance and the claim's delta.
    k_one, correct_one, one_sided : ndarray (n,)
        One-sided: k "included" guesses, the correct ones, Steinke et al.'s bound (nats).
    k_two, correct_two, two_sided : ndarray (n,)
        Two-sided: k "included" and k "excluded" guesses (2k in all).
    k_fdp, correct_fdp, fdp_mu : ndarray (n,) or None
        The f-DP analysis (one-sided guesses): the mu lower bound (None at delta = 0).
    fdp_certifies : bool
        The claim is Gaussian-DP (``claim_mu``): the f-DP test is a certificate and spends
        alpha; otherwise an estimate (computed at the same level).
    claim_mu : float or None
    """

    canaries: int
    test_canaries: int
    strategy: str
    n_tests: int
    alpha: float
    delta: float
    k_one: np.ndarray
    correct_one: np.ndarray
    one_sided: np.ndarray
    k_two: np.ndarray
    correct_two: np.ndarray
    two_sided: np.ndarray
    k_fdp: np.ndarray | None
    correct_fdp: np.ndarray | None
    fdp_mu: np.ndarray | None
    fdp_certifies: bool
    claim_mu: float | None

    @property
    def n_audits(self) -> int:
        return self.one_sided.shape[0]

    def fdp_epsilon(self) -> np.ndarray:
        """Per audit: epsilon at delta of the certified mu (0 without f-DP)."""
        if self.fdp_mu is None:
            return np.zeros(self.n_audits)
        return np.array([gdp_epsilon(float(mu), self.delta) for mu in self.fdp_mu])

    def snj(self, which: str = "both") -> np.ndarray:
        """Per audit: Steinke et al.'s bound, one-sided, two-sided or the larger."""
        return {"one-sided": self.one_sided, "two-sided": self.two_sided,
                "both": np.maximum(self.one_sided, self.two_sided)}[which]

    def epsilon_lower_bound(self) -> np.ndarray:
        """Per audit (n,): the certificate, the largest bound of the tests that spend
        alpha (the f-DP one only with a Gaussian-DP claim)."""
        out = self.snj()
        if self.fdp_certifies and self.fdp_mu is not None:
            out = np.maximum(out, self.fdp_epsilon())
        return out

    def basis(self, runs: int = 1) -> str:
        """The certificate's basis in words."""
        pooled = (f"{runs} independent runs with independent inclusions pooled into one game "
                  f"of {self.canaries} canaries" if runs > 1 else
                  f"one run, {self.canaries} canaries")
        if self.strategy == "scores":
            how = ("guess counts chosen from the scores alone (a mixture fitted without the "
                   "inclusions)")
        elif self.strategy == "split":
            how = (f"guess counts chosen on {self.canaries - self.test_canaries} selection "
                   f"canaries (their inclusions fixed, the game is the other "
                   f"{self.test_canaries}'s)")
        else:
            how = "guess counts from a grid fixed by the number of canaries alone"
        fdp = ("; the f-DP test of the claim's Gaussian-DP curve (Mahloujifar et al. 2024)"
               if self.fdp_certifies else
               ("; the f-DP value tests mu-GDP, which this claim is not: an estimate"
                if self.fdp_mu is not None else ""))
        return (f"one-run audit (Steinke, Nasr & Jagielski 2023, Thm. 5.2), {pooled}, each "
                f"included with probability 1/2 from a seeded stream; {how}; one- and "
                f"two-sided guesses{fdp}; {self.n_tests} tests at alpha / {self.n_tests} "
                "each (Bonferroni); finite-sample")

    def row(self, i: int = 0, runs: int = 1) -> dict:
        """Audit ``i`` as a JSON-ready dict (the numbers the verdict rests on)."""
        out = {"canaries": self.canaries, "test_canaries": self.test_canaries,
               "strategy": self.strategy, "runs": runs, "alpha": self.alpha,
               "delta": self.delta, "tests": self.n_tests,
               "epsilon_lower_bound": float(self.epsilon_lower_bound()[i]),
               "one_sided": {"epsilon": float(self.one_sided[i]), "k": int(self.k_one[i]),
                             "correct": int(self.correct_one[i])},
               "two_sided": {"epsilon": float(self.two_sided[i]),
                             "k_plus": int(self.k_two[i]), "k_minus": int(self.k_two[i]),
                             "correct": int(self.correct_two[i])},
               "basis": self.basis(runs)}
        if self.fdp_mu is not None:
            out["f_dp"] = {"mu": float(self.fdp_mu[i]), "k": int(self.k_fdp[i]),
                           "correct": int(self.correct_fdp[i]),
                           "epsilon": float(self.fdp_epsilon()[i]),
                           "role": "certificate" if self.fdp_certifies else "estimate",
                           "claim_mu": self.claim_mu}
        return out


#: How the guess counts are fixed: "scores" (default), from the scores alone
#: (:func:`choose_from_scores`); "split", on a fraction of the canaries set apart
#: (:data:`SELECTION_FRACTION`); "grid", every k of a grid fixed by m.
STRATEGIES = ("split", "grid", "scores")
#: The share of canaries that choose the guess counts under ``strategy="split"``.
SELECTION_FRACTION = 0.2
#: Candidate guess counts on the selection canaries: this many, geometric from 1 to half.
SELECTION_CANDIDATES = 40


def _analyses(s, inc, ks_one, ks_two, ks_fdp, delta: float, level: float, fdp: bool):
    """The three analyses at guess counts ``ks_*`` ((g,) for every audit, or (n, g) per
    audit; 0: no test) at ``level``; per audit the largest bound: dict name -> (bound (n,),
    k (n,), correct (n,)) ("fdp": the mu bound; only with ``fdp``)."""
    n, m = s.shape
    rows = np.arange(n)
    out = {}
    for name, ks in (("one", ks_one), ("two", ks_two), ("fdp", ks_fdp if fdp else None)):
        if ks is None:
            continue
        ks = np.broadcast_to(np.asarray(ks, dtype=np.int64), (n, np.shape(ks)[-1]))
        two = name == "two"
        c = one_run_counts(s, inc, ks, ks if two else np.zeros_like(ks))
        r = 2 * ks if two else ks
        if name == "fdp":
            b = np.where(r > 0, gdp_mu_lower_bound(m, r, c, level), 0.0)
        else:
            b = np.where(r > 0, snj_epsilon_lower_bound(m, r, c, delta, level), 0.0)
        j = np.argmax(b, axis=1)
        out[name] = (b[rows, j], ks[rows, j], c[rows, j])
    return out


def mixture_posteriors(scores, iterations: int = 100) -> np.ndarray:
    """P(included | score) under a two-component Gaussian mixture with weights 1/2 (the
    design's) and a common variance, fitted to each row's scores by EM, the higher mean
    the "included" component. A function of the scores alone: no inclusion is used.

    Parameters
    ----------
    scores : array (n, M)
    iterations : int

    Returns
    -------
    ndarray (n, M) in [0, 1]
    """
    s = np.asarray(scores, dtype=float)
    lo, hi = np.quantile(s, [0.25, 0.75], axis=1)
    lo, hi = lo[:, None], hi[:, None]
    var = np.maximum(s.var(axis=1, keepdims=True) / 2, 1e-300)
    for _ in range(iterations):
        r = expit(((s - lo) ** 2 - (s - hi) ** 2) / (2 * var))
        w1 = np.maximum(r.sum(axis=1, keepdims=True), 1e-300)
        w0 = np.maximum((1 - r).sum(axis=1, keepdims=True), 1e-300)
        hi = (r * s).sum(axis=1, keepdims=True) / w1
        lo = ((1 - r) * s).sum(axis=1, keepdims=True) / w0
        var = np.maximum((r * (s - hi) ** 2 + (1 - r) * (s - lo) ** 2).mean(axis=1,
                                                                            keepdims=True),
                         1e-300)
    r = expit(((s - lo) ** 2 - (s - hi) ** 2) / (2 * var))
    return np.where(hi >= lo, r, 1 - r)


def choose_from_scores(scores, candidates, delta: float, level: float, fdp: bool) -> dict:
    """Per audit and analysis, the guess count among ``candidates`` (g,) chosen from the
    scores alone, with each canary's inclusion replaced by its posterior
    (:func:`mixture_posteriors`). Uses no inclusion, so the guesser stays a function of the
    output (Steinke et al.'s Thm. 5.2 holds with every canary).

    The rule: the k whose bound is largest at the expected correct guesses (rounded down);
    where no candidate's bound there is positive (a mixture fitted to few scores, often
    below 1,000 canaries, whose posteriors are near 1/2: the rule would fall to the first
    candidate, k = 1, which certifies nothing), the k with the largest *expected* bound
    over the count's distribution under the posteriors (:func:`_expected_bound_choice`).
    The fallback never lowers a certificate: it replaces only k = 1, whose bounds are 0 at
    every level below 1/4 (one correct guess has probability at least 1/2 under any null,
    two of two at least 1/4, and one f-DP guess cannot reject).

    Parameters
    ----------
    scores : array (n, M)
    candidates : int array (g,)
        Guess counts, ascending, 1 <= k <= M.
    delta : float
        The claim's delta.
    level : float
        The level of each test (alpha / tests).
    fdp : bool
        Also choose the f-DP analysis' k.

    Returns
    -------
    dict {"one", "two"[, "fdp"]} -> k (n,) int
    """
    s = np.asarray(scores, dtype=float)
    n, m = s.shape
    post = mixture_posteriors(s)
    order = np.argsort(-s, axis=1, kind="stable")
    p_sorted = np.take_along_axis(post, order, axis=1)
    top = np.concatenate([np.zeros((n, 1)), np.cumsum(p_sorted, axis=1)], axis=1)
    bottom_out = np.concatenate([np.zeros((n, 1)), np.cumsum(1 - p_sorted[:, ::-1], axis=1)],
                                axis=1)
    k = np.asarray(candidates, dtype=np.int64)
    c1 = np.floor(top[:, k] + 1e-9).astype(np.int64)
    ok = 2 * k <= m
    k2 = np.where(ok, k, 0)
    c2 = np.floor(top[:, k2] + bottom_out[:, k2] + 1e-9).astype(np.int64)
    plug_in = {
        "one": snj_epsilon_lower_bound(m, np.broadcast_to(k, c1.shape), c1, delta, level),
        "two": np.where(ok, snj_epsilon_lower_bound(m, np.broadcast_to(2 * k2, c2.shape), c2,
                                                    delta, level), -1.0)}
    if fdp:
        plug_in["fdp"] = gdp_mu_lower_bound(m, np.broadcast_to(k, c1.shape), c1, level)
    out = {}
    for name, b in plug_in.items():
        chosen = k[np.argmax(b, axis=1)]
        weak = np.flatnonzero(b.max(axis=1) <= 0)
        if weak.size:
            chosen[weak] = _expected_bound_choice(p_sorted[weak], k, name, delta, level)
        out[name] = chosen
    return out


#: The expected-bound rule evaluates each candidate's bound at most at this many counts
#: (evenly spaced over the counts the audits can plausibly reach), linear in between.
EXPECTED_BOUND_POINTS = 48


def _expected_bound_choice(p_sorted, candidates, analysis: str, delta: float,
                           level: float) -> np.ndarray:
    """Per audit, the candidate k with the largest expected bound of ``analysis`` ("one",
    "two": epsilon; "fdp": mu) when the inclusions are independent with the posteriors
    ``p_sorted`` (n, M) (sorted by decreasing score): the correct guesses among k are a
    Poisson-binomial count, taken as normal with its mean and variance (continuity
    corrected), the bound as a function of the count on at most
    :data:`EXPECTED_BOUND_POINTS` counts within 6 standard deviations, interpolated. A
    function of the scores alone. Returns k (n,) int."""
    n, m = p_sorted.shape
    zero = np.zeros((n, 1))
    mean_top = np.concatenate([zero, np.cumsum(p_sorted, axis=1)], axis=1)
    var_top = np.concatenate([zero, np.cumsum(p_sorted * (1 - p_sorted), axis=1)], axis=1)
    mean_out = np.concatenate([zero, np.cumsum(1 - p_sorted[:, ::-1], axis=1)], axis=1)
    var_out = var_top[:, -1:] - var_top[:, ::-1]         # the same p(1 - p), bottom k
    k = np.asarray(candidates, dtype=np.int64)
    plan = []      # per usable candidate: (j, r, mean (n,), sd (n,), counts evaluated)
    for j, kk in enumerate(k):     # a loop over the candidates, vectorised over audits
        if analysis == "two":
            if 2 * kk > m:
                continue
            r, mu, var = 2 * kk, mean_top[:, kk] + mean_out[:, kk], \
                var_top[:, kk] + var_out[:, kk]
        else:
            r, mu, var = kk, mean_top[:, kk], var_top[:, kk]
        sd = np.sqrt(np.maximum(var, 1e-12))
        lo = int(max(0, np.floor(np.min(mu - 6 * sd))))
        hi = int(min(r, np.ceil(np.max(mu + 6 * sd))))
        pts = np.unique(np.rint(np.linspace(lo, hi, min(hi - lo + 1,
                                                        EXPECTED_BOUND_POINTS)))
                        .astype(np.int64))
        plan.append((j, r, mu, sd, pts))
    # every candidate's bounds in one vectorised call
    rr = np.concatenate([np.full(pts.shape, r) for _, r, _, _, pts in plan])
    cc = np.concatenate([pts for *_, pts in plan])
    b_all = (gdp_mu_lower_bound(m, rr, cc, level) if analysis == "fdp" else
             snj_epsilon_lower_bound(m, rr, cc, delta, level))
    value = np.full((n, k.size), -1.0)
    start = 0
    for j, r, mu, sd, pts in plan:
        b_pts, start = b_all[start:start + pts.size], start + pts.size
        c = np.arange(r + 1)
        b = np.interp(c, pts, b_pts)
        cdf = ndtr((c[None, :] + 0.5 - mu[:, None]) / sd[:, None])
        pmf = np.diff(np.concatenate([zero, cdf], axis=1), axis=1)
        value[:, j] = pmf @ b
    return k[np.argmax(value, axis=1)]


def one_run_certificate(scores, included, delta: float, alpha: float = 0.05, *,
                        claim_mu: float | None = None, strategy: str = "scores",
                        seed: int = 0, fractions=GUESS_FRACTIONS) -> OneRunCertificate:
    """The one-run certificates of n audits at once (module docstring).

    Parameters
    ----------
    scores : array (n, M)
        Canary scores of each audit (high: "included").
    included : bool array (n, M)
        The inclusions (S_i = +1).
    delta : float
        The claim's delta, in [0, 1).
    alpha : float
        Significance of each audit's certificate, in (0, 1).
    claim_mu : float, optional
        The claim's mu when it is Gaussian-DP: the f-DP test certifies (and spends alpha).
        Without it the f-DP value is an estimate (computed when delta > 0).
    strategy : {"scores", "split", "grid"}
        "scores" (default): per audit and analysis, the guess count whose bound is largest
        when the inclusions are replaced by their posteriors under a two-component mixture
        fitted to the unlabeled scores, and where that promises no bound, the one with the
        largest expected bound under those posteriors (:func:`choose_from_scores`); a
        function of the output alone, so every canary is in the game and each analysis is
        one test.
        "split": a random :data:`SELECTION_FRACTION` of the canaries (from
        ``rng_for(seed, "one-run", "selection")``, the same columns in every audit) choose,
        per audit and analysis, the fraction of guesses with the largest bound among
        :data:`SELECTION_CANDIDATES` counts; the other canaries are the game: one test per
        analysis, k = that fraction of them. Conditional on the selection canaries'
        inclusions, the others' are still independent fair coins and the algorithm is
        (eps, delta)-DP in each, so Thm. 5.2 holds for them with m their number. "grid":
        every k of :func:`~dpclaims.analysis.guessing_game.guess_grid` (``fractions`` of
        M) is a test on all M canaries.
    seed : int
        Seeds the selection split.
    fractions : sequence of float
        The grid's fractions (``strategy="grid"``).

    Returns
    -------
    OneRunCertificate

    Raises
    ------
    ValueError
        Shapes that differ, non-finite scores, delta outside [0, 1), alpha outside (0, 1),
        an unknown strategy, fewer than 10 canaries for "split".
    """
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included)
    if s.ndim != 2 or inc.shape != s.shape:
        raise ValueError(f"scores and included must both have shape (n, M); got {s.shape} "
                         f"and {inc.shape}")
    m = s.shape[1]
    fdp = delta > 0
    certifies = fdp and claim_mu is not None
    if strategy == "grid":
        k = guess_grid(m, fractions)
        ok = 2 * k <= m
        tests = n_tests(m, k, certifies)
        got = _analyses(s, inc, k, np.where(ok, k, 0), k, delta, alpha / tests, fdp)
        m_test = m
    elif strategy == "scores":
        m_test = m
        tests = 2 + (1 if certifies else 0)
        level = alpha / tests
        cand = np.unique(np.rint(np.geomspace(1, max(1, m // 2),
                                              SELECTION_CANDIDATES)).astype(np.int64))
        k = choose_from_scores(s, cand, delta, level, fdp)
        got = _analyses(s, inc, k["one"][:, None], k["two"][:, None],
                        k["fdp"][:, None] if fdp else None, delta, level, fdp)
    else:
        if m < 10:
            raise ValueError(f"strategy 'split' needs at least 10 canaries, got M = {m}")
        sel = rng_for(seed, "one-run", "selection").permutation(m) < round(
            SELECTION_FRACTION * m)
        s1, i1, s2, i2 = s[:, sel], inc[:, sel], s[:, ~sel], inc[:, ~sel]
        m1, m_test = s1.shape[1], s2.shape[1]
        tests = 2 + (1 if certifies else 0)
        level = alpha / tests
        cand = np.unique(np.rint(np.geomspace(1, max(1, m1 // 2),
                                              SELECTION_CANDIDATES)).astype(np.int64))
        chosen = _analyses(s1, i1, cand, cand, cand, delta, level, fdp)

        def scaled(k1):
            return np.maximum(1, np.rint(k1 / m1 * m_test)).astype(np.int64)[:, None]

        k_two = np.minimum(scaled(chosen["two"][1]), m_test // 2)
        got = _analyses(s2, i2, scaled(chosen["one"][1]), k_two,
                        scaled(chosen["fdp"][1]) if fdp else None, delta, level, fdp)
    f = got.get("fdp")
    return OneRunCertificate(
        m, m_test, strategy, tests, alpha, delta, got["one"][1], got["one"][2], got["one"][0],
        got["two"][1], got["two"][2], got["two"][0],
        None if f is None else f[1], None if f is None else f[2], None if f is None else f[0],
        certifies, claim_mu if certifies else None)


def n_tests(canaries: int, k, fdp: bool) -> int:
    """The tests of a grid audit of M = ``canaries``: one-sided per k of the grid ``k``,
    two-sided per k with 2k <= M, f-DP per k when it certifies."""
    k = np.asarray(k)
    return int(k.size + np.sum(2 * k <= canaries) + (k.size if fdp else 0))


def certificate_capacity(cert: OneRunCertificate) -> float:
    """At least the largest certificate an audit like ``cert`` can give: the bounds of
    every guess correct at the most guesses (r = the test canaries' number), at its level
    (the evidence of all-correct guesses grows with their number)."""
    m, level = cert.test_canaries, cert.alpha / cert.n_tests
    out = float(snj_epsilon_lower_bound(m, m, m, cert.delta, level))
    if cert.fdp_certifies:
        out = max(out, gdp_epsilon(float(gdp_mu_lower_bound(m, m, m, level)), cert.delta))
    return out


# --------------------------------------------------------------------------- the audit


@dataclass(frozen=True)
class OneRunAudit:
    """The outcome of :func:`audit_one_run`.

    Attributes
    ----------
    certificate : OneRunCertificate
        One audit (n = 1) over ``runs * canaries_per_run`` pooled canaries.
    kind : {"mechanism", "algorithm"}
    canaries_per_run, runs : int
    claimed_epsilon : float
        The claim's epsilon (nats) at its delta.
    statistic : str
        How a canary's score was read off the output.
    """

    certificate: OneRunCertificate
    kind: str          # "mechanism" or "algorithm"
    canaries_per_run: int
    runs: int
    claimed_epsilon: float
    statistic: str

    @property
    def epsilon_lower_bound(self) -> float:
        return float(self.certificate.epsilon_lower_bound()[0])

    @property
    def refutes_claim(self) -> bool:
        return self.epsilon_lower_bound > self.claimed_epsilon

    def capacity(self) -> float:
        """:func:`certificate_capacity` of the certificate."""
        return certificate_capacity(self.certificate)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "canaries_per_run": self.canaries_per_run,
                "runs": self.runs, "statistic": self.statistic,
                "claimed_epsilon": self.claimed_epsilon,
                **self.certificate.row(0, self.runs)}


def inclusions(m: int, runs: int, seed: int) -> np.ndarray:
    """The inclusions (runs, m) of an audit: independent fair coins from
    ``rng_for(seed, "one-run", "inclusions")`` (bool)."""
    return rng_for(seed, "one-run", "inclusions").random((runs, m)) < 0.5


def offers_gradient_canaries(obj) -> bool:
    """True when ``obj`` is an algorithm with :class:`~dpclaims.audits.capabilities.
    HasGradientCanaries` (callable hooks and at least one slot)."""
    if not has_run(obj):
        return False
    caps = read_algorithm(obj)
    slots = caps.gradient_canary_slots
    return (caps.run_gradient_canaries is not None
            and caps.gradient_canary_coordinates is not None
            and isinstance(slots, (int, np.integer)) and slots >= 1)


def audit_one_run(obj, m: int, *, runs: int = 1, alpha: float = 0.05, seed: int = 0,
                  strategy: str = "scores", fractions=GUESS_FRACTIONS) -> OneRunAudit:
    """One-run audit of a mechanism or an algorithm with m Dirac canaries (module docstring).

    Parameters
    ----------
    obj : mechanism or algorithm
        A mechanism with ``release`` and a claimed ``sensitivity`` whose data are vector
        records (a sum query), or an algorithm with the gradient-canary capability
        (:class:`~dpclaims.audits.capabilities.HasGradientCanaries`).
    m : int
        Canaries per run (>= 2; at most the algorithm's ``gradient_canary_slots``).
    runs : int
        Independent runs, pooled (an algorithm only; a mechanism runs once).
    alpha : float
        Significance of the certificate, in (0, 1).
    seed : int
        Seeds the inclusions (``rng_for(seed, "one-run", "inclusions")``) and the run
        (``rng_for(seed, "one-run", "run")``).
    strategy : {"scores", "split", "grid"}
        How the guess counts are fixed (:func:`one_run_certificate`; the split from
        ``seed``).
    fractions : sequence of float
        The guess grid's fractions (``strategy="grid"``).

    Returns
    -------
    OneRunAudit

    Raises
    ------
    InvalidMechanismError
        A mechanism without a sensitivity, an algorithm without the capability or with
        fewer slots than m, an output of the wrong shape or with non-finite values.
    ValueError
        m < 2, runs < 1, runs > 1 for a mechanism, alpha outside (0, 1).
    """
    m = check_count(m, "m", minimum=2)
    runs = check_count(runs, "runs")
    alpha = check_probability(alpha, "alpha")
    inc = inclusions(m, runs, seed)
    rng = rng_for(seed, "one-run", "run")
    if has_run(obj):
        alg = read_algorithm(obj)
        scores, statistic = algorithm_canary_scores(alg, inc, rng)
        claim, kind = alg.claim, "algorithm"
    else:
        if runs != 1:
            raise ValueError(f"a mechanism's one-run audit runs it once (runs = 1), got "
                             f"runs = {runs}")
        mech = read_mechanism(obj)
        scores = _mechanism_scores(mech, inc[0], rng)[None, :]
        statistic = "coordinate i of the release"
        claim, kind = mech.claim, "mechanism"
    mu = gdp_mu_of_event(claim.dp_event) if claim.dp_event is not None else None
    if mu is not None and not math.isfinite(mu):
        mu = None
    cert = one_run_certificate(scores.reshape(1, -1), inc.reshape(1, -1), claim.delta, alpha,
                               claim_mu=mu, strategy=strategy, seed=seed,
                               fractions=fractions)
    return OneRunAudit(cert, kind, m, runs, float(claim.epsilon), statistic)


def vector_sum(data) -> np.ndarray:
    """The sum query of vector records: ``data`` (rows, m) -> (m,) (zeros for no rows)."""
    d = np.asarray(data, dtype=float)
    if d.ndim != 2:
        raise ValueError(f"data must be vector records of shape (rows, m), got {d.shape}")
    return d.sum(axis=0)


def dirac_dataset(included: np.ndarray, sensitivity: float, relation: str) -> np.ndarray:
    """The records of a mechanism's one-run audit (module docstring): (rows, m).

    add-remove: the rows Delta e_i of the included canaries; replace-one: all m rows,
    +-(Delta/2) e_i by inclusion."""
    inc = np.asarray(included, bool)
    m = inc.size
    if relation == "add-remove":
        idx = np.flatnonzero(inc)
        data = np.zeros((idx.size, m))
        data[np.arange(idx.size), idx] = sensitivity
        return data
    return np.diag(np.where(inc, 0.5, -0.5) * sensitivity)


def _mechanism_scores(mech, included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sens = sensitivity_of(mech)
    if sens is None:
        raise InvalidMechanismError(f"mechanism {mech.name!r} states no `sensitivity`: a "
                                    "one-run audit scales its Dirac canaries to it")
    data = dirac_dataset(included, float(sens.value), mech.claim.relation)
    out = real_array(mech.release(data, rng, 1),
                     f"mechanism {mech.name!r}: release(data, rng, 1)")
    if out.shape != (1, included.size):
        raise InvalidMechanismError(
            f"mechanism {mech.name!r}: a one-run audit with m = {included.size} Dirac "
            f"canaries needs a release of shape (1, {included.size}) (a sum query of the "
            f"vector records), got {out.shape}")
    return out[0]


def algorithm_canary_scores(alg, included: np.ndarray, rng: np.random.Generator):
    """Runs of ``alg`` with Dirac gradient canaries and their scores (module docstring).

    Parameters
    ----------
    alg : algorithm with :class:`~dpclaims.audits.capabilities.HasGradientCanaries`
    included : bool array (R, m)
        Canary i of run r included (add-remove: +C e_j(i), else absent; replace-one: +C
        e_j(i), else -C e_j(i)).
    rng : numpy Generator

    Returns
    -------
    (ndarray (R, m), str)
        The scores and the statistic's description.

    Raises
    ------
    InvalidMechanismError
        No capability, too few slots, outputs of the wrong shape or not finite.
    """
    alg = read_algorithm(alg)
    if not offers_gradient_canaries(alg):
        raise InvalidMechanismError(
            f"algorithm {alg.name!r} does not take Dirac gradient canaries "
            "(`run_gradient_canaries`, `gradient_canary_coordinates` and "
            "`gradient_canary_slots` >= 1): no one-run audit")
    runs, m = included.shape
    if m > alg.gradient_canary_slots:
        raise InvalidMechanismError(f"algorithm {alg.name!r} has room for "
                                    f"{alg.gradient_canary_slots} gradient canaries, asked "
                                    f"for m = {m}")
    signs = np.where(included, 1.0, -1.0 if alg.claim.relation == "replace-one" else 0.0)
    out = real_array(alg.run_gradient_canaries(alg.data, rng, signs),
                     f"algorithm {alg.name!r}: run_gradient_canaries(data, rng, signs)")
    coords = np.asarray(alg.gradient_canary_coordinates(m))
    if coords.shape != (m,) or not np.issubdtype(coords.dtype, np.integer):
        raise InvalidMechanismError(f"algorithm {alg.name!r}: gradient_canary_coordinates("
                                    f"{m}) must be {m} integers, got {coords!r:.80}")
    if out.shape[0] != runs:
        raise InvalidMechanismError(f"algorithm {alg.name!r}: run_gradient_canaries must "
                                    f"return (R = {runs}, ...), got {out.shape}")
    if alg.threat_model == "full-trace":
        if out.ndim != 3:
            raise InvalidMechanismError(f"algorithm {alg.name!r} declares a full trace: "
                                        f"(R, S, k) expected, got {out.shape}")
        up = out if alg.updates is None else real_array(
            alg.updates(out), f"algorithm {alg.name!r}: updates(releases)")
        return up[:, :, coords].sum(axis=1) / float(alg.clip), \
            "sum over steps of <update_s, e_j(i)> / C (the multi-run audit's trace projection)"
    flat = out.reshape(runs, -1)
    return flat[:, coords], "coordinate j(i) of the final output"
