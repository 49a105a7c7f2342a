"""dpclaims.papers.figures: save_figure (the file, the closed figure, which minor ticks go)
and robust_axis (outliers marked at the edge instead of flattening a panel)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

from dpclaims.papers.figures import (  # noqa: E402
    MAX_MINOR_TICK_DECADES,
    robust_axis,
    save_figure,
)


def test_wide_log_axes_lose_minor_ticks_narrow_and_linear_keep_them(tmp_path):
    fig, (wide, narrow, linear) = plt.subplots(1, 3)
    wide.loglog(np.geomspace(1e-2, 1e9, 20), np.geomspace(1e-6, 1e-5, 20))  # 11 / 1 decades
    narrow.semilogx(np.geomspace(1.0, 10**MAX_MINOR_TICK_DECADES, 20), np.arange(20))
    narrow.set_xlim(1.0, 10**MAX_MINOR_TICK_DECADES)  # the view, not the data, decides
    linear.plot([0, 1], [0, 1])
    kept = [wide.yaxis.get_minor_locator(), narrow.xaxis.get_minor_locator(),
            linear.xaxis.get_minor_locator()]
    path = save_figure(fig, tmp_path / "f.png", dpi=50)
    assert path == tmp_path / "f.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)
    assert isinstance(wide.xaxis.get_minor_locator(), NullLocator)  # 11 decades
    # 1 decade (wide's y) and exactly the limit (narrow's x) keep matplotlib's locator
    assert wide.yaxis.get_minor_locator() is kept[0]
    assert narrow.xaxis.get_minor_locator() is kept[1]
    assert not isinstance(kept[1], NullLocator)
    assert linear.xaxis.get_minor_locator() is kept[2]  # a linear axis is left alone


def test_the_figure_is_closed_when_writing_fails(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    with pytest.raises(FileNotFoundError):
        save_figure(fig, tmp_path / "no" / "such" / "folder.png", dpi=50)
    assert not plt.fignum_exists(fig.number)


def test_robust_axis_keeps_the_bulk_visible_and_marks_outliers():
    """DP-SEP's reference runs on randhie: one diverged run at RMSE 3e7-4e7 among
    values near 1 flattened the panel; now the axis fits the values near 1 and the three
    diverged values are triangles at the top edge (linear axis). On a log axis, the
    BNN panel's means of 1e9 and 1e13 among values near 1 are marked at the right."""
    fig, (lin, log) = plt.subplots(1, 2)
    for k in range(5):
        lin.plot(range(4), [0.0, 0.8 + k / 10, 0.85 + k / 10, 0.9 + k / 10])
    lin.plot(range(4), [0.0, 2.9e7, 2.7e7, 4.1e7])
    assert robust_axis(lin, "y") == 3
    low, high = lin.get_ylim()
    assert low < 0 and 1.3 < high < 2  # the bulk fills the panel
    log.errorbar([1.1, 0.9, 1.2, 3e9, 2e13], range(5), fmt="o")
    log.set_xscale("log")
    assert robust_axis(log, "x") == 2
    assert log.get_xlim()[1] < 10
    # nothing off the scale: the axis is left alone
    fig2, ax = plt.subplots()
    ax.plot(range(6), [1, 2, 3, 4, 5, 6])
    before = ax.get_ylim()
    assert robust_axis(ax) == 0 and ax.get_ylim() == before
    with pytest.raises(ValueError, match="axis"):
        robust_axis(ax, "z")
    plt.close(fig)
    plt.close(fig2)
