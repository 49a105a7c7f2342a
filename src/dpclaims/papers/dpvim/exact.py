"""DPVIm's identities proved symbolically (sympy), with interval evaluations that
certify a refutation: Prop. 3.1 eq. (11), eq. (20) and Cor. 3.1.

Eq. (11) (Sec. 3.1): "$$\\mathbf{g}_s = \\boldsymbol{\\eta} T'(\\mathbf{s}_q) \\mathbf{g}_m +
\\nabla_{\\mathbf{s}_q} H(q), \\quad (11)$$"; eq. (20) (Sec. 3.1.2): "$$\\mathbf{g}_a =
J_a(T(\\mathbf{a}_q)\\boldsymbol{\\eta})\\mathbf{g}_m + \\nabla_{\\mathbf{a}_q}H(q), \\quad
(20)$$", "where J_a denotes the Jacobian of T w.r.t \\mathbf{a}_q". Both are universal:
for every m_q, s_q (a_q), eta, data set and model. A bound at finitely many points is
only a lower bound on the largest gap, so it can refute them but never make them hold.

**The proof (decides holds).** :func:`prove_aligned_identity` builds the single-sample
ELBO L = f(theta_1, ..., theta_d) + H(q) in sympy, with f an *undefined* function of d
arguments (the model's log joint at the data: every differentiable model and data set)
and T an *undefined* function (every differentiable transform, softplus and exp
included); theta_k = T(s_k) eta_k + m_k (eq. 6) or theta = L(a) eta + m with L lower
triangular, diagonal T(a_ii), below it a_ij in FullRank's order (eq. 19), H = sum log
T(s_k) (resp. T(a_ii)) + c. g_m = dL/dm and g_s = dL/ds (g_a = dL/da) are sympy's
derivatives; the right side is eta T'(s) g_m + dH/ds, resp. J^T g_m + dH/da with J =
d(L(a) eta)/da the d x d(d+1)/2 Jacobian (the printed "J_a(T(a_q) eta) g_m" multiplies a
length-d vector, so J_a is read in the gradient layout, i.e. as J^T; the interval code's
:func:`identity_sides` reads it the same way). The difference of the two sides
simplifies to the zero expression for d = 1, 2, 3 (:data:`PROOF_DIMS`). Every d: a scale
parameter p enters theta only through one coordinate, theta_i = U(p) eta_j + r + m_i
(mean field: U = T, j = i, r = 0; eq. 19: U = T on the diagonal, the identity below
it; r the rest of row i, free of p and m_i), and H only through a function E(p); so L
restricted to (m_i, p) is phi(U(p) eta_j + r + m_i) + E(p) + const with phi arbitrary,
and the p-entry of J^T g_m is U'(p) eta_j g_{m,i}. :func:`prove_aligned_identity` proves
this one-coordinate lemma with phi, U and E undefined; the structural step (each
parameter enters exactly one theta_i, read off eqs. 6 and 19) is the one part argued in
words, not by machine.

**Cor. 3.1.** Its proof: "As the $\\boldsymbol{\\eta}, T'(\\mathbf{s}_q)$ and the entropy
contribution $\\nabla_{\\mathbf{s}_q}H(q)$ are independent of the data, the
$\\tilde{\\mathbf{g}}_s^{aligned}$ satisfies the same privacy guarantee through
post-processing immunity". :func:`prove_corollary31` transcribes Algorithm 1 lines 4-5
("$\\tilde{\\mathbf{g}}_m \\leftarrow \\sum_{\\mathbf{x} \\in D}
\\gamma_{\\mathbf{x}}\\mathbf{g}_{m,\\mathbf{x}} + \\sigma_{DP}C\\boldsymbol{\\psi}$",
"$\\tilde{\\mathbf{g}}_s^{aligned} \\leftarrow
\\boldsymbol{\\eta}T'(\\mathbf{s}_q)\\tilde{\\mathbf{g}}_m + \\nabla_{\\mathbf{s}_q}H(q)$")
and Algorithm 2 lines 4-5 (g~_s = I_s^{-1}(eta T'(s) I_m g~_m + grad H), I_m and I_s
undefined functions of s_q: any data-independent blocks, eqs. (15)-(16)'s included)
with lines 2-3 (the per-example gradients and their clipping, whatever they are) folded
into the clipped sum S, a free symbol per coordinate (so both readings of Alg. 2 line
4's sum are covered). Two data sets (S1, psi1), (S2, psi2) with psi2 = psi1 + (S1 - S2)
/ (sigma_DP C) release the same g~_m, and the difference of their aligned g~_s
simplifies to 0: g~_s reads the data only through the release. This proves the property
of the algorithm *as transcribed* (the paper's lines, not the library's code);
:func:`dpclaims.algorithms.dpvi.dpvi.dp_step`'s floating-point implementation is exercised
by the check's hypothesis search, shown as an estimate.

**Refutation.** A planted wrong identity (the data term doubled; g~_s read from the
clipped data sum) leaves a non-zero difference in sympy, and a certified lower bound on
the gap comes from a real point: both sides enclosed in interval arithmetic at
:data:`PRECISION` bits at :data:`N_POINTS` points drawn from the seed
(:func:`aligned_identity_gap`, :func:`corollary_gap`;
:func:`dpclaims.analysis.enclosures.identity_gap`): the ELBO of the reference
implementation (logistic and linear regression, softplus and exp) with exact
derivatives by forward-mode differentiation over intervals, and Algorithms 1-2 lines 2-5
with the second noise draw enclosed. A lower end above 0 is a certificate: the
relative gap is claimed to be 0.
"""

from __future__ import annotations

from dataclasses import dataclass

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
N_POINTS = 16
#: The dimensions in which the identities are proved in full (every d: the
#: one-coordinate lemma, module docstring).
PROOF_DIMS = (1, 2, 3)


# ------------------------------------------------------------- the symbolic proofs

@dataclass(frozen=True)
class SymbolicResult:
    """The simplified differences of a claimed identity's two sides (sympy).

    ``residuals``: one (label, simplified difference as text) per instance and
    coordinate; the identity is proved when every difference is the zero expression.
    """

    statement: str
    residuals: tuple[tuple[str, str], ...]

    @property
    def proved(self) -> bool:
        return all(r == "0" for _, r in self.residuals)

    def first_nonzero(self) -> tuple[str, str] | None:
        return next(((k, r) for k, r in self.residuals if r != "0"), None)

    def to_dict(self) -> dict:
        return {"statement": self.statement, "proved": self.proved,
                "dims": list(PROOF_DIMS), "instances": len(self.residuals),
                "first_nonzero": self.first_nonzero()}


def _sympy():
    import sympy  # imported here: only the proofs need it (a second or so to import)
    return sympy


def _zero(expr):
    """``expr`` simplified: expanded (enough for a chain-rule identity), simplified only
    if that leaves something."""
    sp = _sympy()
    out = sp.expand(expr)
    return out if out == 0 else sp.simplify(expr)


def _elbo_symbolic(d: int, full_rank: bool):
    """(L, m, scale parameters, eta, H, J) for dimension d: L = f(theta) + H with f and T
    undefined (module docstring); J = d(T(a) eta)/da (full rank) or None."""
    sp = _sympy()
    T, f, c = sp.Function("T"), sp.Function("f"), sp.Symbol("c")
    m = sp.symbols(f"m1:{d + 1}", real=True)
    eta = sp.symbols(f"eta1:{d + 1}", real=True)
    if not full_rank:
        s = sp.symbols(f"s1:{d + 1}", real=True)
        theta = [T(s[k]) * eta[k] + m[k] for k in range(d)]
        H = sum((sp.log(T(v)) for v in s), c)
        return f(*theta) + H, m, s, eta, H, None
    rows, cols = np.tril_indices(d)                      # FullRank's order of a_q
    a = sp.symbols(f"a1:{len(rows) + 1}", real=True)
    L = sp.zeros(d, d)
    for k, (i, j) in enumerate(zip(rows, cols, strict=True)):
        L[i, j] = T(a[k]) if i == j else a[k]
    u = L * sp.Matrix(eta)
    theta = [u[i] + m[i] for i in range(d)]
    H = sum((sp.log(T(a[k])) for k, (i, j) in enumerate(zip(rows, cols, strict=True))
             if i == j), c)
    return f(*theta) + H, m, a, eta, H, u.jacobian(a)


def prove_aligned_identity(full_rank: bool, factor: float = 1.0) -> SymbolicResult:
    """Eq. (11) (mean field) or eq. (20) (full rank): g_s - (eta T'(s) g_m + dH/ds),
    resp. g_a - (J^T g_m + dH/da), simplified, for every d in :data:`PROOF_DIMS` and in
    the one-coordinate lemma that covers every d (module docstring). ``factor``
    multiplies the data term of the right side (1: the paper's; another value plants a
    wrong identity)."""
    sp = _sympy()
    k_factor = sp.Rational(factor)
    out = []
    for d in PROOF_DIMS:
        L, m, scale, eta, H, J = _elbo_symbolic(d, full_rank)
        g_m = sp.Matrix([sp.diff(L, v) for v in m])
        grad_h = sp.Matrix([sp.diff(H, v) for v in scale])
        if full_rank:
            rhs = k_factor * J.T * g_m + grad_h
        else:
            T = sp.Function("T")
            rhs = sp.Matrix([k_factor * eta[k] * sp.diff(T(scale[k]), scale[k]) * g_m[k]
                             + grad_h[k] for k in range(d)])
        for k, v in enumerate(scale):
            out.append((f"d = {d}, {v}", str(_zero(sp.diff(L, v) - rhs[k]))))
    # the one-coordinate lemma: theta_i = U(p) eta_j + r + m_i, H = E(p) + c, phi, U, E
    # undefined; the p-entry of J^T g_m is U'(p) eta_j g_{m,i}
    p, eta_j, r, m_i, c = sp.symbols("p eta_j r m_i c", real=True)
    U, E, phi = sp.Function("U"), sp.Function("E"), sp.Function("phi")
    L = phi(U(p) * eta_j + r + m_i) + E(p) + c
    rhs = k_factor * sp.diff(U(p) * eta_j + r, p) * sp.diff(L, m_i) + sp.diff(E(p) + c, p)
    out.append(("every d: one coordinate, U, E, phi undefined", str(_zero(sp.diff(L, p)
                                                                         - rhs))))
    what = ("eq. (20): g_a = J_a(T(a_q) eta) g_m + grad_a H(q)" if full_rank else
            "eq. (11): g_s = eta T'(s_q) g_m + grad_s H(q)")
    if factor != 1:
        what += f" [planted: data term times {factor:g}]"
    return SymbolicResult(what, tuple(out))


def prove_corollary31(variant: str, plant: bool = False) -> SymbolicResult:
    """Cor. 3.1 for Algorithm 1 (``variant`` "aligned") or 2 ("aligned-natural"), lines
    4-5 as printed (module docstring): the aligned g~_s of two data sets whose releases
    g~_m are equal differ by an expression that simplifies to 0, for d in
    :data:`PROOF_DIMS` and for coordinate k of any d (line 5 acts coordinate-wise: the
    other coordinates enter I_m, I_s and H only through s_q, as one free symbol).
    ``plant``: the planted variant whose line 5 reads the clipped data sum S instead of
    g~_m (must leave a non-zero difference)."""
    sp = _sympy()
    T = sp.Function("T")
    sigma, clip = sp.symbols("sigma_DP C", positive=True)
    out = []

    def coordinate(k, s, S, psi, eta, H):
        """(g~_m, g~_s) of coordinate k: line 4, line 5 (Alg. 1) or line 5 (Alg. 2)."""
        g_m = S[k] + sigma * clip * psi[k]
        used = S[k] if plant else g_m
        data = eta[k] * sp.diff(T(s[k]), s[k])
        if variant == "aligned":
            return g_m, data * used + sp.diff(H, s[k])
        i_m, i_s = sp.Function(f"I_m{k + 1}")(*s), sp.Function(f"I_s{k + 1}")(*s)
        return g_m, (data * i_m * used + sp.diff(H, s[k])) / i_s

    for d, lemma in [(d, False) for d in PROOF_DIMS] + [(2, True)]:
        if lemma:   # coordinate k = 1; s_rest stands for every other coordinate's s
            s = sp.symbols("s_k s_rest", real=True)
        else:
            s = sp.symbols(f"s1:{d + 1}", real=True)
        eta = sp.symbols(f"eta1:{d + 1}", real=True)
        S1, S2 = sp.symbols(f"S1_1:{d + 1}", real=True), sp.symbols(f"S2_1:{d + 1}",
                                                                    real=True)
        psi1 = sp.symbols(f"psi1:{d + 1}", real=True)
        psi2 = [psi1[k] + (S1[k] - S2[k]) / (sigma * clip) for k in range(d)]
        H = sum((sp.log(T(v)) for v in s), sp.Symbol("c"))
        for k in range(1 if lemma else d):
            gm1, gs1 = coordinate(k, s, S1, psi1, eta, H)
            gm2, gs2 = coordinate(k, s, S2, psi2, eta, H)
            if _zero(gm1 - gm2) != 0:      # the two releases are equal by construction
                raise AssertionError(f"the releases differ: {gm1 - gm2}")
            label = ("every d: coordinate k, the others as s_rest" if lemma
                     else f"d = {d}, coordinate {k + 1}")
            out.append((label, str(_zero(gs1 - gs2))))
    alg = "Algorithm 1" if variant == "aligned" else "Algorithm 2"
    what = (f"Cor. 3.1, {alg} lines 4-5: equal releases g~_m give equal aligned g~_s"
            + (" [planted: line 5 reads the clipped sum S]" if plant else ""))
    return SymbolicResult(what, tuple(out))


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
