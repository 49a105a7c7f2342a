"""Captions of the figures dpsep's checks write: a shell-style pattern of the
figure's file name (relative to the report folder) -> what it shows. The report puts
each under its figure (``Paper.captions``)."""

CAPTIONS = {
    'thm41_tail.png': (
        'DP-SEP Thm. 4.1 (KL tail bound): Monte Carlo tail P(KL[q || p] ≥ a) of the noised '
        'posterior against the bound as printed (black), per noise setting; shaded: Clopper-'
        'Pearson 95 % band; dotted red: probability that the noised covariance is not '
        'positive definite (where the theorem says nothing).'),
    'audit_scores.png': (
        'DP-SEP empirical audit of one release: held-out score distributions on the two '
        'neighbouring datasets (canary a vs b) and the threshold chosen on the training '
        'split, per reading of the update.'),
    'reference_runs.png': (
        'EP, SEP, clipped SEP and DP-SEP on the embedded data sets: the test metric per epoch'
        ' (our runs; no paper number is compared here).'),
    'thm41_study_tails.png': (
        'Thm. 4.1 study, part 1: tail P(KL ≥ a) against the bound (v(Z) as printed and '
        'Hermitian) for six grid configurations; shaded: Clopper-Pearson band.'),
    'thm41_study_rates.png': (
        'Thm. 4.1 study, part 1: per grid configuration, the fraction of draws where the '
        'noised covariance is not positive definite, where λmax ≤ 0, where the τ/A event '
        'fails, and (red ×) where a certificate shows the bound violated.'),
    'thm41_scaling_N.png': (
        "Thm. 4.1 remarks: median KL[q || p] against N under DP-SEP's noise (exact 95 % "
        'intervals), with a 1/N reference line, per sensitivity reading.'),
    'thm41_broadness.png': (
        'Thm. 4.1 remarks on broad posteriors: left, the bound × a at fixed noise as the '
        'posterior broadens (Σq = c Σ1 / N); right, the median KL with exact intervals.'),
    'mog_*/mog_posteriors_d*.png': (
        'DP-SEP Sec. 6.1: mixture-of-Gaussians posteriors (first two coordinates, 98 % rings,'
        ' + means) of Gibbs, EP, SEP, clipped SEP, DP-SEP and DP-EM, points coloured by the '
        'most responsible component.'),
    'mog_*/mog_metrics_d*.png': (
        "DP-SEP Sec. 6.1: distance of each method's posterior to the truth against epsilon "
        '(mean ± sd over runs; log scales); horizontal lines: EP, SEP and clipped SEP. '
        "mog_paper: the paper's σ calibration; mog_honest: the honest one."),
    'bnn_uci.png': (
        'DP-SEP Sec. 6.2: test RMSE (mean ± sd over splits, original units) of each method on'
        ' each data set of this run.'),
}
