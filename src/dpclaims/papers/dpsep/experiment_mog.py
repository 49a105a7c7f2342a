"""DP-SEP's mixture-of-Gaussians experiment (v0 Sec. 6.1 / Table 1 / Fig. 1; v1 Sec. 6.1 / Table 1).

:func:`run_mog_experiment` reproduces the experiment at a chosen size: a synthetic data
set (or several), a Gibbs ground truth per data set, and EP, SEP, clipped SEP
(C in {1, 10, 20}), DP-SEP (epsilon in {1, 5, 50}, delta = 1e-5, C = 1, gamma = 1, every
``DPSEPParams`` reading) and DP-EM (both readings; also non-private EM) with ``n_runs``
independent runs each, vectorised. It returns every metric per run with mean and std,
and writes the two figures. All SEP-family settings advance together in one loop
(:func:`dpclaims.algorithms.sep.mog.run_mog_sep_batch`).

Choices the paper leaves open, made explicit here: m = 0 (the prior mean); "100
iterations" read as ``epochs`` passes (an argument); the prior's ||theta_0|| = sqrt(J d)
exceeds C = 1, handled by ``prior_norm`` ("clip" by default: Alg. 3's "we clip the
natural parameters"); a random symmetry-breaking initialisation drawn from the prior
(q at the prior is a fixed point where all components coincide); the ground truth by
Gibbs (the paper: NUTS); DP-EM's record clipping radius (prior-predictive 99.9 %
quantile, data independent).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from dpclaims.algorithms.sep.mog import (
    DPEM_READINGS,
    READINGS,
    default_data_radius,
    generate_mog_data,
    gibbs_mog,
    mog_metrics,
    prior_natural,
    run_dp_em,
    run_mog_ep,
    run_mog_sep_batch,
)
from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.analysis.validation import check_count, check_delta, check_positive
from dpclaims.papers.dpsep.figures import write_mog_figures

PAPER_CALIBRATION = "paper:wor(q=1/N)x(T*N)"
METRIC_KEYS = ("fnorm_mean", "fnorm_cov", "fnorm_avg", "kl_nearest", "kl_hungarian",
               "kl_rev_nearest", "kl_rev_hungarian")  # plus "total_variance" (Σ_j tr V_j)


def _paper_sigma_for(n_records: int, epochs: int, delta: float):
    from dpclaims.papers.dpsep.calibration import paper_sigma

    def sigma_for(epsilon: float) -> float:
        return paper_sigma(PAPER_CALIBRATION, n_records, epochs, epsilon, delta)
    return sigma_for


def _summary(values) -> dict:
    v = np.asarray(values, dtype=float)
    finite = v[np.isfinite(v)]
    return {"values": [float(a) for a in v],
            "mean": float(np.mean(v)) if v.size else float("nan"),
            "std": float(np.std(v, ddof=1)) if v.size > 1 else 0.0,
            "n_infinite": int(np.sum(np.isinf(v))),
            "mean_finite": float(np.mean(finite)) if finite.size else float("nan")}


def _method_names(clip_norms, epsilons, readings, dpem_readings):
    names = ["EP", "SEP"]
    clip_readings = [r for r in readings if r != "sep-invariant-recalibrated"] or ["as-printed"]
    names += [f"clipped SEP C={c:g} [{r}]" for c in clip_norms for r in clip_readings]
    names += [f"DP-SEP eps={e:g} [{r}]" for e in epsilons for r in readings]
    names += [f"EM [{r}]" for r in dpem_readings]
    names += [f"DP-EM eps={e:g} [{r}]" for e in epsilons for r in dpem_readings]
    return names


def run_mog_experiment(*, dim: int = 2, epochs: int = 100, n_runs: int = 5,
                       gibbs_samples: int = 2000, gibbs_burn_in: int = 500,
                       gibbs_chains: int = 4, seed: int = 0, out_dir=None, sigma_for=None,
                       readings=READINGS, dpem_readings=DPEM_READINGS,
                       n_records: int = 1000, n_components: int = 4, n_datasets: int = 1,
                       clip_norms=(1.0, 10.0, 20.0), epsilons=(1.0, 5.0, 50.0),
                       delta: float = 1e-5, dp_clipping_norm: float = 1.0,
                       damping: float = 1.0, prior_norm: str = "clip",
                       dpem_data_radius: float | None = None,
                       dpem_iterations: int | None = None,
                       ep_invalid_cavity: str = "skip",
                       figure_reading: str | None = None) -> dict:
    """Run the v0/v1 Sec. 6.1 experiment and return every metric per method.

    Parameters
    ----------
    dim : int
        d (v0's figure: 2; v1: 4).
    epochs : int
        Passes over the data for EP/SEP/DP-SEP (the paper's "100 iterations").
    n_runs : int
        Independent runs per method (own permutations, initialisation and noise; v1:
        "averages across five independent runs").
    gibbs_samples, gibbs_burn_in, gibbs_chains : int
        Ground-truth sampler size (:func:`dpclaims.algorithms.sep.mog.gibbs_mog`).
    seed : int
        Root of a SeedSequence; data set k, its Gibbs chains and every method's runs get
        spawned children. Same seed, same result.
    out_dir : path or None
        Where ``mog_posteriors_d{dim}.png`` and ``mog_metrics_d{dim}.png`` go (None: no
        figures).
    sigma_for : callable(epsilon) -> noise multiplier, optional
        Default: the paper's calibration, ``dpclaims.papers.dpsep.checks.paper_sigma(
        "paper:wor(q=1/N)x(T*N)", N, epochs, epsilon, delta)``.
    readings : sequence of DPSEPParams readings for DP-SEP (clipped SEP uses those
        among them that differ without noise: "as-printed", "sep-invariant").
    dpem_readings : sequence of DP-EM readings ("means-only", "means-and-covariances").
    n_records, n_components : int
        N (1000) and J (4).
    n_datasets : int
        Data sets (the paper has one); metrics are pooled over data sets x runs.
    clip_norms : clipped-SEP C values; epsilons : DP epsilons; delta : DP delta.
    dp_clipping_norm, damping : C and gamma of DP-SEP (the paper: 1, 1).
    prior_norm : {"clip", "allow", "raise"}
        Handling of ||theta_0|| = sqrt(J d) > C (:mod:`dpclaims.algorithms.sep.mog`).
    dpem_data_radius : float, optional
        DP-EM's record clipping radius R (default
        :func:`dpclaims.algorithms.sep.mog.default_data_radius`, data independent).
    dpem_iterations : int, optional
        DP-EM's T (default ``epochs``).
    ep_invalid_cavity : {"skip", "raise"}
        EP's handling of an indefinite cavity.
    figure_reading : str, optional
        Reading shown in the posterior figure's clipped/DP-SEP panels (default the
        first of ``readings``).

    Returns
    -------
    dict
        ``settings``, ``sigma`` (epsilon -> noise multiplier), ``prior`` (the norm
        finding), ``gibbs`` (per data set: R-hat, relabelled fraction, passes),
        ``methods`` (name -> {"kind", "settings", "metrics": {key: {values, mean, std,
        n_infinite, mean_finite}}, "projections", "final_projections", ...}),
        ``figures`` (paths) and ``timing`` (seconds per stage).

    Raises
    ------
    ValueError
        On bad arguments (counts < 1, delta outside [0, 1), C <= 0, unknown readings).
    """
    t_start = time.perf_counter()
    dim = check_count(dim, "dim")
    epochs = check_count(epochs, "epochs")
    n_runs = check_count(n_runs, "n_runs")
    n_records = check_count(n_records, "n_records", minimum=2)
    n_datasets = check_count(n_datasets, "n_datasets")
    delta = check_delta(delta)
    dp_c = check_positive(dp_clipping_norm, "dp_clipping_norm")
    damping = check_positive(damping, "damping")
    for c in clip_norms:
        check_positive(c, "clip_norms entry")
    readings, dpem_readings = _checked_readings(readings, dpem_readings)
    em_T = epochs if dpem_iterations is None else check_count(dpem_iterations,
                                                              "dpem_iterations")
    if sigma_for is None:
        sigma_for = _paper_sigma_for(n_records, epochs, delta)
    timing = {"gibbs_s": 0.0, "sep_batch_s": 0.0, "ep_s": 0.0, "dpem_s": 0.0}
    t0 = time.perf_counter()
    sigma = {float(e): float(sigma_for(e)) for e in epsilons}
    timing["sigma_s"] = time.perf_counter() - t0

    clip_readings = [r for r in readings if r != "sep-invariant-recalibrated"] or ["as-printed"]
    sep_settings = _sep_settings(clip_norms, clip_readings, epsilons, readings, sigma,
                                 damping, dp_c)
    per_method: dict[str, dict] = {}
    gibbs_diag = []
    first = None
    for ds_seq in np.random.SeedSequence(seed).spawn(n_datasets):
        data_seq, gibbs_seq, sep_seq, ep_seq, em_seq = ds_seq.spawn(5)
        data_seed = int(data_seq.generate_state(1)[0])
        data = generate_mog_data(n_records, n_components, dim, 0.5, seed=data_seed)
        model = data.model
        t0 = time.perf_counter()
        gibbs = gibbs_mog(data.x, model, n_samples=gibbs_samples, burn_in=gibbs_burn_in,
                          n_chains=gibbs_chains, seed=gibbs_seq)
        timing["gibbs_s"] += time.perf_counter() - t0
        gibbs_diag.append(_gibbs_diagnostics(data_seed, data, gibbs))
        t0 = time.perf_counter()
        results = _sep_results(data, sep_settings, epochs, n_runs, sep_seq, damping,
                               prior_norm)
        timing["sep_batch_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        results["EP"] = _ep_result(data, epochs, n_runs, ep_seq, ep_invalid_cavity)
        timing["ep_s"] += time.perf_counter() - t0
        radius = default_data_radius(model) if dpem_data_radius is None else dpem_data_radius
        t0 = time.perf_counter()
        results.update(_em_results(data, dpem_readings, epsilons, em_seq, em_T, n_runs,
                                   delta, radius))
        timing["dpem_s"] += time.perf_counter() - t0
        _add_metrics(per_method, results, gibbs, n_runs)
        if first is None:
            first = (data, gibbs, results)

    methods = _pooled_methods(per_method, n_datasets)
    out = {
        "settings": {"dim": dim, "epochs": epochs, "n_runs": n_runs, "n_records": n_records,
                     "n_components": n_components, "n_datasets": n_datasets,
                     "gibbs_samples": gibbs_samples, "gibbs_burn_in": gibbs_burn_in,
                     "gibbs_chains": gibbs_chains, "seed": seed, "delta": delta,
                     "dp_clipping_norm": dp_c, "damping": damping,
                     "clip_norms": list(clip_norms), "epsilons": list(epsilons),
                     "readings": list(readings), "dpem_readings": list(dpem_readings),
                     "dpem_iterations": em_T, "prior_norm": prior_norm,
                     "init": "random (prior draws)", "prior_mean": 0.0,
                     "ep_invalid_cavity": ep_invalid_cavity},
        "sigma": {f"{e:g}": s for e, s in sigma.items()},
        "prior": _prior_finding(first[0].model, n_components, dim, dp_c, prior_norm),
        "gibbs": gibbs_diag,
        "methods": methods,
        "figures": {},
    }
    if out_dir is not None:
        t0 = time.perf_counter()
        fig_reading = figure_reading or (readings[0] if readings else "as-printed")
        out["figures"] = write_mog_figures(Path(out_dir), dim, first, methods, clip_norms,
                                           epsilons, fig_reading, readings, dpem_readings,
                                           clip_readings)
        timing["figures_s"] = time.perf_counter() - t0
    timing["total_s"] = time.perf_counter() - t_start
    out["timing"] = timing
    return out


def _checked_readings(readings, dpem_readings) -> tuple[tuple, tuple]:
    readings = tuple(readings)
    for r in readings:
        if r not in READINGS:
            raise ValueError(f"unknown DP-SEP reading {r!r}; expected one of {READINGS}")
    dpem_readings = tuple(dpem_readings)
    for r in dpem_readings:
        if r not in DPEM_READINGS:
            raise ValueError(f"unknown DP-EM reading {r!r}; expected one of {DPEM_READINGS}")
    return readings, dpem_readings


def _sep_settings(clip_norms, clip_readings, epsilons, readings, sigma, damping, dp_c):
    """The SEP-family settings advanced together: SEP, clipped SEP, DP-SEP (name, params, meta)."""
    sep_settings: list[tuple[str, DPSEPParams | None, dict]] = [("SEP", None, {"kind": "SEP"})]
    for c in clip_norms:
        for r in clip_readings:
            sep_settings.append((f"clipped SEP C={c:g} [{r}]",
                                 DPSEPParams(clipping_norm=c, damping=damping, reading=r),
                                 {"kind": "clipped SEP", "C": c, "reading": r}))
    for e in epsilons:
        for r in readings:
            sep_settings.append((f"DP-SEP eps={e:g} [{r}]",
                                 DPSEPParams(clipping_norm=dp_c, damping=damping,
                                             noise_multiplier=sigma[float(e)], reading=r),
                                 {"kind": "DP-SEP", "epsilon": e, "reading": r, "C": dp_c}))
    return sep_settings


def _gibbs_diagnostics(data_seed, data, gibbs) -> dict:
    return {"data_seed": data_seed, "max_rhat": gibbs.max_rhat,
            "rhat": gibbs.rhat.tolist(),
            "frac_relabelled": gibbs.frac_relabelled,
            "matching_passes": gibbs.matching_passes,
            "true_means": data.true_means.tolist(),
            "posterior_means": gibbs.means.tolist()}


def _sep_results(data, sep_settings, epochs, n_runs, sep_seq, damping, prior_norm) -> dict:
    """Every SEP-family setting's runs on one data set: name -> (meta, means, covs, ..., extra)."""
    runs = run_mog_sep_batch(data.x, data.model, [s for _, s, _ in sep_settings],
                             epochs=epochs, n_trials=n_runs,
                             rng=np.random.default_rng(sep_seq), damping=damping,
                             prior_norm=prior_norm)
    results = {}
    for (name, params, meta), run in zip(sep_settings, runs, strict=True):
        results[name] = (meta, run.means, run.covs, run.means, run.covs, {
            "projections": run.projections.tolist(),
            "final_projections": run.final_projections.tolist(),
            "noise_std": run.info["noise_std"],
            "noise_multiplier": None if params is None else params.noise_multiplier,
            "damping_factor": run.info["damping_factor"],
            "theta_0_norm": run.info["theta_0_norm"]})
    return results


def _ep_result(data, epochs, n_runs, ep_seq, ep_invalid_cavity) -> tuple:
    ep = run_mog_ep(data.x, data.model, epochs=epochs, n_trials=n_runs,
                    rng=np.random.default_rng(ep_seq), invalid_cavity=ep_invalid_cavity)
    return ({"kind": "EP"}, ep.means, ep.covs, ep.means, ep.covs, {
        "projections": ep.projections.tolist(),
        "final_projections": ep.final_projections.tolist(),
        "skipped_updates": int(ep.projections.sum())})


def _em_results(data, dpem_readings, epsilons, em_seq, em_T, n_runs, delta, radius) -> dict:
    """Non-private EM and DP-EM per reading and epsilon on one data set."""
    results = {}
    em_seqs = iter(em_seq.spawn(len(dpem_readings) * (len(epsilons) + 1)))
    for r in dpem_readings:
        for e in (None, *epsilons):
            em = run_dp_em(data.x, data.model, iterations=em_T, n_trials=n_runs,
                           rng=np.random.default_rng(next(em_seqs)), epsilon=e,
                           delta=delta, reading=r, data_radius=radius)
            name = f"EM [{r}]" if e is None else f"DP-EM eps={e:g} [{r}]"
            meta = {"kind": "EM" if e is None else "DP-EM", "epsilon": e, "reading": r}
            # the covariance DP-EM is compared against the posterior's with: its
            # component covariance (what v1 Table 1 appears to compare) and zero (a
            # point estimate); KL is not defined for a point estimate.
            results[name] = (meta, em.means, em.component_covs, em.means,
                             em.component_covs, {
                                 "noise_std": em.noise_std,
                                 "noise_multiplier": em.noise_multiplier,
                                 "sensitivity": em.sensitivity,
                                 "data_radius": radius,
                                 "n_clipped_records": em.n_clipped_records,
                                 "count_floorings": em.count_floorings,
                                 "pd_projections": em.pd_projections,
                                 "iterations": em_T})
    return results


def _add_metrics(per_method, results, gibbs, n_runs) -> None:
    """Append one data set's metrics (against its Gibbs truth) and extras to ``per_method``."""
    for name, (meta, means, covs, _, _, extra) in results.items():
        m = mog_metrics(means, covs, gibbs.means, gibbs.covs)
        # total posterior variance sum_j tr V_j per run (Sec. 6.1's "higher uncertainty")
        m["total_variance"] = np.trace(covs, axis1=-2, axis2=-1).sum(axis=-1)
        if meta["kind"] in ("EM", "DP-EM"):
            point = mog_metrics(means, np.zeros_like(covs), gibbs.means, gibbs.covs)
            m["fnorm_cov_point_mass"] = point["fnorm_cov"]
            m["fnorm_avg_point_mass"] = point["fnorm_avg"]
            for k in METRIC_KEYS:
                if k.startswith("kl"):
                    m[k] = np.full(n_runs, np.nan)
        entry = per_method.setdefault(name, {"kind": meta["kind"], "settings": meta,
                                             "raw": {}, "extra": []})
        for k, v in m.items():
            if k != "perm":
                entry["raw"].setdefault(k, []).append(np.asarray(v, dtype=float))
        entry["extra"].append(extra)


def _pooled_methods(per_method, n_datasets) -> dict:
    """Per method: metrics pooled over data sets x runs, with the extras."""
    methods = {}
    for name, entry in per_method.items():
        metrics = {k: _summary(np.concatenate(v)) for k, v in entry["raw"].items()}
        extra = entry["extra"][0] if n_datasets == 1 else entry["extra"]
        methods[name] = {"kind": entry["kind"], "settings": entry["settings"],
                         "metrics": metrics, **({"per_dataset": extra} if n_datasets > 1
                                                else extra)}
    return methods


def _prior_finding(model, n_components, dim, dp_c, prior_norm) -> dict:
    """The prior's ||theta_0|| against C and how it was handled."""
    base_norm = float(np.linalg.norm(prior_natural(model)))
    return {
        "theta_0_norm": base_norm, "sqrt_J_d": math.sqrt(n_components * dim),
        "dp_clipping_norm": dp_c, "prior_norm": prior_norm,
        "exceeds_C": base_norm > dp_c,
        "clipped_prior_variance": (base_norm / dp_c if prior_norm == "clip" and base_norm > dp_c
                                   else 1.0),
    }
