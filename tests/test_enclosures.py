"""Interval branch and bound (dpclaims.analysis.enclosures): the certified upper bound is
never below the true supremum and the lower bound never above it; failure modes are
reported (issue 38 item 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mpmath import iv

from dpclaims.analysis import enclosures as E


def test_product_on_the_square():
    r = E.sup_norm(lambda b: b[0] * b[1], E.Domain.box([-1, -1], [1, 1]), tol=1e-3)
    assert r.lower <= 1.0 <= r.upper <= 1.0 + 1e-3
    assert r.stopped == "tolerance" and r.boxes > 1


def test_sigmoid_weighted_features_on_the_ball():
    w = (1.5, -0.5)
    # ||sigmoid(w.x) x||_2 over ||x|| <= 1: increasing along w, so sigmoid(|w|) at w/|w|
    exact = 1 / (1 + math.exp(-math.hypot(*w)))

    def f(b):
        s = E.sigmoid(b[0] * w[0] + b[1] * w[1])
        return [s * b[0], s * b[1]]

    r = E.sup_norm(f, E.Domain.ball([0, 0], 1), tol=1e-2, max_boxes=5000)
    assert r.lower <= exact <= r.upper
    assert r.upper <= exact * 1.05


def _tanh_sum(rng, d, k=3):
    w = rng.normal(size=(k, d))
    b = rng.normal(size=k)
    a = rng.normal(size=k)

    def f_iv(box):
        return sum((float(a[j]) * E.tanh(sum((float(w[j, i]) * box[i] for i in range(d)),
                                             iv.mpf(0)) + float(b[j])) for j in range(k)),
                   iv.mpf(0))

    def f_np(x):
        return np.tanh(x @ w.T + b) @ a

    return f_iv, f_np


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
def test_random_smooth_contributions_bracket_a_dense_search(d):
    rng = np.random.default_rng(d)
    f_iv, f_np = _tanh_sum(rng, d)
    r = E.sup_norm(f_iv, E.Domain.box([-1] * d, [1] * d), norm="l1", tol=5e-2,
                   max_boxes=1500)
    x = rng.uniform(-1, 1, (20_000, d))
    x = np.concatenate([x, np.sign(x)])  # corners (a monotone sum peaks there)
    dense = float(np.max(np.abs(f_np(x))))
    assert r.upper >= dense  # never below a value attained at a real point
    assert r.lower <= r.upper


def test_known_bump_supremum():
    # 0.7 exp(-3 ||x - c||^2) peaks at c with exactly 0.7
    c = (0.25, -0.5, 0.125)

    def f(b):
        return 0.7 * E.exp(-3 * sum(((b[i] - c[i]) ** 2 for i in range(3)), iv.mpf(0)))

    r = E.sup_norm(f, E.Domain.box([-1] * 3, [1] * 3), tol=1e-3, hints=[c])
    assert r.lower == pytest.approx(0.7, abs=1e-15) and r.lower <= 0.7 <= r.upper


def test_replace_one_and_add_remove():
    dom = E.Domain.ball([0, 0], 1, labels=(0, 1))

    def f(b, y):
        return [(iv.mpf(y) - 0.5) * b[0], (iv.mpf(y) - 0.5) * b[1]]

    add = E.sensitivity(f, dom, relation="add-remove", tol=1e-2, max_boxes=3000)
    assert add.lower <= 0.5 <= add.upper
    rep = E.sensitivity(f, dom, relation="replace-one", target=1.2, max_boxes=3000,
                        hints=[((1.0, 0.0, -1.0, 0.0), (1, 1))])
    assert rep.lower == 1.0 and rep.upper >= 1.0 and rep.stopped == "below target"


def test_linf_range_is_exact_for_a_coordinate():
    r = E.sensitivity(lambda b: [b[0] / 2], E.Domain.box([-1], [1]), norm="linf")
    assert r.upper >= 1.0 >= r.lower


def test_cannot_enclose_numpy_code():
    with pytest.raises(E.EnclosureError, match="cannot enclose"):
        E.sup_norm(lambda b: np.tanh(b[0]), E.Domain.box([0], [1]))
    with pytest.raises(E.EnclosureError, match="cannot enclose"):
        E.sup_norm(lambda b: math.exp(b[0]), E.Domain.box([0], [1]))


def test_dimension_too_high():
    with pytest.raises(E.EnclosureError, match="dimension 7"):
        E.sup_norm(lambda b: b[0], E.Domain.box([0] * 7, [1] * 7))
    with pytest.raises(E.EnclosureError, match="replace-one"):
        E.sensitivity(lambda b: b[0], E.Domain.box([0] * 4, [1] * 4))


def test_unbounded_enclosure_is_reported():
    r = E.sup_norm(lambda b: 1 / b[0], E.Domain.box([-1], [1]), max_boxes=100)
    assert r.upper == math.inf and r.stopped == "unbounded enclosure" and r.notes


def test_identity_gap_true_and_false():
    pts = [0.1, -1.5, 2.0]
    good = E.identity_gap(lambda p: [E.tanh(iv.mpf(p))],
                          lambda p: [2 * E.sigmoid(2 * iv.mpf(p)) - 1], pts)
    assert good.lower == 0.0 and good.upper < 1e-30
    bad = E.identity_gap(lambda p: [E.tanh(iv.mpf(p))],
                         lambda p: [2 * E.sigmoid(iv.mpf(p)) - 1], pts)
    assert bad.lower > 0.01


def test_dual_gradient_of_softplus():
    val, grad = E.gradient(lambda z: E.softplus(z[0]) * z[1], [0.3, 2.0])
    sig = 1 / (1 + math.exp(-0.3))
    assert val.a <= math.log1p(math.exp(0.3)) * 2 <= val.b or abs(
        float(val.mid) - 2 * math.log1p(math.exp(0.3))) < 1e-14
    assert abs(float(grad[0].mid) - 2 * sig) < 1e-14
