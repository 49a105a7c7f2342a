"""dpclaims.papers.figures.save_figure: the file, the closed figure, and which minor ticks go."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

from dpclaims.papers.figures import MAX_MINOR_TICK_DECADES, save_figure  # noqa: E402


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
