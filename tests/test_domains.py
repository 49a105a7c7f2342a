"""Record domains (dpclaims.analysis.domains), the Product domain above all: records,
validation, the claims-file form, hypothesis strategies, the pair search's patterns, the
property test and `check-variant` on a mechanism over a product domain."""

from __future__ import annotations

import math
import pickle
import textwrap

import dp_accounting
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings

from dpclaims.analysis.domains import Ball, Box, FiniteSet, Product, check_domain
from dpclaims.audits import PrivacyClaim, Sensitivity
from dpclaims.audits.search import candidate_pairs
from dpclaims.claims import InputError
from dpclaims.claims.checks.variant import validated
from dpclaims.claims.claims_file import domain_from, load_claims_file
from dpclaims.cli import main
from dpclaims.property_tests.strategies import domain_records
from dpclaims.testing import VariantBudget, check_mechanism_sensitivity

XY = Product(Ball(1, shape=(3,)), Box(-1, 1))  # x in the unit ball of R^3, y in [-1, 1]


def weighted_sum(data):
    """sum_i y_i x_i for records [x_0, x_1, x_2, y]: replace-one L2 sensitivity exactly 2."""
    data = np.asarray(data, dtype=float)
    return (data[:, 3:] * data[:, :3]).sum(axis=0)


# --------------------------------------------------------------------------- the domain


def test_records_concatenate_the_factors_records():
    assert XY.shape == (4,) and XY.size == 4
    assert XY.contains([0.6, 0.0, 0.8, -1.0]) and XY.contains(np.zeros(4))
    assert not XY.contains([1.0, 1.0, 0.0, 0.0])      # x outside the ball
    assert not XY.contains([0.0, 0.0, 0.0, 1.5])      # y outside the box
    assert not XY.contains([0.0, 0.0, 0.0])           # wrong length
    assert not XY.contains([0.0, 0.0, 0.0, np.nan])
    assert not XY.contains("abcd")
    x, y = XY.split([0.6, 0.0, 0.8, -1.0])
    assert x.shape == (3,) and y.shape == () and float(y) == -1.0
    assert XY.join([x, y]).tolist() == [0.6, 0.0, 0.8, -1.0]
    assert XY.centre().tolist() == [0.0, 0.0, 0.0, 0.0]
    # a (2, 2) factor contributes 4 coordinates in C order, a scalar one 1
    p = Product(Box(0, 1, (2, 2)), FiniteSet((0, 5)))
    assert p.shape == (5,) and p.contains([0, 1, 1, 0, 5]) and not p.contains([0, 1, 1, 0, 4])
    assert p.split(np.arange(5) / 10)[0].tolist() == [[0.0, 0.1], [0.2, 0.3]]


def test_to_dict_equality_hash_repr_and_round_trip():
    d = XY.to_dict()
    assert d == {"kind": "product", "shape": [4], "factors": [
        {"kind": "ball", "radius": 1.0, "norm": "2", "shape": [3]},
        {"kind": "box", "low": -1.0, "high": 1.0, "shape": []}]}
    assert domain_from(d, "t") == XY
    same = Product(Ball(1.0, 2, 3), Box(-1.0, 1.0))
    assert same == XY and hash(same) == hash(XY) and len({XY, same}) == 1
    assert XY != Product(Ball(1, shape=(3,)), Box(-1, 2)) and XY != Ball(1, shape=(4,))
    assert pickle.loads(pickle.dumps(XY)) == XY
    assert repr(XY).startswith("Product(Ball(radius=1.0") and check_domain(XY) is XY
    # the factors' equality: vector boxes and finite sets compare by value
    assert Box(0, 1, (3,)) == Box(0.0, [1, 1, 1], 3) and hash(Box(0, 1, (3,))) == hash(
        Box(0.0, 1.0, (3,)))
    assert FiniteSet((0, 1)) == FiniteSet((0.0, 1.0)) and FiniteSet((0, 1)) != FiniteSet((1, 0))
    with pytest.raises(AttributeError, match="frozen"):
        XY.shape = (5,)


def test_a_nested_product_is_flattened():
    a, b, c = Box(0, 1), Ball(2, shape=2), FiniteSet((0, 1))
    assert Product(Product(a, b), c) == Product(a, Product(b, c)) == Product(a, b, c)
    assert Product(Product(a, b), c).factors == (a, b, c)


@pytest.mark.parametrize(("factors", "error", "message"), [
    ((), ValueError, r"at least one factor, got Product\(\)"),
    ((3.0,), TypeError, "product factor 0 must be a record domain .* got float: 3.0"),
    ((Box(0, 1), "box"), TypeError, "product factor 1 .* got str: 'box'"),
    (([Box(0, 1), Ball(1)],), TypeError, r"separate arguments, Product\(a, b\)"),
    ((FiniteSet(("a", "b")),), TypeError, "real-number records, got dtype <U1"),
])
def test_bad_factors_are_refused_naming_the_value(factors, error, message):
    with pytest.raises(error, match=message):
        Product(*factors)


def test_a_record_of_the_wrong_length_is_named():
    with pytest.raises(ValueError, match=r"flat vector of 4 numbers \(Ball \(3,\) then Box "
                                         r"\(\)\), got shape \(5,\): \[1, 2, 3, 4, 5\]"):
        XY.split([1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="part 1 .* needs 1 number"):
        XY.join([np.zeros(3), [1.0, 2.0]])
    assert "outside factor 1" in XY.misfit([0.0, 0.0, 0.0, 3.0])
    assert XY.misfit([0.0, 0.0, 0.0, 1.0]) is None
    with pytest.raises(ValueError, match="max_patterns"):
        Product(Box(0, 1), max_patterns=0)


# --------------------------------------------------------------------------- patterns


def test_replace_one_patterns_move_one_factor_or_all():
    pats = XY.patterns("replace-one")
    assert 0 < len(pats) <= XY.max_patterns
    for _, r0, r1 in pats:
        assert XY.contains(r0) and XY.contains(r1) and not np.array_equal(r0, r1)
    names = [n for n, _, _ in pats]
    assert names[0] == "factor 0 axis, factor 1 one above"
    # holding y at 1 while x crosses the sphere: the pair that moves y x by 2
    gap = max(np.linalg.norm(weighted_sum(r0[None]) - weighted_sum(r1[None])) for _, r0, r1 in pats)
    assert gap == pytest.approx(2.0)
    assert any("held at one above (end)" in n for n in names)


def test_add_remove_patterns_and_the_cap():
    pats = XY.patterns("add-remove")
    assert all(r0 is None and XY.contains(r1) for _, r0, r1 in pats)
    assert max(np.linalg.norm(weighted_sum(r1[None])) for _, _, r1 in pats) == pytest.approx(1.0)
    big = Product(Box(0, 1, 6), Box(0, 1, 6), Box(0, 1, 6), max_patterns=10)
    assert len(big.patterns("replace-one")) == 10 and len(big.patterns("add-remove")) == 10
    with pytest.raises(ValueError, match="relation"):
        XY.patterns("swap")


# --------------------------------------------------------------------------- strategies


@settings(max_examples=60, deadline=None, database=None)
@given(domain_records(Product(Ball(1, shape=(3,)), Box(-1, 1), FiniteSet((0, 2)))))
def test_drawn_records_lie_in_the_product(record):
    assert record.shape == (5,)
    assert Product(Ball(1, shape=(3,)), Box(-1, 1), FiniteSet((0, 2))).contains(record)


# --------------------------------------------------------------------------- mechanisms


class WeightedSum:
    """Gaussian mechanism on sum_i y_i x_i over XY, noise calibrated to ``calibrated``."""

    domain = XY
    query = staticmethod(weighted_sum)

    def __init__(self, calibrated):
        self.name = f"weighted-sum ({calibrated:g})"
        self.sensitivity = Sensitivity(calibrated, 2)
        self.claim = PrivacyClaim(2.0, 1e-5, "replace-one", dp_accounting.GaussianDpEvent(2.0))

    def release(self, data, rng, n):
        q = weighted_sum(data)
        return q + 2.0 * self.sensitivity.value * rng.standard_normal((n, q.size))


@pytest.mark.parametrize(("claimed", "verdict"), [(1.0, "refuted"), (2.0, "inconclusive")])
def test_property_test_finds_the_sensitivity_of_a_weighted_sum(claimed, verdict):
    out = check_mechanism_sensitivity(WeightedSum(claimed),
                                      budget=VariantBudget.for_tests(max_examples=150),
                                      seed=3)
    assert out.verdict == verdict, out.message
    if verdict == "refuted":
        assert out.result.max_ratio > 1.0


def test_the_pair_search_tries_the_extreme_pair():
    pairs = candidate_pairs(WeightedSum(2.0), seed=0, n_random=2)
    gaps = [np.linalg.norm(weighted_sum(p.d0) - weighted_sum(p.d1)) for p in pairs]
    assert max(gaps) == pytest.approx(2.0)
    assert any("held at" in p.description for p in pairs)


def test_data_outside_a_factor_is_bad_input_naming_it():
    m = WeightedSum(2.0)
    m.data = np.array([[0.0, 0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.5]])
    with pytest.raises(InputError, match=r"record 1 of `data` has coordinate 3 = 1.5 outside "
                                         "factor 1 {'kind': 'box'"):
        validated(m)
    m.data = np.zeros((2, 3))
    with pytest.raises(InputError, match=r"shape \(3,\), but the domain's records have shape "
                                         r"\(4,\)"):
        validated(m)


VARIANT = """
import dp_accounting
import numpy as np
from dpclaims.analysis.domains import Ball, Box, Product
from dpclaims.audits import PrivacyClaim, Sensitivity


def weighted_sum(data):
    data = np.asarray(data, dtype=float)
    return (data[:, 3:] * data[:, :3]).sum(axis=0)


class WeightedSum:
    domain = Product(Ball(1, shape=(3,)), Box(-1, 1))

    def __init__(self, calibrated):
        self.name = "weighted-sum"
        self.sensitivity = Sensitivity(calibrated, 2)
        self.claim = PrivacyClaim(2.0, 1e-5, "replace-one", dp_accounting.GaussianDpEvent(2.0))

    def query(self, data):
        return weighted_sum(data)

    def release(self, data, rng, n):
        q = weighted_sum(data)
        return q + 2.0 * self.sensitivity.value * rng.standard_normal((n, q.size))


correct = WeightedSum(2.0)
wrong = WeightedSum(1.0)
"""


@pytest.mark.parametrize(("obj", "code"), [("correct", 0), ("wrong", 1)])
def test_check_variant_over_a_product_domain(tmp_path, obj, code):
    f = tmp_path / "weighted.py"
    f.write_text(VARIANT)
    result = CliRunner().invoke(main, ["check-variant", f"{f}:{obj}", "--out",
                                       str(tmp_path / "out"), "--n-trials", "20000",
                                       "--max-examples", "100"])
    assert result.exit_code == code, result.output


# --------------------------------------------------------------------------- claims files


CLAIMS = """
[paper]
title = "A weighted sum"

[[sensitivity]]
id = "t/sens"
location = "Eq. 1"
statement = "sum_i y_i x_i has L2 sensitivity 2."
query = "{module}:weighted_sum"
value = 2.0
relation = "replace-one"
domain = {{kind = "product", factors = [
    {{kind = "ball", radius = 1.0, shape = [3]}},
    {{kind = "box", low = -1.0, high = 1.0}}]}}
"""


def test_the_toml_form_through_load_claims_file(tmp_path):
    f = tmp_path / "claims.toml"
    f.write_text(CLAIMS.format(module="numpy"))
    _, entry, _ = load_claims_file(f)["sensitivity"][0]
    assert entry["domain"] == XY and entry["domain"].shape == (4,)


@pytest.mark.parametrize(("domain", "message"), [
    ('{kind = "product", factors = []}', "needs factors = \\[table, ...\\] .* got an array \\[\\]"),
    ('{kind = "product"}', "a product domain needs 'factors'"),
    ('{kind = "product", factors = [3]}', "product factor 0: domain must be a table .* 3"),
    ('{kind = "product", factors = [{kind = "ball", radius = 1.0, shap = [3]}]}',
     "product factor 0: unknown key\\(s\\) \\['shap'\\] in a ball domain"),
    ('{kind = "product", factors = [{kind = "box", low = 1.0, high = 0.0}]}',
     "product factor 0: domain: box needs low < high"),
    ('{kind = "product", factors = [{kind = "box", low = 0, high = 1}], shape = [2]}',
     "shape is \\[1\\]"),
    ('{kind = "box", low = 0, high = 1, shape = "x"}', "shape must be an int or a tuple"),
])
def test_bad_product_tables_are_input_errors(tmp_path, domain, message):
    text = CLAIMS.format(module="numpy")
    text = text[:text.index("domain = ")] + f"domain = {domain}\n"
    f = tmp_path / "claims.toml"
    f.write_text(text)
    with pytest.raises(InputError, match=message):
        load_claims_file(f)


def test_ball_norms_read_back_as_in_reports():
    assert domain_from({"kind": "ball", "radius": 1, "norm": "inf"}, "t").norm == math.inf
    assert domain_from(Ball(1, 1, 2).to_dict(), "t") == Ball(1, 1, 2)


def test_check_over_a_product_domain_refutes_an_understated_sensitivity(tmp_path):
    (tmp_path / "wsum.py").write_text(textwrap.dedent(VARIANT))
    f = tmp_path / "claims.toml"
    f.write_text(CLAIMS.format(module=str(tmp_path / "wsum.py")).replace("value = 2.0",
                                                                        "value = 1.0"))
    result = CliRunner().invoke(main, ["check", str(f), "--out", str(tmp_path / "out"),
                                       "--max-examples", "100"])
    assert result.exit_code == 1, result.output
