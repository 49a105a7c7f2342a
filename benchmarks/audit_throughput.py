"""Throughput of the audit engine: vectorised audits vs a per-trial Python loop.

Run: ``.venv/bin/python benchmarks/audit_throughput.py [--quick]``.

A **trial** is what :func:`dpclaims.audits.core.audit` counts in ``n_trials``: one
output of the mechanism on each of the two neighbouring datasets. Rates are trials
per second of wall time; every ratio is against the per-trial Python loop of the
same section, measured in the same run (the baseline). The loop only draws
outputs (``mechanism.release(data, rng, 1)`` on D0 and on D1 per trial), with no
scoring or statistics, so the ratios against it are conservative for the audit.

Sections
--------
gaussian
    The Gaussian mechanism (1-D sum query, sensitivity 1, true epsilon 1 at
    delta = 1e-5; pair ``zeros(10)`` vs record 0 replaced by 1.0). ``audit`` of
    10^6 trials per dataset with workers = 1, 2, 4 and the same seed: the
    certificates must be identical (asserted; blocks have their own spawned
    seeds). Target: 10^6 trials audited in under 10 s on 2 cores (workers = 2),
    printed as PASS / FAIL. Also the vectorised ``release`` alone (10^6 outputs
    per dataset in one call). The baseline loop runs 20 000 trials (2 000 with
    ``--quick``) and is extrapolated to 10^6.
dpsep-epoch
    One DP-SEP epoch (Alg. 3, T = 1, "as-printed" reading, C = 1, gamma = 1,
    sigma = 1) on the first 200 training records of the fair data (probit),
    as a mechanism (:class:`DPSEPEpoch`) whose output is the final theta_f of each
    trial, shape (n, 54). Its ``release`` calls ``run_sep(..., n_trials=n)``,
    which advances all n trials with one numpy call per step. The pair replaces
    record 0 by the worst-case canaries of :func:`worst_case_canary`. Vectorised
    release and ``audit`` (workers 1 and 2, certificates asserted identical) vs a
    loop of ``n_trials = 1`` calls.

kl-sampler (d=10)
    DP-SEP Thm. 4.1's Monte Carlo (:func:`kl_tail_study`'s inner work): draws of the
    noise (e, E) at d = 10 (sigma_1 = sigma_2 = 0.01, Sigma_q of condition number 10) and
    the eigenvalues of Sigma_q^{-1} E with KL[q||p] per draw (``_spectral``). A per-draw
    loop (``n = 1`` calls, the baseline), the vectorised chunk as shipped (``eigvalsh``
    and a batched solve), the same chunk with ``eigh``'s eigenvectors for the quadratic
    form (``eigenvectors=True``: the code before issue 23's change, a second baseline,
    also the shipped fallback), and the
    whole ``kl_tail_study`` over the 33 thresholds of the check, pilot included. Issue
    23's target: 100k draws per second. "trials" are draws in this section.

gaussian scaling
    The same audit at 10^6 and 10^7 trials per dataset, one worker, alternating pairs
    (three; one with ``--quick``): the ratio of the medians, linear when <= 11.
gaussian d=1 / d=32 workers
    1 against 2 workers at 10^6 trials per dataset on the Gaussian mechanism of a
    1- and a 32-dimensional sum, alternating pairs (three; one with ``--quick``):
    the ratio of the medians against issue 23's target of 1.6.

``--quick`` keeps the Gaussian audit at 10^6 trials (about a second per audit)
and shrinks the loops and the DP-SEP section, to finish in well under a minute.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import dp_accounting
import numpy as np

from dpclaims.algorithms.sep.likelihoods import Probit
from dpclaims.algorithms.sep.sep import DPSEPParams, run_sep
from dpclaims.algorithms.sep.step import DPSEPStep, neighbouring_datasets, worst_case_canary
from dpclaims.analysis import kl_tail_bound
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import GaussianMechanism, PrivacyClaim, replace_one
from dpclaims.data.datasets import load_fair
from dpclaims.papers.dpsep.checks import prior_natural
from dpclaims.papers.dpsep.experiment_thm41 import A_GRID, grid_configs

DELTA = 1e-5
TARGET_SECONDS = 10.0
TARGET_TRIALS = 1_000_000


def sum_query(data) -> np.ndarray:
    """The 1-D sum query (module level, so the mechanism pickles for any start method)."""
    return np.atleast_1d(np.sum(data))


@dataclass(frozen=True)
class DPSEPEpoch:
    """One DP-SEP epoch from theta_f = 0, releasing the final site theta_f (p,).

    A :class:`~dpclaims.audits.mechanism.Mechanism`: ``release(data, rng, n)``
    runs ``run_sep(x, y, ..., epochs=1, n_trials=n)`` on ``data = (x, y)`` and
    returns theta_f, shape (n, p), one row per independent run. ``claim``: the
    per-release Gaussian claim of Prop. 1 (epsilon = get_epsilon_gaussian(sigma,
    delta), replace-one), each record entering one step of the epoch; this
    benchmark measures speed, not whether the claim holds.
    """

    params: DPSEPParams
    likelihood: object
    theta_0: np.ndarray
    delta: float = DELTA

    @property
    def name(self) -> str:
        return f"dpsep-epoch[{self.params.reading}]"

    @property
    def claim(self) -> PrivacyClaim:
        sigma = self.params.noise_multiplier
        return PrivacyClaim(dp_accounting.get_epsilon_gaussian(sigma, self.delta), self.delta,
                            "replace-one", dp_accounting.GaussianDpEvent(sigma))

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        x, y = data
        return run_sep(x, y, self.likelihood, self.theta_0, epochs=1, n_trials=n,
                       params=self.params, rng=rng).theta_f


def time_loop(mech, pair, n_loop: int) -> float:
    """Seconds for n_loop trials drawn one at a time: release(d0, rng, 1), release(d1, rng, 1)."""
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for _ in range(n_loop):
        mech.release(pair.d0, rng, 1)
        mech.release(pair.d1, rng, 1)
    return time.perf_counter() - start


def time_release(mech, pair, n: int) -> float:
    """Seconds for n trials in one vectorised release per dataset."""
    rng = np.random.default_rng(2)
    start = time.perf_counter()
    mech.release(pair.d0, rng, n)
    mech.release(pair.d1, rng, n)
    return time.perf_counter() - start


def time_audits(mech, pair, n: int, workers_list, seed: int = 0):
    """(seconds per worker count, results) of audit(mech, pair, n, seed=seed, workers=w)."""
    seconds, results = [], []
    for w in workers_list:
        start = time.perf_counter()
        results.append(audit(mech, pair, n, seed=seed, workers=w))
        seconds.append(time.perf_counter() - start)
    return seconds, results


def check_identical(section: str, workers_list, results) -> str:
    """Assert equal certificates across worker counts; say whether the whole results agree."""
    certs = [r.epsilon_lower_bound for r in results]
    assert all(c == certs[0] for c in certs), (
        f"{section}: certificates differ across workers {workers_list}: {certs}")
    same = all(r.to_dict() == results[0].to_dict() for r in results)
    return (f"{section}: certificate identical across workers {', '.join(map(str, workers_list))}"
            f" (epsilon_lb = {certs[0]:.6f}, claim {results[0].claim.epsilon:.4f}); "
            f"full results {'identical' if same else 'DIFFER in estimates'}")


def gaussian_section(n_loop: int, workers_list) -> tuple[list, list]:
    sigma = dp_accounting.get_sigma_gaussian(1.0, DELTA)
    mech = GaussianMechanism(sum_query, 1.0, sigma, DELTA)
    pair = replace_one(np.zeros(10), 0, 1.0)
    audit(mech, pair, 1_000, seed=0)  # warm-up: imports and first-call costs
    loop_s = time_loop(mech, pair, n_loop)
    release_s = time_release(mech, pair, TARGET_TRIALS)
    audit_s, results = time_audits(mech, pair, TARGET_TRIALS, workers_list)
    rows = [("gaussian", "per-trial loop (baseline)", 1, n_loop, loop_s),
            ("gaussian", "vectorised release", 1, TARGET_TRIALS, release_s)]
    rows += [("gaussian", "audit", w, TARGET_TRIALS, s)
             for w, s in zip(workers_list, audit_s, strict=True)]
    notes = [check_identical("gaussian", workers_list, results)]
    two = dict(zip(workers_list, audit_s, strict=True)).get(2)
    verdict = "PASS" if two is not None and two < TARGET_SECONDS else "FAIL"
    notes.append(f"gaussian target: 10^6 trials per dataset audited in < {TARGET_SECONDS:g} s "
                 f"with 2 workers: {two:.2f} s -> {verdict}")
    notes.append(f"gaussian baseline extrapolated: the per-trial loop would need "
                 f"{loop_s / n_loop * TARGET_TRIALS:.1f} s for 10^6 trials")
    return rows, notes


def scaling_section(big: int, repeats: int) -> tuple[list, list]:
    """10^6 against ``big`` trials per dataset (one worker), alternating, ``repeats``
    pairs: the ratio of the medians (issue 23: linear is <= 1.1 x big / 10^6)."""
    sigma = dp_accounting.get_sigma_gaussian(1.0, DELTA)
    mech = GaussianMechanism(sum_query, 1.0, sigma, DELTA)
    pair = replace_one(np.zeros(10), 0, 1.0)
    audit(mech, pair, 1_000, seed=0)
    small_s, big_s = [], []
    for _ in range(repeats):
        small_s.append(time_audits(mech, pair, TARGET_TRIALS, (1,))[0][0])
        big_s.append(time_audits(mech, pair, big, (1,))[0][0])
    a, b = float(np.median(small_s)), float(np.median(big_s))
    rows = [("gaussian scaling", "audit, median", 1, TARGET_TRIALS, a),
            ("gaussian scaling", "audit, median", 1, big, b)]
    ratio = b / a
    verdict = "PASS" if ratio <= 1.1 * big / TARGET_TRIALS else "FAIL"
    return rows, [f"gaussian scaling: {big:.0e} vs {TARGET_TRIALS:.0e} trials per dataset: "
                  f"{b:.2f} s vs {a:.2f} s, ratio {ratio:.1f} for {big // TARGET_TRIALS}x the "
                  f"trials (median of {repeats} alternating pairs; linear <= "
                  f"{1.1 * big / TARGET_TRIALS:.0f}x) -> {verdict}"]


def vector_sum(data) -> np.ndarray:
    """The d-dimensional sum query of records (n, d) (module level, picklable)."""
    return np.sum(np.atleast_2d(data), axis=0)


def workers_section(dims, repeats: int) -> tuple[list, list]:
    """1 against 2 workers on a 10^6-trial Gaussian audit of a d-dimensional sum, for
    each d in ``dims``, alternating, ``repeats`` pairs: the ratio of the medians
    (issue 23's target: >= 1.6 on 2 cores)."""
    sigma = dp_accounting.get_sigma_gaussian(1.0, DELTA)
    rows, notes = [], []
    for d in dims:
        mech = GaussianMechanism(vector_sum, 1.0, sigma, DELTA)
        base = np.zeros((10, d))
        other = base[0].copy()
        other[0] = 1.0
        pair = replace_one(base, 0, other)
        audit(mech, pair, 1_000, seed=0, workers=2)
        one, two = [], []
        for _ in range(repeats):
            one.append(time_audits(mech, pair, TARGET_TRIALS, (1,))[0][0])
            two.append(time_audits(mech, pair, TARGET_TRIALS, (2,))[0][0])
        a, b = float(np.median(one)), float(np.median(two))
        draw = float(np.median([time_blocks(mech, pair, TARGET_TRIALS) for _ in range(repeats)]))
        start = float(np.median([pool_start_seconds() for _ in range(3)]))
        bound = a / (a - draw / 2 + start)
        tag = f"gaussian d={d} workers"
        rows += [(tag, "audit, median", 1, TARGET_TRIALS, a),
                 (tag, "audit, median", 2, TARGET_TRIALS, b),
                 (tag, "drawing alone, median", 1, TARGET_TRIALS, draw)]
        notes.append(f"{tag}: 1 worker {a:.2f} s, 2 workers {b:.2f} s: {a / b:.2f}x (median of "
                     f"{repeats} alternating pairs; target >= 1.6x) -> "
                     f"{'PASS' if a / b >= 1.6 else 'FAIL'}; the audit's blocks drawn alone "
                     f"take {draw:.2f} s ({draw / a:.0%} of the one-worker audit) and a pool of "
                     f"2 forked workers {start:.3f} s to start and stop, so two workers that "
                     f"share only the drawing reach at most {bound:.2f}x")
    return rows, notes


def time_blocks(mech, pair, n: int, block_size: int = 65_536) -> float:
    """Seconds to draw the audit's 2 x n outputs in one process, in its blocks of
    ``block_size`` (the part of an audit that its workers share)."""
    rng = np.random.default_rng(4)
    start = time.perf_counter()
    for data in (pair.d0, pair.d1):
        for begin in range(0, n, block_size):
            mech.release(data, rng, min(block_size, n - begin))
    return time.perf_counter() - start


def pool_start_seconds() -> float:
    """Seconds to start a pool of two forked processes, run a no-op on each, and stop it
    (what :func:`~dpclaims.audits.core.audit` pays once per audit with two workers)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork")
    start = time.perf_counter()
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        list(pool.map(abs, range(2)))
    return time.perf_counter() - start


def dpsep_section(n_records: int, n_loop: int, n_release: int, n_audit: int,
                  workers_list) -> tuple[list, list]:
    data = load_fair()
    x, y = data.x_train[:n_records], data.y_train[:n_records]
    params = DPSEPParams(1.0, 1.0, 1.0, "as-printed")
    theta_0, _ = prior_natural(data.dim, params.clipping_norm)
    step = DPSEPStep(params, Probit(), np.zeros_like(theta_0), theta_0, n_records, index=0)
    pair = neighbouring_datasets(x, y, 0, worst_case_canary(step, x, y))
    mech = DPSEPEpoch(params, Probit(), theta_0)
    mech.release(pair.d0, np.random.default_rng(0), 2)  # warm-up
    loop_s = time_loop(mech, pair, n_loop)
    release_s = time_release(mech, pair, n_release)
    audit_s, results = time_audits(mech, pair, n_audit, workers_list)
    tag = f"dpsep-epoch (N={n_records})"
    eigh_s = time_epoch_eigh(n_release, data.dim, n_records)
    rows = [(tag, "per-trial loop (baseline)", 1, n_loop, loop_s),
            (tag, "vectorised release", 1, n_release, release_s),
            (tag, "its eigh calls alone", 1, n_release, eigh_s)]
    rows += [(tag, "audit", w, n_audit, s) for w, s in zip(workers_list, audit_s, strict=True)]
    per_loop, per_vec, per_eigh = loop_s / n_loop, release_s / n_release, eigh_s / n_release
    notes = [check_identical("dpsep-epoch", workers_list, results),
             f"{tag}: vectorised release {per_loop / per_vec:.1f}x the per-trial loop (issue "
             f"23's target: 50x) -> {'PASS' if per_loop / per_vec >= 50 else 'FAIL'}; the "
             f"epoch's batched eigh of {data.dim} x {data.dim} cavity precisions alone takes "
             f"{eigh_s / release_s:.0%} of the release, so with every other part of the epoch "
             f"free the ratio would be at most {per_loop / per_eigh:.0f}x"]
    return rows, notes


def time_epoch_eigh(n_trials: int, d: int, n_steps: int) -> float:
    """Seconds for the ``np.linalg.eigh`` calls of one DP-SEP epoch of ``n_trials`` trials on
    each of the two datasets: ``n_steps`` calls per dataset, each on a batch (n_trials, d, d)
    of symmetric matrices (one cavity precision per trial, :func:`cavity_moments`). The
    matrices are random symmetric ones with mixed-sign eigenvalues, as the noisy epoch's
    are (96 % of its cavities need the projection of v1 Sec. 3.3)."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(n_trials, d, d))
    batch = a + np.swapaxes(a, 1, 2)
    start = time.perf_counter()
    for _ in range(2 * n_steps):
        np.linalg.eigh(batch)
    return time.perf_counter() - start


def kl_section(n_loop: int, n_vec: int, n_study: int) -> tuple[list, list]:
    """Thm. 4.1's KL sampler at d = 10: per-draw loop, vectorised chunks (as shipped and
    with eigenvectors), and the whole study; the KLs of the two chunk forms must agree."""
    d, s = 10, 1e-2
    cfg = next(c for c in grid_configs(0)
               if c["d"] == d and c["condition"] == "κ=10" and c["scale"] == "broad"
               and c["sigma"] == s)
    chol_inv = kl_tail_bound._chol_inv(cfg["sigma_q"])
    chunk = 2**21 // d**2

    def draws(n, size, eigenvectors=False):
        rng = np.random.default_rng(3)
        start, out = time.perf_counter(), []
        for begin in range(0, n, size):
            e, E = kl_tail_bound.sample_noise(rng, min(size, n - begin), d, s, s)
            out.append(kl_tail_bound._spectral(chol_inv, e, E, eigenvectors=eigenvectors)[1])
        return time.perf_counter() - start, np.concatenate(out)

    loop_s, _ = draws(n_loop, 1)
    vec_s, kl = draws(n_vec, chunk)
    eig_s, kl_eig = draws(n_vec, chunk, eigenvectors=True)
    finite = np.isfinite(kl)
    assert np.array_equal(finite, np.isfinite(kl_eig))
    worst = float(np.max(np.abs(kl[finite] - kl_eig[finite]) / kl_eig[finite]))
    start = time.perf_counter()
    study = kl_tail_bound.kl_tail_study(cfg["sigma_q"], s, s, A_GRID, n_study, 0)
    study_s = time.perf_counter() - start
    tag = "kl-sampler (d=10)"
    rows = [(tag, "per-draw loop (baseline)", 1, n_loop, loop_s),
            (tag, "vectorised, eigh (before)", 1, n_vec, eig_s),
            (tag, "vectorised, eigvalsh+solve", 1, n_vec, vec_s),
            (tag, "kl_tail_study, pilot incl.", 1, n_study + study.n_pilot, study_s)]
    rate = (n_study + study.n_pilot) / study_s
    notes = [f"{tag}: the two vectorised forms' KLs agree to {worst:.1e} relative; "
             f"kl_tail_study {rate:,.0f} draws/s against issue 23's 100,000 -> "
             f"{'PASS' if rate >= 1e5 else 'FAIL'}"]
    return rows, notes


def print_table(rows) -> None:
    loop_rate = {}
    print(f"{'section':<24}{'method':<28}{'workers':>8}{'trials':>10}{'seconds':>10}"
          f"{'trials/s':>12}{'vs loop':>10}")
    for section, method, workers, trials, seconds in rows:
        rate = trials / seconds
        loop_rate.setdefault(section, rate)
        print(f"{section:<24}{method:<28}{workers:>8d}{trials:>10d}{seconds:>10.3f}"
              f"{rate:>12.0f}{rate / loop_rate[section]:>10.1f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="shorter loops and a smaller DP-SEP section (< 60 s)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    if args.quick:
        g_loop, s_loop, s_release, s_audit = 2_000, 10, 500, 1_000
    else:
        g_loop, s_loop, s_release, s_audit = 20_000, 50, 10_000, 10_000
    load_before = os.getloadavg()
    g_rows, g_notes = gaussian_section(g_loop, (1, 2, 4))
    c_rows, c_notes = scaling_section(10 * TARGET_TRIALS, 1 if args.quick else 3)
    w_rows, w_notes = workers_section((1, 32), 1 if args.quick else 3)
    s_rows, s_notes = dpsep_section(200, s_loop, s_release, s_audit, (1, 2))
    k_rows, k_notes = kl_section(*((2_000, 100_000, 100_000) if args.quick
                                   else (10_000, 1_000_000, 1_000_000)))
    wall = time.perf_counter() - start

    print(f"audit throughput ({'quick' if args.quick else 'full'} run, "
          f"{os.cpu_count()} CPUs); a trial = one output on each dataset; load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after (a loaded machine's "
          "seconds are upper bounds: read the ratios)")
    print_table(g_rows + c_rows + w_rows + s_rows + k_rows)
    for note in g_notes + c_notes + w_notes + s_notes + k_notes:
        print(note)
    print(f"total wall time: {wall:.1f} s")


if __name__ == "__main__":
    main()
