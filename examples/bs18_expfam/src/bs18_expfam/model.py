"""The bounded models of Bernstein & Sheldon's code release, vectorised over trials.

Everything here follows the authors' code (github.com/gbernstein6/private_bayesian_expfam,
``Bounded_Suff_Stats``), which the paper's README calls "a code release as part of the
paper"; the paper's body text was not available to us (README of this package).

Beta-Bernoulli (``Beta_Binomial`` in ``distributions.py``): records x in {0, 1}, the
sufficient statistic s = sum x, prior Beta(10, 10), conjugate posterior
Beta(10 + s, 10 + N - s) with both parameters floored at 0.001. The release is
y = s + Laplace(sensitivity / epsilon) (``driver.py``, ``draw_laplace_noise``).

The noise-aware posterior is the Gibbs sampler of ``Gibbs.py``: 500 burn-in and 1000
kept iterations of (i) s | theta, sigma^2, y from the product of the CLT normal
N(N theta, N theta (1 - theta)) and N(y; s, sigma^2), truncated to [0, N]; (ii)
1 / sigma^2 | s, y ~ Wald(1 / (b |y - s|), 1 / b^2) with b = sensitivity / epsilon (the
Laplace noise as a scale mixture of normals, sigma^2 ~ Exp(mean 2 b^2) at the start);
(iii) theta | s from the conjugate posterior. Here every array carries a leading
trial axis: T independent chains advance together.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: ``Beta_Binomial.prior_parameters`` (alpha, beta).
PRIOR = (10.0, 10.0)
#: ``Beta_Binomial.sensitivity`` and ``Dirichlet_Multinomial.sensitivity``.
CODE_SENSITIVITY = 1.0
#: ``conjugate_update``: ``np.maximum(posterior_parameters, .001)``.
FLOOR = 0.001
#: ``Gibbs.py``: ``burnin, num_iterations = 500, 1000``.
BURNIN, ITERATIONS = 500, 1000


def _check_epsilon(epsilon: float) -> float:
    e = float(epsilon)
    if not np.isfinite(e) or e <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    return e


def bernoulli_statistic(x) -> np.ndarray:
    """s = sum of the records over the last axis; x of shape (..., N) in {0, 1}.

    Raises ValueError for a record outside {0, 1} (the model's domain)."""
    x = np.asarray(x, float)
    if not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("Beta-Bernoulli records must be 0 or 1")
    return x.sum(axis=-1)


def multinomial_statistics(categories, k: int = 3) -> np.ndarray:
    """The K - 1 counts the code carries (``Dirichlet_Multinomial``: categories
    0 .. K-2; the last is implied by N). ``categories``: shape (N,) of ints in [0, K)."""
    c = np.asarray(categories)
    if c.size and (c.min() < 0 or c.max() >= k):
        raise ValueError(f"categories must lie in [0, {k}), got range [{c.min()}, {c.max()}]")
    return np.bincount(c.astype(int), minlength=k)[: k - 1].astype(float)


def laplace_release(stat, epsilon: float, rng: np.random.Generator, n: int,
                    shared: bool = False) -> np.ndarray:
    """n releases of ``stat`` (shape (d,)) plus Laplace(CODE_SENSITIVITY / epsilon) noise:
    shape (n, d). ``shared=True`` draws ONE noise value per release and adds it to every
    coordinate, as ``driver.py``'s ``draw_laplace_noise`` does for a vector statistic
    (``np.random.laplace(scale=laplace_scale)`` has no size); ``False`` draws each
    coordinate independently, as the Gibbs sampler's diagonal noise model assumes."""
    b = CODE_SENSITIVITY / _check_epsilon(epsilon)
    stat = np.atleast_1d(np.asarray(stat, float))
    size = (n, 1) if shared else (n, stat.size)
    return stat[None, :] + rng.laplace(scale=b, size=size)


def conjugate_interval(s, n_records: int, level: float, prior=PRIOR):
    """Central ``level`` interval of Beta(a + s, b + N - s) (parameters floored at 0.001,
    as the code does), for every entry of ``s`` (any shape). The non-private posterior
    takes the true s; the naive one takes the noisy y in its place."""
    s = np.asarray(s, float)
    a = np.maximum(prior[0] + s, FLOOR)
    b = np.maximum(prior[1] + n_records - s, FLOOR)
    tail = (1.0 - level) / 2
    return stats.beta.ppf(tail, a, b), stats.beta.ppf(1 - tail, a, b)


def gibbs_posterior(y, n_records: int, epsilon: float, rng: np.random.Generator, *,
                    burnin: int = BURNIN, iterations: int = ITERATIONS,
                    prior=PRIOR) -> np.ndarray:
    """Posterior draws of theta from the code's Gibbs sampler, one chain per release.

    Parameters
    ----------
    y : array of shape (T,)
        Noisy sufficient statistics (one release per chain).
    n_records : int
        N, the number of individuals (public in the code's model).
    epsilon : float
        The privacy level the noise was drawn at (> 0).
    burnin, iterations : int
        The code's 500 and 1000 by default.

    Returns
    -------
    ndarray of shape (T, iterations)
    """
    y = np.asarray(y, float)
    b = CODE_SENSITIVITY / _check_epsilon(epsilon)
    n = float(n_records)
    theta = rng.beta(prior[0], prior[1], size=y.shape)
    noise_var = rng.exponential(scale=2 * b ** 2, size=y.shape)
    out = np.empty(y.shape + (iterations,))
    for it in range(burnin + iterations):
        ss_mean, ss_var = n * theta, np.maximum(n * theta * (1 - theta), 1e-12)
        total = noise_var + ss_var
        cond_var = noise_var * ss_var / total
        cond_mean = (ss_var * y + noise_var * ss_mean) / total
        sd = np.sqrt(cond_var)
        s = stats.truncnorm.rvs((0.0 - cond_mean) / sd, (n - cond_mean) / sd, loc=cond_mean,
                                scale=sd, random_state=rng)  # truncated to [0, N]
        abs_noise = np.maximum(np.abs(y - s), 1e-12)
        noise_var = 1.0 / rng.wald(1.0 / (b * abs_noise), 1.0 / b ** 2)
        theta = rng.beta(np.maximum(prior[0] + s, FLOOR), np.maximum(prior[1] + n - s, FLOOR))
        if it >= burnin:
            out[:, it - burnin] = theta
    return out


def coverage_study(n_records: int, epsilon: float, trials: int, levels, rng, *,
                   burnin: int = BURNIN, iterations: int = ITERATIONS,
                   prior=PRIOR) -> dict:
    """Simulation-based calibration of the three posteriors the code compares.

    Each trial draws theta ~ prior, s ~ Binomial(N, theta), y = s + Laplace(1 / epsilon),
    and asks whether each method's central interval at each of ``levels`` contains
    theta. A calibrated posterior covers theta with probability exactly ``level``.

    Returns
    -------
    dict: {"hits": {method: {level: int}}, "trials": int, "N": int, "epsilon": float}
    for the methods "non-private" (Beta update on s), "naive" (Beta update on y) and
    "noise-aware" (the Gibbs sampler on y).
    """
    theta = rng.beta(prior[0], prior[1], size=trials)
    s = rng.binomial(n_records, theta).astype(float)
    y = s + rng.laplace(scale=CODE_SENSITIVITY / _check_epsilon(epsilon), size=trials)
    draws = gibbs_posterior(y, n_records, epsilon, rng, burnin=burnin,
                            iterations=iterations, prior=prior)
    hits = {"non-private": {}, "naive": {}, "noise-aware": {}}
    for level in levels:
        tail = (1.0 - level) / 2
        for name, stat in (("non-private", s), ("naive", y)):
            lo, hi = conjugate_interval(stat, n_records, level, prior)
            hits[name][level] = int(((lo <= theta) & (theta <= hi)).sum())
        lo, hi = np.quantile(draws, [tail, 1 - tail], axis=1)
        hits["noise-aware"][level] = int(((lo <= theta) & (theta <= hi)).sum())
    return {"hits": hits, "trials": int(trials), "N": int(n_records),
            "epsilon": float(epsilon)}
