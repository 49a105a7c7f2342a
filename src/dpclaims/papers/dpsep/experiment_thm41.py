"""DP-SEP Theorem 4.1 (the KL tail bound, dpsep_full_v0.txt Sec. 4): the Monte Carlo
studies behind its checks (the grid of part 1, the DP-SEP noise of part 2), at a
stated size. Numbers only; the verdicts are computed in
:mod:`dpclaims.papers.dpsep.checks_thm41`.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.analysis.gaussian import flatten_natural
from dpclaims.analysis.kl_tail_bound import (
    clopper_pearson,
    kl_tail_bound,
    kl_tail_study,
    loglog_slope,
    moment_noise_summary,
    natural_noise_moments,
    quantile_interval,
)
from dpclaims.execution.processes import limit_worker_threads, record_start, start_method
from dpclaims.papers.dpsep.calibration import DELTA, paper_sigma

#: The grid of part 1: dimensions, spectrum shapes (condition number of Σ_q), overall
#: scales (λ_max(Σ_q)) and noise levels σ_1 = σ_2.
GRID = {
    "d": (1, 2, 5, 10, 20),
    "condition": {"isotropic": 1.0, "κ=10": 10.0, "κ=100": 100.0},
    "scale": {"broad": 1.0, "concentrated": 1e-2},
    "sigma": (1e-3, 1e-2, 1e-1),
}
A_GRID = np.geomspace(1e-8, 1e8, 33)
LOOSENESS_A = (1e-4, 1e-2, 1.0)


ALPHA = 0.05

SENSITIVITY_READINGS = ("as-printed", "sep-invariant-recalibrated")
CALIBRATION = "paper:wor(q=1/N)x(T*N)"
EPSILON, EPOCHS, CLIP, DAMPING = 1.0, 40, 1.0, 1.0
N_VALUES = {"smoke": (100, 1000, 10000)}
N_VALUES_DEFAULT = (100, 300, 1000, 3000, 10000)
N_BROAD = 1000
BROADNESS = np.geomspace(1e-2, 1e2, 5)
#: Σ_1 (covariance of q times N) and μ_q: the per-record natural parameters
#: (Σ_1^{-1} μ_q, upper(Σ_1^{-1})) have L2 norm ≤ C = 1 (checked in the report text).
SIGMA1_SPECTRUM = (2.0, 4.0, 8.0)
MU_Q = np.array([0.6, -0.4, 0.3])

_SIGMA_CACHE: dict = {}


# --------------------------------------------------------------------------- helpers
def _rotation(d: int, seed) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _spd(spectrum, seed) -> np.ndarray:
    q = _rotation(len(spectrum), seed)
    out = (q * np.asarray(spectrum, float)) @ q.T
    return 0.5 * (out + out.T)


def grid_configs(seed: int) -> list[dict]:
    """The grid of part 1: one dict per configuration (label, d, condition, scale, sigma,
    sigma_q). Σ_q = Q diag(spectrum) Q^T with Q a seeded random rotation and the spectrum
    geometric from scale/κ to scale."""
    out = []
    for d in GRID["d"]:
        for cname, kappa in GRID["condition"].items():
            if d == 1 and kappa != 1.0:
                continue
            for sname, scale in GRID["scale"].items():
                for s in GRID["sigma"]:
                    i = len(out)
                    spectrum = np.geomspace(scale / kappa, scale, d) if d > 1 else [scale]
                    out.append({
                        "label": f"d={d}, {cname}, {sname}, σ1=σ2={s:g}",
                        "d": d, "condition": cname, "scale": sname, "sigma": s, "index": i,
                        "sigma_q": _spd(spectrum, np.random.SeedSequence([seed, 41, 1, i])),
                    })
    return out


def _grid_one(args):
    """One grid configuration. τ, A from a pilot; if no pilot draw has Σp PD (the noise
    swamps Σq), the fixed τ = 0.5, A = 2 are used (``tau_A_source == "given"``)."""
    cfg, seed, n_draws, alpha = args
    root = np.random.SeedSequence([seed, 41, 0, cfg["index"]])
    s = cfg["sigma"]
    # the pilot is drawn and decomposed once: for τ, A and for the check that some pilot
    # draw has Σq + E positive definite (eigvalsh), which picks the fixed τ, A otherwise
    return kl_tail_study(cfg["sigma_q"], s, s, A_GRID, n_draws, root, alpha=alpha,
                         n_pilot=max(1000, n_draws // 10), tau_A_if_not_pd=(0.5, 2.0))


def _sigma_job(n: int):
    return n, paper_sigma(CALIBRATION, n, EPOCHS, EPSILON, DELTA)


def _pool(workers: int):
    if workers <= 1:
        return None
    # forked only while no threaded runtime is loaded (dpclaims.execution.processes);
    # the jobs are module-level functions, so they also go to spawned processes. Each
    # worker runs one BLAS thread: the workers fill the cores (as CheckTimer's checks).
    method = start_method()
    record_start("DP-SEP Thm. 4.1 jobs", method, workers)
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method.method),
                               initializer=limit_worker_threads)


def _natural_draws(sigma_q, s: float, n: int, seed) -> object:
    d = sigma_q.shape[0]
    p = d + d * (d + 1) // 2
    noise = s * np.random.default_rng(seed).standard_normal((n, p))
    return natural_noise_moments(sigma_q, MU_Q[:d], noise)


def _g(x, digits=3) -> str:
    return "inf" if x == np.inf else f"{x:.{digits}g}"


# --------------------------------------------------------------------------- part 2
MATCHINGS = ("std", "robust")


def _tail_vs_bound(sigma_q, s, summ, n, seed_key, alpha):
    """Bound at the induced (σ1, σ2) vs the true tail under natural-parameter noise.

    ``ci``, ``ci_conditional``: two-sided Clopper-Pearson intervals of the tails, each at
    level 1 - ``alpha`` (returned as ``ci_alpha``: the confidence of the checks' bounds).

    Two readings of "the σ1, σ2 this noise induces" (``MATCHINGS``): ``"std"``, the pooled
    standard deviations (second moments matched); ``"robust"``, 1.4826 · MAD (the bulk
    matched, heavy tails ignored)."""
    pilot = _natural_draws(sigma_q, s, max(1000, n // 4), np.random.SeedSequence(seed_key + [0]))
    main = _natural_draws(sigma_q, s, n, np.random.SeedSequence(seed_key + [1]))
    x = 1.0 + pilot.lam[pilot.pd, 0]
    if x.size == 0:
        return None, main
    tau, A = 0.999 * float(x.min()), 1.001 * float(x.max())
    xm = np.where(main.pd, 1.0 + main.lam[:, 0], -np.inf)
    event = (tau < xm) & (xm < A)
    exceed = main.kl[:, None] >= A_GRID[None, :]
    cnt_u, cnt_c = exceed.sum(0), exceed[event].sum(0)
    ci_u, ci_c = clopper_pearson(cnt_u, n, alpha), clopper_pearson(cnt_c, int(event.sum()), alpha)
    out = {"tau": tau, "A": A, "tail": cnt_u / n, "ci": ci_u,
           "tail_conditional": cnt_c / max(int(event.sum()), 1), "ci_conditional": ci_c,
           "n_event": int(event.sum()), "ci_alpha": alpha}
    d = sigma_q.shape[0]
    for match in MATCHINGS:
        key = "" if match == "std" else "robust_"
        sig1, sig2 = summ[f"{key}sigma_1"], summ[f"{key}sigma_2"]
        bound = kl_tail_bound(A_GRID, d, sigma_q, sig1, sig2, tau, A, "as-printed")
        out[match] = {"sigma_1": sig1, "sigma_2": sig2, "bound": bound,
                      "violated_unconditional": ci_u[:, 0] > bound,
                      "violated_conditional": ci_c[:, 0] > bound}
    return out, main


def _dpsep_part(budget, seed: int, sigmas: dict, n_values, out_dir: Path):
    sigma1 = _spd(SIGMA1_SPECTRUM, np.random.SeedSequence([seed, 41, 3]))
    per_record = flatten_natural(np.linalg.solve(sigma1, MU_Q), np.linalg.inv(sigma1))
    n = budget.kl_draws
    k = len(n_values)
    n_tests = len(SENSITIVITY_READINGS) * k
    alpha_cp = ALPHA / (n_tests * 2 * len(MATCHINGS) * A_GRID.size)
    results = {}
    rows = []
    for r, reading in enumerate(SENSITIVITY_READINGS):
        kl = np.empty((k, n))
        per_n = []
        for j, big_n in enumerate(n_values):
            params = DPSEPParams(CLIP, DAMPING, sigmas[big_n], reading)
            s = params.noise_std(big_n)
            sigma_q = sigma1 / big_n
            # moment-noise levels from a separate sample, then the bound vs the true tail
            probe = _natural_draws(sigma_q, s, n, np.random.SeedSequence([seed, 41, 4, r, j]))
            summ = moment_noise_summary(probe.e[probe.pd], probe.E[probe.pd]) \
                if probe.pd.sum() >= 2 else None
            tb = None
            if summ is not None:
                tb, main = _tail_vs_bound(sigma_q, s, summ, n, [seed, 41, 5, r, j], alpha_cp)
            else:
                main = probe
            kl[j] = main.kl
            med, lo, hi = quantile_interval(main.kl, 0.5, ALPHA / n_tests)
            entry = {"N": big_n, "sigma": sigmas[big_n], "noise_std": s,
                     "frac_not_pd": float(1 - main.pd.mean()), "median_kl": med,
                     "median_kl_ci": [lo, hi], "mean_kl": float(np.mean(main.kl)),
                     "moment_noise": summ, "tail_vs_bound": tb}
            per_n.append(entry)
            rows.append([reading, big_n, round(sigmas[big_n], 4), s,
                         summ["sigma_1"] if summ else float("nan"),
                         summ["sigma_2"] if summ else float("nan"),
                         summ["offdiag_over_diag_std"] if summ else float("nan"),
                         summ["ks_E"] if summ else float("nan"),
                         summ["kurtosis_E"] if summ else float("nan"),
                         entry["frac_not_pd"], med,
                         f"[{_g(lo)}, {_g(hi)}]",
                         *["yes" if tb and np.any(tb[m][f"violated_{t}"]) else "no"
                           for m in MATCHINGS for t in ("unconditional", "conditional")]])
        slope = loglog_slope(np.asarray(n_values, float), kl,
                             np.random.SeedSequence([seed, 41, 6, r]), q=0.5,
                             alpha=ALPHA / len(SENSITIVITY_READINGS), n_boot=2000)
        results[reading] = {"per_n": per_n, "slope": slope, "kl": kl}
    norm_ok = float(np.linalg.norm(per_record))
    return results, rows, sigma1, norm_ok
