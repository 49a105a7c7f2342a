"""Certified upper bounds on BLR's sensitivities (VIPS eqs. 22, 57, 59) by interval
branch and bound (:mod:`dpclaims.analysis.enclosures`).

Setting (VIPS Sec. 3.2.1 and 6.2; :mod:`dpclaims.algorithms.vips.blr`): records (x, y)
with ||x||_2 <= 1 in R^d (any d) and y in {0, 1}; the expected sufficient statistics
of a batch of N records are s1 = (1/N) sum_n (y_n - 1/2) x_n and s2 = (1/N) sum_n
<xi_n> x_n x_n^T with <xi_n> = tanh(c_n/2) / (2 c_n), c_n = sqrt(x_n^T <m m^T> x_n).
Under replace-one the other N - 1 records cancel, so every sensitivity is (1/N) times
a supremum over one pair of records (r, r') and the shared variational parameters:
the ratios below do not depend on N.

Reductions (each exact, so that the branch and bound runs in <= 5 dimensions whatever d):

* **<xi> as a free variable in [0, 1/4].** <xi_n> = pg_mean(c_n) is decreasing in c_n
  >= 0 with value 1/4 at 0 and limit 0 (tanh(t)/t is decreasing on t > 0); for linearly
  independent x, x' (d >= 2) any pair (c, c') > 0 is attained by some positive definite
  <m m^T> (e.g. a diagonal matrix in a basis dual to (x, x', ...)). So the set of
  attainable (<xi>, <xi'>) is dense in [0, 1/4]^2; a continuous function has the same
  supremum over a set and over its closure, and treating them as free variables over
  the closed box can only enlarge the set: the supremum is unchanged and the bound is
  valid.
* **Norms through the Gram matrix.** ||Delta s1||_2^2 = alpha^2 a^2 + beta^2 b^2 -
  2 alpha beta a b t and ||Delta s2||_F^2 = xi^2 a^4 + xi'^2 b^4 - 2 xi xi' a^2 b^2 t^2
  with a = ||x||, b = ||x'||, t = cos angle(x, x') (alpha = y - 1/2, beta = y' - 1/2;
  ||u u^T||_F = ||u||^2 and <x x^T, x' x'^T>_F = <x, x'>^2): the norms depend on (x, x')
  only through (a, b, t), and for d >= 2 every (a, b, t) in [0, 1]^2 x [-1, 1] is the
  Gram data of a pair in the unit ball (d = 1 gives a subset; a record of R^1 padded
  with zeros is one of R^2 with the same statistics, so the supremum over all d is the
  one over d >= 2). For s2 alone, u = xi a^2 and v = xi' b^2 range over [0, 1/4] each and
  T = t^2 over [0, 1], so ||Delta s2||_F^2 = u^2 + v^2 - 2 u v T (3 dimensions).
* **Per coordinate** (eq. 22): coordinate l of s1 depends on x only through x_l, whose
  range over the unit ball is [-1, 1]; a diagonal entry of s2 through x_l^2 in [0, 1];
  an off-diagonal one through x_i x_j, whose range over the unit ball (d >= 2) is
  [-1/2, 1/2]. Each is a 2- or 4-dimensional branch and bound over pairs.
"""

from __future__ import annotations

import math

from mpmath import iv

from dpclaims.analysis.enclosures import Domain, SupBound, maximise, nonneg_sqrt, sensitivity

#: Interval working precision (bits) and the box budget of each branch and bound.
PRECISION = 53
MAX_BOXES = 20_000
TOLERANCE = 1e-3

HALF = iv.mpf(0.5)


def _alpha(y):
    return iv.mpf(y) - HALF


def per_coordinate_ratio(*, max_boxes: int = MAX_BOXES, tol: float = TOLERANCE,
                         prec: int = PRECISION, factor: float = 2.0) -> dict[str, SupBound]:
    """eq. 22 per coordinate: sup ``|Delta s_l|`` over the paper's ``(2/N) max |<s_l>|``
    (1/2 for s1, 1/4 for s2), as ratios, for s1, the diagonal and the off-diagonal of s2 (module
    docstring). ``factor``: the 2 of eq. 22 (another value plants a variant). Returns
    {part: SupBound}; the reading's ratio is their maximum."""
    opts = {"max_boxes": max_boxes, "tol": tol, "prec": prec}
    k = iv.mpf(factor) / 2  # the divisors below are the paper's, 2 x 1/2 and 2 x 1/4
    s1 = sensitivity(lambda b, y: [_alpha(y) * b[0] / k], Domain.box([-1], [1], labels=(0, 1)),
                     norm="linf", hints=[((1.0, -1.0), (1, 1))],
                     what="|Delta s1_l| / (2 x 1/2), x_l in [-1, 1]", **opts)
    quarter_box = ([0.0, 0.0], [1.0, 0.25])
    diag = sensitivity(lambda b: [b[1] * b[0] / HALF / k], Domain.box(*quarter_box),
                       norm="linf", hints=[(1.0, 0.25, 0.0, 0.0)],
                       what="|Delta s2_ll| / (2 x 1/4), x_l^2 in [0, 1], <xi> in [0, 1/4]",
                       **opts)
    off = sensitivity(lambda b: [b[1] * b[0] / HALF / k], Domain.box([-0.5, 0.0], [0.5, 0.25]),
                      norm="linf", hints=[(0.5, 0.25, -0.5, 0.25)],
                      what="|Delta s2_ij| / (2 x 1/4), x_i x_j in [-1/2, 1/2], <xi> in "
                           "[0, 1/4]", **opts)
    return {"s1": s1, "s2 diagonal": diag, "s2 off-diagonal": off}


def _s1_sq(b, labels):
    a, bb, t = b[0], b[1], b[2]
    al, be = _alpha(labels[0]), _alpha(labels[1])
    return al ** 2 * a ** 2 + be ** 2 * bb ** 2 - 2 * al * be * a * bb * t


def l2_ratios(*, max_boxes: int = MAX_BOXES, tol: float = TOLERANCE,
              prec: int = PRECISION, claimed=(2.0, 0.5)) -> dict[str, SupBound]:
    """eqs. 57 and 59 (L2 / Frobenius): N sup ||Delta s|| over the claimed N Delta, for s1
    (claimed 2), s2 (claimed 1/2) and the joint vector (claimed hypot of both), by the
    Gram reduction of the module docstring. ``claimed``: (N Delta_s1, N Delta_s2) the
    ratios are taken against (the paper's 2 and 1/2 by default). Returns {part: SupBound}.
    """
    c1, c2 = iv.mpf(claimed[0]), iv.mpf(claimed[1])
    cj = iv.sqrt(c1 ** 2 + c2 ** 2)
    opts = {"max_boxes": max_boxes, "tol": tol, "prec": prec}
    pairs = ((0, 0), (0, 1), (1, 0), (1, 1))
    gram = Domain([0.0, 0.0, -1.0], [1.0, 1.0, 1.0], labels=pairs)
    s1 = maximise(lambda b, lab: nonneg_sqrt(_s1_sq(b, lab)) / c1, gram,
                  hints=[((1.0, 1.0, -1.0), (1, 1))],
                  what="||Delta s1||_2 / claimed over (||x||, ||x'||, cos angle)", **opts)
    s2 = maximise(lambda b: nonneg_sqrt(b[0] ** 2 + b[1] ** 2 - 2 * b[0] * b[1] * b[2]) / c2,
                  Domain([0.0, 0.0, 0.0], [0.25, 0.25, 1.0]),
                  hints=[(0.25, 0.25, 0.0)],
                  what="||Delta s2||_F / claimed over (<xi> ||x||^2, <xi'> ||x'||^2, "
                       "cos^2 angle)", **opts)

    def joint(b, lab):
        a, bb, t, xi, xj = b
        s2sq = xi ** 2 * a ** 4 + xj ** 2 * bb ** 4 - 2 * xi * xj * a ** 2 * bb ** 2 * t ** 2
        return nonneg_sqrt(_s1_sq(b, lab) + s2sq) / cj

    both = maximise(joint, Domain([0.0, 0.0, -1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.25, 0.25],
                                  labels=pairs),
                    hints=[((1.0, 1.0, -1.0, 0.25, 0.0), (1, 1))],
                    what="||(Delta s1, Delta s2)|| / claimed over (||x||, ||x'||, cos angle, "
                         "<xi>, <xi'>)", **opts)
    return {"s1": s1, "s2": s2, "joint": both}


def analytic_suprema(claimed=(2.0, 0.5)) -> dict[str, float]:
    """The exact suprema of the ratios (blr.py's docstring): s1 1/2, s2 sqrt(2)/4 / (1/2),
    joint sqrt(1 + 1/16) / hypot(2, 1/2); for the tests and the evidence."""
    c1, c2 = claimed
    return {"s1": 1.0 / c1, "s2": math.sqrt(2) / 4 / c2,
            "joint": math.sqrt(1 + 1 / 16) / math.hypot(c1, c2)}
