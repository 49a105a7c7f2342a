"""DP-SEP Sec. 6.2 (Bayesian neural networks on UCI regression sets): the runs, at a
stated size: PBP, DP-SEP under each noise reading, VI and a point estimate, per split.
Numbers only (its figure is :func:`dpclaims.papers.dpsep.figures.plot_bnn`); the
statement verdicts are computed in :mod:`dpclaims.papers.dpsep.checks_bnn` and
:mod:`dpclaims.papers.dpsep.checks_tables`.
"""

from __future__ import annotations

import time

import numpy as np

from dpclaims.algorithms.sep.bnn_vi import fit_bnn_point, fit_bnn_vi
from dpclaims.algorithms.sep.pbp import PBPConfig, fit_pbp, regression_test_metrics
from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.analysis.accounting import composed_gaussian_sigma
from dpclaims.analysis.seeds import rng_for, seed_sequence
from dpclaims.analysis.validation import check_count
from dpclaims.data.datasets import load_uci_standardised, standardise_on_training_split
from dpclaims.papers.dpsep.calibration import DELTA, paper_sigma

# Table 4 name -> folder in --data-dir/uci (Year is not available offline).
UCI_FOLDERS = {"Wine": "wine-quality-red", "Kin8nm": "kin8nm", "Power": "power-plant",
               "Naval": "naval-propulsion-plant", "Protein": "protein-tertiary-structure"}
HIDDEN = {"Protein": 100, "Year": 100}  # Sec. 6.2: 100 for Year and Protein, else 50
EPSILON, CLIP, GAMMA = 1.0, 1.0, 1.0
EMBEDDED = "randhie (statsmodels)"

PAPER_SIGMA = "paper σ"
HONEST_SIGMA = "honest σ"


def dpsep_configs(n: int, epochs: int, epsilon: float = EPSILON) -> dict[str, DPSEPParams]:
    """The DP-SEP configurations run for a training set of ``n`` records, ``epochs`` passes.

    Keys name the accounting and the update reading; values are DPSEPParams (C = 1,
    γ = 1). Clipped SEP (no noise) is included under both update readings.
    """
    sp = paper_sigma("paper:wor(q=1/N)x(T*N)", n, epochs, epsilon)
    sh = composed_gaussian_sigma(epsilon, DELTA, epochs)
    return {
        "SEP clipped [as-printed]": DPSEPParams(CLIP, GAMMA, None, "as-printed"),
        "SEP clipped [sep-invariant]": DPSEPParams(CLIP, GAMMA, None, "sep-invariant"),
        f"DP-SEP [{PAPER_SIGMA}, as-printed]": DPSEPParams(CLIP, GAMMA, sp, "as-printed"),
        f"DP-SEP [{PAPER_SIGMA}, sep-invariant]": DPSEPParams(CLIP, GAMMA, sp, "sep-invariant"),
        f"DP-SEP [{HONEST_SIGMA}, as-printed]": DPSEPParams(CLIP, GAMMA, sh, "as-printed"),
        f"DP-SEP [{HONEST_SIGMA}, sep-invariant-recalibrated]": DPSEPParams(
            CLIP, GAMMA, sh, "sep-invariant-recalibrated"),
    }


def load_embedded(n_splits: int, n_train: int, seed: int):
    """The embedded default: statsmodels' randhie (log(1 + mdvis) on its 9 covariates).

    ``n_splits`` random 90/10 splits of a random subset of ``n_train / 0.9`` rows (seeded),
    standardised on each training split as Sec. 6.2 does. Returns the stacked arrays
    (R, N, d), (R, N), (R, M, d), (R, M) and per-split (y_mean, y_std).
    """
    import statsmodels.api as sm

    df = sm.datasets.randhie.load_pandas().data
    y_all = np.log1p(df["mdvis"].to_numpy(float))
    x_all = df.drop(columns=["mdvis"]).to_numpy(float)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 6_2]))
    n_total = min(len(y_all), int(round(n_train / 0.9)))
    rows = rng.choice(len(y_all), n_total, replace=False)
    out = []
    for _ in range(n_splits):
        perm = rng.permutation(rows)
        tr, te = perm[:n_train], perm[n_train:]
        st = standardise_on_training_split(x_all[tr], y_all[tr], x_all[te], y_all[te],
                                           "randhie")
        out.append((st["x_train"], st["y_train"], st["x_test"], y_all[te], st["y_mean"],
                    st["y_std"]))
    return _stack(out), (f"statsmodels randhie: log(1 + mdvis) on 9 covariates, {n_splits} "
                         f"random splits of {n_total} rows ({n_train} train)")


def _stack(parts):
    xs, ys, xt, yt, my, sy = zip(*parts, strict=True)
    return (np.stack(xs), np.stack(ys), np.stack(xt), np.stack(yt),
            np.array(my), np.array(sy))


def load_uci_splits(data_dir, name: str, n_splits: int, max_train: int | None, seed: int):
    """Standard splits 0..n_splits-1 of a UCI set, standardised per split (Sec. 6.2).

    ``max_train`` keeps a seeded random subset of each training split (stated in the
    report); None keeps all of it.
    """
    parts, provenance = [], None
    rng = rng_for(seed, 62, "training subsample", name)
    for k in range(n_splits):
        s = load_uci_standardised(data_dir, UCI_FOLDERS[name], k)
        xtr, ytr = s["x_train"], s["y_train"]
        if max_train is not None and len(ytr) > max_train:
            keep = rng.choice(len(ytr), max_train, replace=False)
            xtr, ytr = xtr[keep], ytr[keep]
        y_test_raw = s["y_test"] * s["y_std"] + s["y_mean"]
        parts.append((xtr, ytr, s["x_test"], y_test_raw, s["y_mean"], s["y_std"]))
        provenance = s["provenance"] + (f"; training split subsampled to {max_train} rows "
                                        "(seeded)" if max_train is not None
                                        and len(s["y_train"]) > max_train else "")
    sizes = {(len(p[1]), len(p[3])) for p in parts}
    if len(sizes) != 1:  # the standard layout has equal split sizes; nothing is truncated
        raise ValueError(f"{name}: splits 0..{n_splits - 1} differ in (train, test) sizes "
                         f"{sorted(sizes)}; runs are stacked and must be equal-sized")
    return _stack(parts), provenance


def run_bnn_experiment(datasets: dict, *, epochs: int, vi_epochs: int, seed: int,
                       methods=None, progress=None) -> dict:
    """Fit every method on every data set; return per-split test RMSE and log-likelihood.

    Parameters
    ----------
    datasets : dict name -> (arrays, provenance)
        arrays = (x_train (R,N,d), y_train (R,N) standardised, x_test (R,M,d) standardised,
        y_test (R,M) original units, y_mean (R,), y_std (R,)).
    epochs : int
        Passes of PBP-based methods (the paper: T = 40).
    vi_epochs : int
        Epochs of VI and the point estimate.

    Returns
    -------
    dict name -> {"n_train", "n_splits", "provenance", "methods": {method: {"rmse": [...],
    "loglik": [...], "info": {...}, "seconds": float}}}
    """
    epochs = check_count(epochs, "epochs")
    vi_epochs = check_count(vi_epochs, "vi_epochs")
    tick = progress or (lambda name: None)
    out = {}
    for name, (arrays, provenance) in datasets.items():
        xtr, ytr, xte, yte, my, sy = arrays
        r, n, _ = xtr.shape
        hidden = HIDDEN.get(name, 50)
        configs = {"ADF": PBPConfig(method="adf", n_hidden=hidden, epochs=epochs),
                   "EP": PBPConfig(method="ep", n_hidden=hidden, epochs=epochs),
                   "SEP": PBPConfig(method="sep", n_hidden=hidden, epochs=epochs)}
        for label, params in dpsep_configs(n, epochs).items():
            method = "sep-clipped" if params.noise_multiplier is None else "dp-sep"
            configs[label] = PBPConfig(method=method, n_hidden=hidden, epochs=epochs,
                                       dpsep=params)
        res = {}
        for label, cfg in configs.items():
            if methods is not None and label not in methods:
                continue
            tick(f"BNN {name}: {label}")
            t0 = time.perf_counter()
            fit = fit_pbp(xtr, ytr, cfg, rng_for(seed, 62, name, label))
            mean, var = fit.predict(xte)  # run r on its own test inputs xte[r]
            rmse, ll = _metrics(mean, var, yte, my, sy)
            res[label] = {"rmse": rmse, "loglik": ll, "info": _jsonable(fit.info),
                          "seconds": round(time.perf_counter() - t0, 1)}
        for label, fitter in (("VI", fit_bnn_vi), ("point estimate", fit_bnn_point)):
            if methods is not None and label not in methods:
                continue
            tick(f"BNN {name}: {label}")
            t0 = time.perf_counter()
            fit = fitter(xtr, ytr, n_hidden=hidden, epochs=vi_epochs,
                         seed=int(seed_sequence(seed, 63, name, label).generate_state(1)[0]))
            mean, var = fit.predict(xte)  # run r on its own test inputs xte[r]
            rmse, ll = _metrics(mean, var, yte, my, sy)
            res[label] = {"rmse": rmse, "loglik": ll, "info": _jsonable(fit.info),
                          "seconds": round(time.perf_counter() - t0, 1)}
        out[name] = {"n_train": n, "n_splits": r, "n_hidden": hidden,
                     "provenance": provenance, "methods": res}
    return out


def _metrics(mean, var, y_test, y_mean, y_std):
    """Test RMSE and log-likelihood per run in the original units (PBP's convention).

    A run whose predictions are not finite (a diverged DP-SEP run) scores RMSE = +inf
    and log-likelihood = -inf: it is worse than any finite run, and the paired sign
    tests only use the order. Such runs are counted in the evidence.
    """
    y_std_units = (y_test - y_mean[:, None]) / y_std[:, None]
    ok = np.isfinite(mean).all(axis=1) & np.isfinite(var).all(axis=1) & (var > 0).all(axis=1)
    rmse = np.full(mean.shape[0], np.inf)
    ll = np.full(mean.shape[0], -np.inf)
    if ok.any():
        r_ok, l_ok = regression_test_metrics(mean[ok], var[ok], y_std_units[ok], y_std[ok])
        rmse[ok], ll[ok] = r_ok, l_ok
    return rmse.tolist(), ll.tolist()


def _jsonable(info):
    out = {}
    for k, v in dict(info).items():
        if isinstance(v, np.ndarray):
            out[k] = v.tolist()
        elif isinstance(v, (np.floating, np.integer)):
            out[k] = v.item()
        else:
            out[k] = v
    return out


# --------------------------------------------------------------------------- the check
def bnn_datasets(data_dir, sets, n_splits: int, max_train: int | None, embedded_train: int,
                 seed: int) -> dict:
    """The data sets of the BNN check: the UCI sets with --data-dir, else the embedded one.

    With a data folder, Protein has only 5 standard splits (README of the data folder),
    so it runs min(n_splits, 5) splits.
    """
    if data_dir is None:
        return {EMBEDDED: load_embedded(n_splits, embedded_train, seed)}
    out = {}
    for name in sets:
        k = min(n_splits, 5) if name == "Protein" else n_splits
        out[name] = load_uci_splits(data_dir, name, k, max_train, seed)
    return out


def _file_shape(data_dir, name):
    from pathlib import Path

    folder = Path(data_dir) / "uci" / UCI_FOLDERS[name]
    with open(folder / "data.txt") as fh:
        n_rows = sum(1 for line in fh if line.strip())
    n_feat = len(np.loadtxt(folder / "index_features.txt", dtype=int, ndmin=1))
    return (n_rows, n_feat)


