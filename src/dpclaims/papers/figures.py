"""How dpclaims' own papers write their figures: one layout, one file, one cost.

A paper draws its figure with matplotlib and hands it to :func:`save_figure`, which
lays it out, writes the PNG and closes it. Figures are evidence shown beside a
verdict, never an input to one: nothing here changes a number of ``results.json``.
"""

from __future__ import annotations

import math
from pathlib import Path

#: A log axis whose view spans more than this many decades is drawn without minor ticks.
MAX_MINOR_TICK_DECADES = 3.0


def _drop_crowded_minor_ticks(fig) -> None:
    from matplotlib.ticker import NullLocator

    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() != "log":
                continue
            lo, hi = sorted(abs(v) for v in limits)
            if lo > 0 and math.log10(hi / lo) > MAX_MINOR_TICK_DECADES:
                axis.set_minor_locator(NullLocator())


def save_figure(fig, path, dpi: int) -> Path:
    """Lay out ``fig`` (``tight_layout``), write it to ``path`` as a PNG at ``dpi`` dots
    per inch, close it and return ``path``.

    A log-scale axis whose view spans more than :data:`MAX_MINOR_TICK_DECADES` decades
    loses its minor ticks first. matplotlib labels none of them at that span, yet builds
    one tick artist (two lines, two texts) per minor tick at every layout and draw: on
    the 2-core test machine they were about 60 % of the time to draw DP-SEP's
    ``thm41_tail.png`` (four panels over 11 decades); with no log minor ticks at all,
    DP-SEP's smoke audit spent 20.0 s plotting instead of 29.9 s (one profiled run
    each). Major ticks and their labels are unchanged.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure; closed on return (also when writing fails).
    path : str or pathlib.Path
        The PNG file to write (its folder must exist).
    dpi : int
        Resolution of the PNG.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    import matplotlib.pyplot as plt

    try:
        _drop_crowded_minor_ticks(fig)
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
    return Path(path)


#: A value more than this many robust standard deviations (1.4826 x the median absolute
#: deviation) from the median of a panel's values is drawn at the panel's edge, not on
#: its scale.
OUTLIER_FENCE = 3.0


def robust_axis(ax, axis: str = "y", fence: float = OUTLIER_FENCE) -> int:
    """Fit ``ax``'s ``axis`` to the bulk of its lines' values and mark the outliers at
    the edge, so that one diverged run (an RMSE of 4e7 among values near 1) does not
    flatten every other line of the panel.

    The values are those of the panel's lines (``ax.get_lines()``, as plotted; on a
    log axis their log10). A value is an outlier when it lies more than ``fence``
    robust standard deviations from the median (1.4826 x the median absolute deviation,
    which fewer than half the values can move), that deviation taken as at least half
    the median's magnitude (one decade on a log axis) so that nearly equal values do not
    make every other value an outlier. The axis is set to the
    inliers' range with a 5 % margin; each outlier is drawn at the edge as a triangle in
    its line's colour, labelled with its value. With no outliers the axis is left as
    matplotlib chose it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        A panel whose lines are drawn (call before :func:`save_figure`).
    axis : {"x", "y"}
        The axis to fit.
    fence : float
        The fence in robust standard deviations (> 0).

    Returns
    -------
    int
        The number of values drawn at the edge.

    Raises
    ------
    ValueError
        ``axis`` not "x" or "y", or ``fence`` not positive.
    """
    import numpy as np

    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    if not fence > 0:
        raise ValueError(f"fence must be > 0, got {fence!r}")
    log = (ax.get_yscale() if axis == "y" else ax.get_xscale()) == "log"
    lines = [(line, np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float))
             for line in ax.get_lines()]
    values = np.concatenate([y if axis == "y" else x for _, x, y in lines] or [np.empty(0)])
    values = values[np.isfinite(values) & ((values > 0) if log else True)]
    if values.size < 4:
        return 0
    t = np.log10(values) if log else values
    med = np.median(t)
    spread = max(1.4826 * np.median(np.abs(t - med)), 1.0 if log else 0.5 * abs(med))
    lo, hi = med - fence * spread, med + fence * spread
    inside = t[(t >= lo) & (t <= hi)]
    if inside.size == t.size or inside.size == 0:
        return 0
    a, b = inside.min(), inside.max()
    if log and b - a < 1:  # at least a decade, so that a power of ten is a labelled tick
        a, b = (a + b - 1) / 2, (a + b + 1) / 2
    pad = 0.05 * (b - a) if b > a else 0.05 * max(abs(a), 1e-12)
    a, b = a - pad, b + pad
    limits = (10.0 ** a, 10.0 ** b) if log else (a, b)
    (ax.set_ylim if axis == "y" else ax.set_xlim)(*limits)
    if log:  # a span of one or two decades: matplotlib would label every minor tick
        from matplotlib.ticker import NullFormatter

        (ax.yaxis if axis == "y" else ax.xaxis).set_minor_formatter(NullFormatter())
    marked = 0
    for line, x, y in lines:
        v = y if axis == "y" else x
        with np.errstate(divide="ignore", invalid="ignore"):
            tv = np.log10(v) if log else v
        for i in np.flatnonzero(np.isfinite(tv) & ((tv < a) | (tv > b))):
            high = tv[i] > b
            edge = limits[1] if high else limits[0]
            at = (x[i], edge) if axis == "y" else (edge, y[i])
            marker = ("^" if high else "v") if axis == "y" else (">" if high else "<")
            ax.plot(*at, marker=marker, color=line.get_color(), ms=7, clip_on=False,
                    zorder=5)
            ax.annotate(f"{v[i]:.2g}", at, fontsize=6, color=line.get_color(),
                        textcoords="offset points",
                        xytext=(4, -8 if high else 4) if axis == "y" else (-14, 6))
            marked += 1
    ax.text(0.99, 0.01, f"{marked} value(s) off the scale: marked at the edge",
            transform=ax.transAxes, ha="right", va="bottom", fontsize=6, color="0.3")
    return marked
