"""DPVIm's figures, drawn for its experiment checks.

Each function draws with matplotlib, writes with
:func:`dpclaims.papers.figures.save_figure` into ``out_dir`` and returns the file names
(relative to the report folder). Figures are evidence beside a verdict, never an input
to one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpclaims.papers.dpvim.experiments import NOMINAL
from dpclaims.papers.figures import save_figure


def coverage_figures(cov, results, out_dir, readings):
    """Sec. 4.3 coverage: the aligned traces with their detected convergence points
    (``dpvim_traces.png``) and the coverage of m* per reading in ``readings``
    (``dpvim_coverage.png``); returns the two file names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    trace, fam = cov["trace"], cov["family"]
    d = fam.dim
    fig, axes = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for j in range(2):
        for ax, col, label in ((axes[0], j, "m"), (axes[1], d + j, "s")):
            ax.plot(trace[:, 0, col], lw=0.6)
            t_bo = results["linreg"]["t_burnout"][0, col]
            ax.axvline(trace.shape[0] - t_bo, color=f"C{j}", ls="--", lw=0.8)
            ax.axhline(cov["xi_star"][col], color=f"C{j}", ls=":", lw=0.8)
            ax.set_ylabel(f"{label} (iterate value)")
    axes[0].set_title("Aligned DPVI traces (run 0, two coordinates); dashed: detected "
                      "convergence point (slope test); dotted: optimum", fontsize=8)
    axes[1].set_xlabel("step")
    p1 = out_dir / "dpvim_traces.png"
    save_figure(fig, p1, dpi=120)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    names = list(readings)
    pos = np.arange(len(names))
    for off, kind in ((-0.15, "posterior"), (0.15, "dp")):
        vals = [results["linreg"]["cover"][r][kind].mean() for r in names]
        ax.bar(pos + off, vals, width=0.3, label={"posterior": "noise-aware posterior",
                                                    "dp": "DP part only"}[kind])
    ax.axhline(NOMINAL, color="k", ls="--", lw=0.8, label=f"nominal {NOMINAL}")
    ax.set_xticks(pos, names, fontsize=7)
    ax.set_xlabel("reading of the noise-aware posterior")
    ax.set_ylabel("coverage of m*")
    ax.legend(fontsize=7)
    p2 = out_dir / "dpvim_coverage.png"
    save_figure(fig, p2, dpi=120)
    return [p1.name, p2.name]  # relative to the report folder, like every figure


def adult_figure(err_m, err_s, eps_levels, variants, res, out_dir):
    """Fig. 5: l2 error of m_q and s_q against epsilon per variant; returns the file name."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, errs, title in ((axes[0], err_m, "m_q"), (axes[1], err_s, "s_q")):
        for v in variants:
            mu = [errs[(e, v)].mean() for e in eps_levels]
            se = [errs[(e, v)].std(ddof=1) / np.sqrt(errs[(e, v)].size) for e in eps_levels]
            ax.errorbar(eps_levels, mu, yerr=se, marker="o", label=v, capsize=2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"l2 error of {title} (mean ± se over runs)", fontsize=7)
        ax.set_title(f"l2 error of {title} ({res['data']}, {res['steps']} steps)", fontsize=8)
    axes[0].legend(fontsize=7)
    p = out_dir / f"dpvim_error_vs_epsilon_{res['clip_reading']}.png"
    save_figure(fig, p, dpi=120)
    return p.name
