"""DP-SEP's noise calibration (Vinaroz & Park, dpsep_full_v0.txt, Sec. 3) under each
reading of its text: "we input a chosen privacy level eps, delta, the number of
repetitions T, the number of datapoints N and the clipping norm C to the auto-dp
package ... which returns the corresponding privacy parameter sigma".
"""

from __future__ import annotations

import functools

import dp_accounting
import numpy as np

from dpclaims.analysis import accounting as acc

DELTA = 1e-5


# Readings of "we input a chosen privacy level eps, delta, the number of repetitions T,
# the number of datapoints N and the clipping norm C to the auto-dp package ... which
# returns the corresponding privacy parameter sigma" (Sec. 3).
CALIBRATION_READINGS = {
    "paper:wor(q=1/N)x(T*N)": (
        "autodp, subsampled Gaussian without replacement (Wang et al. 2019), one record "
        "per step (q = 1/N), T*N steps, replace-one"),
    "paper:poisson(q=1/N)x(T*N)": (
        "autodp, Poisson-subsampled Gaussian, q = 1/N, T*N steps, add-remove"),
    "paper:wor(q=1/N)xT": (
        "autodp, subsampled Gaussian without replacement, q = 1/N, T steps (T read as "
        "the number of steps)"),
}


def _calibration_sampling(reading: str, n: int, t: int):
    if reading == "paper:wor(q=1/N)x(T*N)":
        return acc.Sampling("without-replacement", n, batch_size=1, steps=t * n), "replace-one"
    if reading == "paper:poisson(q=1/N)x(T*N)":
        return acc.Sampling("poisson", n, batch_size=1, steps=t * n), "add-remove"
    if reading == "paper:wor(q=1/N)xT":
        return acc.Sampling("without-replacement", n, batch_size=1, steps=t), "replace-one"
    raise ValueError(f"unknown calibration reading {reading!r}")


@functools.lru_cache(maxsize=256)
def paper_sigma(reading: str, n: int, t: int, epsilon: float, delta: float = DELTA) -> float:
    """Noise multiplier sigma the paper's Sec. 3 procedure gives under ``reading``.

    Cached: autodp's calibration takes seconds per call and the experiments reuse it.
    """
    sampling, relation = _calibration_sampling(reading, n, t)
    return acc.calibrate_noise_multiplier(epsilon, delta, sampling, relation,
                                          accountant="autodp-rdp")


def honest_epsilon(sigma: float, epochs: int, delta: float = DELTA) -> float:
    """Exact epsilon of ``epochs`` Gaussian releases of noise multiplier sigma.

    Algorithm 3 touches every record once per epoch (a shuffled pass). When the
    pass order is known to the adversary, the record's releases are an adaptive
    composition of ``epochs`` Gaussian mechanisms with sensitivity Delta and noise
    sigma Delta, i.e. exactly sqrt(T)/sigma-GDP: its epsilon is that of one
    Gaussian mechanism of noise multiplier sigma / sqrt(T) (dp_accounting's exact
    ``get_epsilon_gaussian``). A hidden shuffle can only be more private.
    """
    return float(dp_accounting.get_epsilon_gaussian(sigma / np.sqrt(epochs), delta))
