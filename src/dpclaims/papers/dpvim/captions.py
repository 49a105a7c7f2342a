"""Captions of the figures dpvim's checks write: a shell-style pattern of the
figure's file name (relative to the report folder) -> what it shows. The report puts
each under its figure (``Paper.captions``)."""

CAPTIONS = {
    'dpvim_traces.png': (
        'DPVIm: aligned DPVI iterates (run 0, two coordinates of m and of s) with the '
        'detected convergence point (dashed) and the optimum (dotted).'),
    'dpvim_coverage.png': (
        'DPVIm noise-aware posterior: coverage of m* by the 90 % intervals under each '
        'reading, the whole posterior against its DP part only; dashed: nominal 0.9.'),
    'dpvim_error_vs_epsilon_*.png': (
        'DPVIm Fig. 5 at a reduced size: l2 error of m_q and s_q (mean ± se over runs) '
        'against epsilon for the five gradient variants; the suffix names the clipping '
        "threshold reading (table-f1: Table F.1 as printed; quantile-rule: App. F's rule)."),
}
