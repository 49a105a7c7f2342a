"""DPVIm's identities in interval arithmetic: Prop. 3.1 eq. (11), eq. (20) and Cor. 3.1,
with a certified bracket on the gap (:func:`dpclaims.analysis.enclosures.identity_gap`).

Eq. (11) (Sec. 3.1): "$$\\mathbf{g}_s = \\boldsymbol{\\eta} T'(\\mathbf{s}_q) \\mathbf{g}_m +
\\nabla_{\\mathbf{s}_q} H(q), \\quad (11)$$"; eq. (20) (Sec. 3.1.2): "$$\\mathbf{g}_a =
J_a(T(\\mathbf{a}_q)\\boldsymbol{\\eta})\\mathbf{g}_m + \\nabla_{\\mathbf{a}_q}H(q), \\quad
(20)$$". The left side is the exact gradient of the single-sample ELBO (eq. 5 with theta
of eq. 6 / 19; :func:`dpclaims.families.dpvi.dpvi.elbo_single_sample` transcribed with
interval operations) w.r.t. the scale parameters; the right side is built from the
exact g_m (the same ELBO's gradient w.r.t. m_q), T'(s) (the derivative of T) and
grad H (the entropy's gradient), each by forward-mode automatic differentiation over
intervals (:class:`~dpclaims.analysis.enclosures.Dual`). Both are enclosed at
:data:`PRECISION` bits at :data:`N_POINTS` points drawn from the seed (d in 1..3, 1 to
5 records, logistic and linear regression, softplus and exp), so the bracket contains
the exact relative gap |l - r| / (1 + |l| + |r|).

Cor. 3.1's proof: "As the $\\boldsymbol{\\eta}, T'(\\mathbf{s}_q)$ and the entropy
contribution $\\nabla_{\\mathbf{s}_q}H(q)$ are independent of the data, the
$\\tilde{\\mathbf{g}}_s^{aligned}$ satisfies the same privacy guarantee through
post-processing immunity". Algorithms 1 and 2 (lines 2-5) are transcribed with
interval operations; two data sets of one size, and a second noise draw psi2 = psi +
(S1 - S2) / (sigma_DP C) enclosed, so that the two releases g~_m are equal in exact
arithmetic; the bracket is on the relative gap between the two aligned g~_s.

A true identity is read as exact to :data:`IDENTITY_TOLERANCE` (2^-64): the claims
are equations with no printed digits, so the tolerance is not the paper's; it only has
to lie above what 2^-PRECISION rounding can leave in the enclosures and far below any
real discrepancy (a wrong factor gives a gap of order 0.1).
"""

from __future__ import annotations

import math

import numpy as np
from mpmath import iv

from dpclaims.analysis.enclosures import (
    Dual,
    GapBound,
    exp,
    identity_gap,
    imin,
    log,
    log_sigmoid,
    precision,
    sigmoid,
    softplus,
    sqrt,
)

PRECISION = 128
IDENTITY_TOLERANCE = 2.0 ** -64
N_POINTS = 16


def _T(s, transform):
    return softplus(s) if transform == "softplus" else exp(s)


def _cholesky(a, d, transform):
    """L (list of rows) from a_q: diagonal T(a_ii), below it a_ij (FullRank's order)."""
    rows, cols = np.tril_indices(d)
    L = [[0] * d for _ in range(d)]
    for k, (i, j) in enumerate(zip(rows, cols, strict=True)):
        L[i][j] = _T(a[k], transform) if i == j else a[k]
    return L, rows, cols


def _theta(m, scale, eta, d, transform, full_rank):
    if not full_rank:
        return [_T(scale[k], transform) * eta[k] + m[k] for k in range(d)]
    L, _, _ = _cholesky(scale, d, transform)
    return [sum((L[i][j] * eta[j] for j in range(d)), 0) + m[i] for i in range(d)]


def _entropy(scale, d, transform, full_rank):
    const = iv.mpf(d) / 2 * iv.log(2 * iv.pi * iv.e)
    if not full_rank:
        return sum((log(_T(v, transform)) for v in scale), 0) + const
    rows, cols = np.tril_indices(d)
    diag = [scale[k] for k, (i, j) in enumerate(zip(rows, cols, strict=True)) if i == j]
    return sum((log(_T(v, transform)) for v in diag), 0) + const


def _elbo(xi, point):
    """log p(D, theta(eta; xi)) + H(q_xi) (elbo_single_sample, prior_std = noise_std = 1)."""
    d, full_rank, transform, logistic = (point["d"], point["full_rank"], point["transform"],
                                         point["logistic"])
    m, scale = xi[:d], xi[d:]
    theta = _theta(m, scale, [iv.mpf(e) for e in point["eta"]], d, transform, full_rank)
    total = 0
    for xr, yr in zip(point["x"], point["y"], strict=True):
        a = sum((t * iv.mpf(xk) for xk, t in zip(xr, theta, strict=True)), 0)
        if logistic:
            total = total + log_sigmoid(a) * iv.mpf(yr) + log_sigmoid(-a) * (1 - iv.mpf(yr))
        else:
            r = a - iv.mpf(yr)
            total = total - r * r / 2 - iv.log(2 * iv.pi) / 2
    prior = -sum((t * t for t in theta), 0) / 2 - iv.mpf(d) / 2 * iv.log(2 * iv.pi)
    return total + prior + _entropy(scale, d, transform, full_rank)


def identity_sides(point, factor: float = 1.0):
    """(lhs, rhs) of eq. (11) / (20) at ``point`` as interval vectors. ``factor``
    multiplies the data term of the right side (1: the paper's; another value plants a
    wrong identity)."""
    d, full_rank, transform = point["d"], point["full_rank"], point["transform"]
    xi = [iv.mpf(v) for v in point["xi"]]
    _, grad = _elbo_grad(xi, point)
    g_m, g_s = grad[:d], grad[d:]
    scale = xi[d:]
    _, h_grad = _grad(lambda z: _entropy(z, d, transform, full_rank), scale)
    eta = [iv.mpf(e) for e in point["eta"]]
    f = iv.mpf(factor)
    if not full_rank:
        rhs = [f * eta[k] * _grad(lambda z: _T(z[0], transform), [scale[k]])[1][0] * g_m[k]
               + h_grad[k] for k in range(d)]
        return list(g_s), rhs
    # J_a(T(a) eta): the Jacobian of a -> L(a) eta, by forward differentiation
    rows = [_grad(lambda z, i=i: _theta([iv.mpf(0)] * d, z, eta, d, transform, True)[i],
                  scale)[1] for i in range(d)]
    rhs = [f * sum((rows[i][k] * g_m[i] for i in range(d)), iv.mpf(0)) + h_grad[k]
           for k in range(len(scale))]
    return list(g_s), rhs


def _grad(fun, values):
    out = fun(Dual.variables(list(values)))
    if not isinstance(out, Dual):
        return out, [iv.mpf(0)] * len(values)
    return out.v, list(out.g)


def _elbo_grad(xi, point):
    return _grad(lambda z: _elbo(z, point), xi)


def identity_points(seed: int, full_rank: bool, n: int = N_POINTS) -> list[dict]:
    """``n`` points (data, xi, eta, model, transform) drawn from ``seed``: the ranges of the
    hypothesis search (x, y, m_q, eta in [-3, 3], s_q in [-4, 1.5])."""
    rng = np.random.default_rng([seed, 38, int(full_rank)])
    out = []
    for k in range(n):
        d = int(rng.integers(1, 4))
        records = int(rng.integers(1, 6))
        logistic = bool(k % 2)
        transform = ("softplus", "exp")[(k // 2) % 2]
        n_scale = d * (d + 1) // 2 if full_rank else d
        x = rng.uniform(-3, 3, (records, d))
        y = (rng.integers(0, 2, records).astype(float) if logistic
             else rng.uniform(-3, 3, records))
        xi = np.concatenate([rng.uniform(-3, 3, d), rng.uniform(-4, 1.5, n_scale)])
        out.append({"d": d, "full_rank": full_rank, "transform": transform,
                    "logistic": logistic, "x": x.tolist(), "y": y.tolist(),
                    "xi": xi.tolist(), "eta": rng.uniform(-3, 3, d).tolist()})
    return out


def aligned_identity_gap(seed: int, full_rank: bool, factor: float = 1.0,
                         n: int = N_POINTS) -> GapBound:
    """Certified bracket on the largest relative gap of eq. (11) (or (20)) over the points
    of :func:`identity_points`."""
    points = identity_points(seed, full_rank, n)
    cache = {}

    def sides(i):
        if i not in cache:
            cache[i] = identity_sides(points[i], factor)
        return cache[i]

    return identity_gap(lambda i: sides(i)[0], lambda i: sides(i)[1], range(len(points)),
                        prec=PRECISION)


# ------------------------------------------------------------------------- Cor. 3.1

def _norm(v):
    return sqrt(sum((c * c for c in v), iv.mpf(0)))


def _aligned_step(variant, point, x, y, psi, plant=False):
    """(released g~_m, aligned g~_s, clipped sum S) of Alg. 1 / Alg. 2 lines 2-5 (mean
    field, logistic regression, prior_std 1, batch scale B = N, entropy / N), in
    intervals. ``plant``: the planted variant whose g~_s reads the clipped data sum S
    instead of the release."""
    d = point["d"]
    xi = [iv.mpf(v) for v in point["xi"]]
    eta = [iv.mpf(e) for e in point["eta"]]
    m, s = xi[:d], xi[d:]
    n = len(x)
    t = [softplus(v) for v in s]
    tp = [sigmoid(v) for v in s]
    theta = [m[k] + t[k] * eta[k] for k in range(d)]
    clip, sigma = iv.mpf(point["clip"]), iv.mpf(1)
    total = [iv.mpf(0)] * d
    for xr, yr in zip(x, y, strict=True):
        xr = [iv.mpf(v) for v in xr]
        a = sum((xk * th for xk, th in zip(xr, theta, strict=True)), iv.mpf(0))
        g = [(iv.mpf(yr) - sigmoid(a)) * xr[k] - theta[k] / n for k in range(d)]
        if variant == "aligned-natural":
            g = [g[k] * t[k] ** 2 for k in range(d)]      # I_m^{-1} g, I_m = 1 / T^2
        gamma = imin(1, clip / _norm(g))
        total = [total[k] + gamma * g[k] for k in range(d)]
    released = [total[k] + sigma * clip * psi[k] for k in range(d)]
    used = total if plant else released
    g_tilde = [u / n for u in used]
    ent = [tp[k] / t[k] / n for k in range(d)]
    if variant == "aligned-natural":
        i_m = [1 / t[k] ** 2 for k in range(d)]
        i_s = [2 * tp[k] ** 2 / t[k] ** 2 for k in range(d)]
        g_s = [(eta[k] * tp[k] * i_m[k] * g_tilde[k] + ent[k]) / i_s[k] for k in range(d)]
    else:
        g_s = [eta[k] * tp[k] * g_tilde[k] + ent[k] for k in range(d)]
    return released, g_s, total


def corollary_points(seed: int, n: int = N_POINTS) -> list[dict]:
    """Pairs of data sets of one size with xi, eta, psi and C (the search's ranges)."""
    rng = np.random.default_rng([seed, 38, 31])
    out = []
    for _ in range(n):
        d, records = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        out.append({"d": d, "xi": np.concatenate([rng.uniform(-3, 3, d),
                                                  rng.uniform(-4, 1.5, d)]).tolist(),
                    "eta": rng.uniform(-3, 3, d).tolist(), "psi": rng.uniform(-3, 3, d).tolist(),
                    "clip": float(rng.uniform(0.05, 5)),
                    "d1": (rng.uniform(-3, 3, (records, d)).tolist(),
                           rng.integers(0, 2, records).astype(float).tolist()),
                    "d2": (rng.uniform(-3, 3, (records, d)).tolist(),
                           rng.integers(0, 2, records).astype(float).tolist())})
    return out


def corollary_gap(seed: int, variant: str, plant: bool = False,
                  n: int = N_POINTS) -> GapBound:
    """Certified bracket on the largest relative gap between the aligned g~_s of two data
    sets whose releases g~_m are equal in exact arithmetic (module docstring)."""
    points = corollary_points(seed, n)
    cache = {}

    def sides(i):
        if i not in cache:
            p = points[i]
            psi = [iv.mpf(v) for v in p["psi"]]
            _, gs1, s1 = _aligned_step(variant, p, *p["d1"], psi, plant)
            _, _, s2 = _aligned_step(variant, p, *p["d2"], psi, plant)
            clip = iv.mpf(p["clip"])
            psi2 = [psi[k] + (s1[k] - s2[k]) / clip for k in range(p["d"])]  # sigma_DP = 1
            _, gs2, _ = _aligned_step(variant, p, *p["d2"], psi2, plant)
            cache[i] = (gs1, gs2)
        return cache[i]

    with precision(PRECISION):
        return identity_gap(lambda i: sides(i)[0], lambda i: sides(i)[1],
                            range(len(points)), prec=PRECISION)


def tolerance_text() -> str:
    return f"2^-64 = {IDENTITY_TOLERANCE:.3g}"


assert math.isclose(IDENTITY_TOLERANCE, 5.421010862427522e-20)
