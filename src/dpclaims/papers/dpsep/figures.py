"""DP-SEP's figures, drawn for its checks and experiment runners.

Each function draws one figure with matplotlib and writes it with
:func:`dpclaims.papers.figures.save_figure`; the callers choose the file names.
Figures are evidence beside a verdict, never an input to one.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dpclaims.algorithms.sep.mog import responsibilities
from dpclaims.papers.dpsep.experiment_thm41 import A_GRID, BROADNESS
from dpclaims.papers.figures import robust_axis, save_figure


# --------------------------------------------------------------------------- MoG (Sec. 6.1)
def write_mog_figures(out_dir: Path, dim, first, methods, clip_norms, epsilons, fig_reading,
                      readings, dpem_readings, clip_readings) -> dict:
    """The MoG experiment's two figures in ``out_dir``: name -> path (as str)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = {}
    figures["posteriors"] = str(plot_mog_posteriors(
        out_dir / f"mog_posteriors_d{dim}.png", first, clip_norms, epsilons,
        fig_reading, dpem_readings[0] if dpem_readings else None, clip_readings))
    figures["metrics"] = str(plot_mog_metrics(
        out_dir / f"mog_metrics_d{dim}.png", methods, epsilons, readings, dpem_readings,
        clip_readings))
    return figures


def _ellipse(ax, mean, cov, prob=0.98, **kw):
    from scipy.stats import chi2
    vals, vecs = np.linalg.eigh(cov[:2, :2])
    vals = np.maximum(vals, 0.0)
    r = math.sqrt(chi2.ppf(prob, 2))
    t = np.linspace(0, 2 * np.pi, 100)
    circ = np.stack([np.cos(t), np.sin(t)])
    pts = vecs @ (np.sqrt(vals)[:, None] * circ) * r + mean[:2, None]
    ax.plot(pts[0], pts[1], **kw)


def plot_mog_posteriors(path, first, clip_norms, epsilons, reading, dpem_reading, clip_readings):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data, gibbs, results = first
    model = data.model
    s2 = model.noise_std ** 2
    eye = np.eye(model.dim)
    clip_reading = reading if reading in clip_readings else clip_readings[0]
    rows = [[("truth", None), ("EP", "EP"), ("SEP", "SEP")],
            [(f"clipped SEP C={c:g}", f"clipped SEP C={c:g} [{clip_reading}]")
             for c in clip_norms],
            [(f"DP-SEP eps={e:g}", f"DP-SEP eps={e:g} [{reading}]") for e in epsilons]]
    if dpem_reading is not None:
        rows.append([(f"DP-EM eps={e:g}", f"DP-EM eps={e:g} [{dpem_reading}]")
                     for e in epsilons])
    ncol = max(len(r) for r in rows)
    fig, axes = plt.subplots(len(rows), ncol, figsize=(3.2 * ncol, 3.0 * len(rows)),
                             squeeze=False)
    lo, hi = data.x[:, :2].min(axis=0) - 0.5, data.x[:, :2].max(axis=0) + 0.5
    for i, row in enumerate(rows):
        for j in range(ncol):
            ax = axes[i, j]
            if j >= len(row):
                ax.axis("off")
                continue
            title, key = row[j]
            if key is None:
                colors, means, covs = data.labels, gibbs.means, gibbs.covs
                ring = covs
            else:
                meta, means, covs = results[key][0], results[key][1][0], results[key][2][0]
                if meta["kind"] in ("EM", "DP-EM"):
                    pred = covs
                    ring = covs            # component covariance for a point estimate
                else:
                    pred = covs + s2 * eye
                    ring = covs
                colors = np.argmax(responsibilities(data.x, means, pred, model), axis=-1)
            ax.scatter(data.x[:, 0], data.x[:, 1], c=colors, s=3, cmap="tab10", vmin=0,
                       vmax=9, alpha=0.5)
            for k in range(model.n_components):
                ax.plot(means[k, 0], means[k, 1], "k+", ms=8)
                _ellipse(ax, means[k], ring[k], color="k", lw=1)
            ax.set_xlim(lo[0], hi[0])
            ax.set_ylim(lo[1], hi[1])
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("x_1", fontsize=7)
            ax.set_ylabel("x_2", fontsize=7)
            ax.tick_params(labelsize=7)
    fig.suptitle(f"MoG posteriors (d = {model.dim}; first two coordinates; 98 % rings; "
                 f"DP-SEP reading: {reading})", fontsize=9)
    save_figure(fig, path, dpi=90)
    return path


def plot_mog_metrics(path, methods, epsilons, readings, dpem_readings, clip_readings):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [("fnorm_mean", "F-norm on means"), ("fnorm_cov", "F-norm on covariances"),
            ("kl_hungarian", "KL proxy [truth || method] (hungarian)")]
    fig, axes = plt.subplots(1, len(keys), figsize=(5.0 * len(keys), 3.8), squeeze=False)
    eps = np.asarray(epsilons, dtype=float)
    for ax, (key, label) in zip(axes[0], keys, strict=True):
        series = [(f"DP-SEP [{r}]", [f"DP-SEP eps={e:g} [{r}]" for e in epsilons], "o-")
                  for r in readings]
        if not key.startswith("kl"):
            series += [(f"DP-EM [{r}]", [f"DP-EM eps={e:g} [{r}]" for e in epsilons], "s--")
                       for r in dpem_readings]
        for lab, names, style in series:
            mean = np.array([methods[n]["metrics"][key]["mean_finite"] for n in names])
            std = np.array([methods[n]["metrics"][key]["std"] for n in names])
            std = np.where(np.isfinite(std), std, 0.0)
            ax.errorbar(eps, mean, yerr=std, fmt=style, capsize=3, label=lab, ms=4)
        for ref, ls in (("EP", ":"), ("SEP", "-.")):
            ax.axhline(methods[ref]["metrics"][key]["mean_finite"], color="k", ls=ls, lw=1,
                       label=ref)
        name = f"clipped SEP C=1 [{clip_readings[0]}]"
        if name in methods:
            ax.axhline(methods[name]["metrics"][key]["mean_finite"], color="grey", ls="--",
                       lw=1, label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(label + " (mean ± sd over runs)", fontsize=7)
        ax.set_title(label, fontsize=9)
        ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=6)
    save_figure(fig, path, dpi=90)
    return path


# --------------------------------------------------------------------------- Thm. 4.1 study
def plot_grid_tails(configs, studies, path, readings):
    """Thm. 4.1 grid study: the Monte Carlo tail P(KL >= a) against the bound (one line per
    v(Z) reading in ``readings``) for six of the configurations."""
    import matplotlib.pyplot as plt

    wanted = ["d=1, isotropic, broad, σ1=σ2=0.1", "d=2, κ=10, broad, σ1=σ2=0.01",
              "d=5, isotropic, concentrated, σ1=σ2=0.001", "d=10, κ=100, broad, σ1=σ2=0.001",
              "d=20, isotropic, broad, σ1=σ2=0.1", "d=20, κ=100, concentrated, σ1=σ2=0.001"]
    chosen = [(c, st) for c, st in zip(configs, studies, strict=True) if c["label"] in wanted]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (cfg, st) in zip(axes.ravel(), chosen, strict=False):
        ci = np.asarray(st.ci_unconditional, float)
        ax.fill_between(A_GRID, np.maximum(ci[:, 0], 1e-9), ci[:, 1], alpha=0.3, color="C0")
        ax.plot(A_GRID, st.tail_unconditional, "o-", ms=2, color="C0", label="P(KL ≥ a)")
        ax.plot(A_GRID, st.tail_conditional, "s--", ms=2, color="C2", label="| τ/A event")
        for vr, style in zip(readings, ("k-", "k:"), strict=True):
            b = np.asarray(st.bound[vr], float)
            ax.plot(A_GRID, np.where(b > 0, b, np.nan), style, label=f"bound, v={vr}")
        if st.frac_not_pd > 0:
            ax.axhline(st.frac_not_pd, color="C3", lw=0.8, ls=":", label="P(Σp not PD)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(1e-6, 1e3)
        ax.set_xlabel("a (nats)")
        ax.set_ylabel("probability")
        ax.set_title(cfg["label"], fontsize=8)
    axes.ravel()[0].legend(fontsize=6)
    save_figure(fig, path, dpi=100)


def plot_grid_rates(configs, studies, path):
    """Thm. 4.1 grid study: the assumption-failure rates per configuration."""
    import matplotlib.pyplot as plt

    x = np.arange(len(configs))
    fig, ax = plt.subplots(figsize=(13, 4))
    ax.plot(x, [st.frac_not_pd for st in studies], "o", ms=3, label="Σp not PD")
    ax.plot(x, [st.frac_lambda_max_nonpositive for st in studies], "^", ms=3,
            label="λmax(Σq⁻¹E) ≤ 0")
    ax.plot(x, [st.frac_condition_fails for st in studies], "s", ms=3, label="τ/A event fails")
    viol = [i for i, st in enumerate(studies) if np.any(st.violated_unconditional["as-printed"])]
    ax.plot(viol, [1.05] * len(viol), "rx", label="bound violated (CP certificate)")
    starts = [i for i, c in enumerate(configs) if i == 0 or c["d"] != configs[i - 1]["d"]]
    for i in starts:
        ax.axvline(i - 0.5, color="grey", lw=0.5)
        ax.text(i, 1.12, f"d={configs[i]['d']}", fontsize=7)
    ax.set_ylim(-0.05, 1.2)
    ax.set_xlabel("configuration (order of the table)")
    ax.set_ylabel("fraction of draws")
    ax.legend(fontsize=7, loc="center right")
    save_figure(fig, path, dpi=100)


def plot_scaling(results, n_values, path):
    """Thm. 4.1 scaling in N: tail against bound per sensitivity reading."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4))
    x = np.asarray(n_values, float)
    for ax, (reading, res) in zip(np.atleast_1d(axes), results.items(), strict=True):
        sl = res["slope"]
        med = np.asarray(sl["quantile"], float)
        lo, hi = np.asarray(sl["quantile_low"], float), np.asarray(sl["quantile_high"], float)
        ax.errorbar(x, med, yerr=[med - lo, hi - med], fmt="o-", ms=4, capsize=3,
                    label=f"median KL (slope {sl['slope']:.2f})")
        if math.isfinite(sl["mean_slope"]):
            ax.plot(x, sl["mean"], "s--", ms=3, label=f"mean KL (slope {sl['mean_slope']:.2f})")
        ax.plot(x, med[0] * x[0] / x, "k:", label="1/N reference")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_ylabel("KL[q || p] (nats)")
        ax.set_title(f"sensitivity: {reading}", fontsize=9)
        ax.legend(fontsize=7)
    save_figure(fig, path, dpi=100)


def plot_broadness(bound_fixed, summary, path):
    """Thm. 4.1 remark 2: the bound at fixed noise and the median KL against the broadness c."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for vr, b in bound_fixed.items():
        axes[0].plot(BROADNESS, np.where(b > 0, b, np.nan), "o-", label=f"v(Z) {vr}")
    axes[0].set_title("Thm. 4.1 bound × a at fixed σ1, σ2, τ, A", fontsize=9)
    axes[0].set_ylabel("bound × a")
    for name, sm in summary.items():
        med = np.asarray(sm["median"], float)
        lo, hi = np.asarray(sm["low"], float), np.asarray(sm["high"], float)
        finite = np.isfinite(med) & np.isfinite(hi) & np.isfinite(lo)
        med, lo, hi = med[finite], lo[finite], hi[finite]
        axes[1].errorbar(BROADNESS[finite], med, yerr=[med - lo, hi - med], fmt="o-", ms=3,
                         capsize=3, label=name)
    axes[1].set_title("median KL[q || p] (exact 95 % intervals)", fontsize=9)
    axes[1].set_ylabel("KL[q || p] (nats)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("c (Σq = c · Σ1 / N)")
        ax.legend(fontsize=6)
    save_figure(fig, path, dpi=100)


# --------------------------------------------------------------------------- checks
def plot_thm41_tail(studies, path):
    """Thm. 4.1 Monte Carlo: the tail P(KL >= a) with its interval against the as-printed
    bound, one panel per study."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(studies), figsize=(4.2 * len(studies), 3.4))
    for ax, (label, st) in zip(np.atleast_1d(axes), studies, strict=True):
        a = st.a_grid
        ci = np.asarray(st.ci_unconditional, dtype=float)
        ax.fill_between(a, ci[:, 0], ci[:, 1], alpha=0.3, color="C0")
        ax.plot(a, st.tail_unconditional, "o-", ms=3, color="C0", label="P(KL ≥ a), MC")
        ax.plot(a, st.tail_conditional, "s--", ms=3, color="C2", label="same | τ/A event")
        bound = np.asarray(st.bound["as-printed"], dtype=float)
        ax.plot(a, np.where(bound > 0, bound, np.nan), "k-", label="Thm. 4.1 bound")
        ax.axhline(st.frac_not_pd, color="C3", lw=0.8, ls=":", label="P(Σp not PD)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(1e-6, 10)
        ax.set_xlabel("a (nats)")
        ax.set_ylabel("probability")
        ax.set_title(label, fontsize=8)
    np.atleast_1d(axes)[0].legend(fontsize=6)
    save_figure(fig, path, dpi=110)


def plot_audit_scores(scores, path):
    """The empirical audit: held-out score histograms under D0 and D1 with the
    threshold, one panel per reading."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(scores), figsize=(4.2 * len(scores), 3.2))
    for ax, (reading, sc) in zip(np.atleast_1d(axes), scores.items(), strict=True):
        s0, s1 = sc["scores0"], sc["scores1"]
        lo, hi = np.quantile(np.concatenate([s0, s1]), [0.001, 0.999])
        bins = np.linspace(lo, hi, 80)
        ax.hist(s0, bins=bins, alpha=0.6, label="D0 (canary a)", density=True)
        ax.hist(s1, bins=bins, alpha=0.6, label="D1 (canary b)", density=True)
        ax.axvline(sc["threshold"], color="k", lw=1, label="threshold")
        ax.set_title(reading, fontsize=9)
        ax.set_xlabel("held-out score")
        ax.set_ylabel("density")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    save_figure(fig, path, dpi=110)


def plot_reference_traces(traces, datasets, path):
    """The reference runs: each method's test metric per epoch, one panel per data set."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 3.6))
    for ax, data in zip(np.atleast_1d(axes), datasets, strict=True):
        for (name, label), values in traces.items():
            if name == data.name:
                ax.plot(range(len(values)), values, marker="o", ms=3, label=label)
        ax.set_title(data.name)
        ax.set_xlabel("epoch")
        ax.set_ylabel(_metrics_name(data))
        robust_axis(ax, "y")  # a diverged run (RMSE 4e7) must not flatten the others
    np.atleast_1d(axes)[0].legend(fontsize=7)
    save_figure(fig, path, dpi=110)


def _metrics_name(data):
    return "test accuracy" if data.task == "classification" else "test RMSE"


# --------------------------------------------------------------------------- BNN (Sec. 6.2)
def plot_bnn(results, path):
    """Sec. 6.2: test RMSE per method (mean ± sd over splits), one panel per data set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.6 * len(results), 4.2),
                             squeeze=False)
    for ax, (name, res) in zip(axes[0], results.items(), strict=True):
        labels = list(res["methods"])
        vals = [np.asarray(res["methods"][m]["rmse"], dtype=float) for m in labels]
        finite = [v[np.isfinite(v)] for v in vals]
        y = np.arange(len(labels))
        mean = [f.mean() if f.size else np.nan for f in finite]
        sd = [f.std(ddof=1) if f.size > 1 else 0.0 for f in finite]
        ax.errorbar(mean, y, xerr=sd, fmt="o", ms=4)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_xscale("log")
        ax.set_xlabel("test RMSE (original units), mean ± sd over splits")
        ax.set_ylabel("method")
        ax.set_title(name, fontsize=9)
        robust_axis(ax, "x")  # a diverged method (1e9-1e13) must not flatten the others
        for i, v in enumerate(vals):
            n_bad = int((~np.isfinite(v)).sum())
            if n_bad:
                ax.annotate(f"{n_bad} diverged", (ax.get_xlim()[1], i), fontsize=6,
                            ha="right")
    save_figure(fig, path, dpi=110)
