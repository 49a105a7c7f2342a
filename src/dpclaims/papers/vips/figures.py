"""VIPS's figures, drawn for its accuracy checks (BLR, SBN, LDA).

Each function draws one figure with matplotlib and writes it to ``path`` with
:func:`dpclaims.papers.figures.save_figure`; the checks choose the file names. Figures
are evidence beside a verdict, never an input to one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpclaims.papers.figures import save_figure
from dpclaims.papers.vips.experiment_blr_sbn import SBN_DELTA, SBN_METHODS
from dpclaims.papers.vips.experiment_lda import DELTA, LABELS, METHODS, SIGMA


def plot_blr(auc, sigmas, eps, full_auc, title, path) -> None:
    """BLR (Fig. 6 analogue): test AUC per noise multiplier over seeds, with the
    full-batch non-private reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    ax.boxplot([auc[:, k] for k in range(len(sigmas))], widths=0.5)
    labels = []
    for sigma in sigmas:
        e = eps[f"{sigma:g}"]
        labels.append(f"σ={sigma:g}\nnon-private" if sigma == 0 else
                      f"σ={sigma:g}\nε={e['paper']:.3g} / {e['two-releases']:.3g}")
    labels = [f"{lab}\nmean {auc[:, k].mean():.3f}" for k, lab in enumerate(labels)]
    ax.set_xticks(range(1, len(sigmas) + 1), labels, fontsize=7)
    if full_auc is not None:
        ax.axhline(full_auc, color="k", ls="--", lw=0.8, label="full-batch VB (non-private)")
        ax.legend(fontsize=7, loc="lower left")
    ax.set_xlabel("noise multiplier σ (ε by the paper's reading / two releases per step)")
    ax.set_ylabel("test AUC")
    ax.set_title(title + "\nε: paper reading / two releases", fontsize=8)
    save_figure(fig, path, dpi=110)


def plot_sbn(acc, setting, title, path) -> None:
    """SBN (Fig. 8 analogue): held-out accuracy per method at each minibatch size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(setting)
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.8), squeeze=False)
    for ax, s in zip(axes[0], sizes, strict=True):
        data = [acc[s][m] for m in SBN_METHODS]
        ax.boxplot(data, widths=0.5)
        ma, sc = np.asarray(acc[s]["MA"]), np.asarray(acc[s]["SC"])
        for a, c in zip(ma, sc, strict=True):
            ax.plot([2, 3], [a, c], color="0.6", lw=0.6)
        nm = setting[s]["noise_multiplier"]
        ax.set_xticks(range(1, len(SBN_METHODS) + 1),
                      ["NP", "MA\nσ=1", f"SC\nσ={nm['SC']:.3g}",
                       f"SC ampl.\nσ={nm['SC-amplified']:.3g}"], fontsize=7)
        ax.set_title(f"S={setting[s]['S']}, steps={setting[s]['J']}, "
                     f"ε={setting[s]['epsilon_MA']:.3g}, δ={SBN_DELTA:g}", fontsize=8)
        ax.set_xlabel("method (noise multiplier)")
        ax.set_ylabel("held-out prediction accuracy")
    fig.suptitle(title, fontsize=8)
    save_figure(fig, path, dpi=110)


def plot_lda(result: dict, wf: float, setting: dict, path: Path) -> None:
    """LDA (Fig. 3 analogue): held-out perplexity per iteration per method (mean, min-max
    band) against the word-frequency baseline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = result["iterations"]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in METHODS:
        tr = result["traces"][name]
        line, = ax.plot(it, tr.mean(axis=0), label=LABELS[name])
        ax.fill_between(it, tr.min(axis=0), tr.max(axis=0), color=line.get_color(), alpha=0.15)
    ax.axhline(wf, color="k", ls="--", lw=1, label=LABELS["word-frequency"])
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("held-out perplexity (upper bound)")
    ax.set_title(f"{setting['corpus']}: D={setting['D_train']}, S={setting['S']}, "
                 f"K={setting['K']}, sigma={SIGMA:g}, eps={setting['epsilon_MA']:.3g}, "
                 f"delta={DELTA:g}", fontsize=8)
    ax.legend(fontsize=7)
    save_figure(fig, path, dpi=110)
