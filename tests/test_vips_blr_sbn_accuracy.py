"""Tests of the VIPS BLR and SBN accuracy checks (dpclaims.papers.vips.checks_blr_sbn)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import dp_accounting
import numpy as np
import pytest

from dpclaims.claims import InputError
from dpclaims.papers.vips import checks_blr_sbn as mod
from dpclaims.papers.vips.catalogue import BUDGETS as VIPS_BUDGETS
from dpclaims.papers.vips.checks_blr_sbn import (
    CLAIMS,
    SBN_DELTA,
    SBN_SIGMA,
    blr_data,
    check_blr_accuracy,
    check_sbn_accuracy,
    min_pairs,
    paired_sizes_tests,
    sbn_setting,
    trend_test,
)

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "vips.txt"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


# The smoke-size BLR and SBN runs are read from the all-papers smoke audit
# (tests/test_cli.py: test_vips_blr_accuracy_record, test_vips_sbn_accuracy_records).


# --------------------------------------------------------------------------- calibration


@pytest.mark.parametrize("sizes, iterations", [((100, 200), 15), ((50,), 40)])
def test_strong_composition_hits_target_epsilon(sizes, iterations):
    setting = sbn_setting(1438, sizes, iterations)
    for s in sizes:
        st = setting[str(s)]
        assert st["J"] == max(1, round(iterations * min(sizes) / s))
        ma = dp_accounting.rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
        ma.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.SampledWithoutReplacementDpEvent(
                1438, s, dp_accounting.GaussianDpEvent(SBN_SIGMA)), st["J"]))
        assert st["epsilon_MA"] == pytest.approx(ma.get_epsilon(SBN_DELTA), rel=1e-9)
        for key, q in (("strong_composition", None),
                       ("strong_composition_amplified", s / 1438)):
            sc = st[key]
            assert sc["delta_slack"] == pytest.approx(SBN_DELTA / 2)
            assert sc["delta_step"] * st["J"] == pytest.approx(SBN_DELTA / 2)
            assert sc["reproduced_total_epsilon"] == pytest.approx(st["epsilon_MA"], rel=1e-9)
            if q is not None:
                assert math.log1p(q * math.expm1(sc["eps_base"])) == pytest.approx(
                    sc["eps_step"], rel=1e-10)
            # the classic multiplier, and the exact one reported beside it
            assert sc["noise_multiplier"] == pytest.approx(
                math.sqrt(2 * math.log(1.25 / sc["delta_base"])) / sc["eps_base"])
            name = "SC" if q is None else "SC-amplified"
            exact = st["analytic_gaussian_multiplier"][name]
            assert dp_accounting.get_epsilon_gaussian(exact, sc["delta_base"]) == \
                pytest.approx(sc["eps_base"], rel=1e-6)
        # SC needs more noise per step than MA at the same total epsilon
        assert st["noise_multiplier"]["SC"] > st["noise_multiplier"]["SC-amplified"] > SBN_SIGMA


# --------------------------------------------------------------------------- verdict logic


def test_trend_test_p_values():
    rng = np.random.default_rng(0)
    base = np.array([0.74, 0.70, 0.60, 0.55])
    falling = base + 0.005 * rng.standard_normal((6, 4))
    st = trend_test(falling)
    assert st["method"] == "exact"
    assert st["p_stated_direction"] <= 0.05 < st["p_opposite_direction"]
    st = trend_test(falling[:, ::-1])
    assert st["p_opposite_direction"] <= 0.05 < st["p_stated_direction"]
    # every block ranks the sigmas differently, no order: L at its null mean
    flat = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [2, 4, 1, 3], [3, 1, 4, 2]], float)
    st = trend_test(flat)
    assert st["p_stated_direction"] > 0.3 and st["p_opposite_direction"] > 0.3
    assert st["level"] == 0.05 and st["n_blocks"] == 4
    with pytest.raises(ValueError):
        trend_test(falling[:1])
    with pytest.raises(ValueError):
        trend_test(falling[:, :2])
    # 20 seeds (the standard budget): still the exact null distribution
    assert trend_test(base + 0.05 * rng.standard_normal((20, 4)))["method"] == "exact"


def test_trend_test_false_alarm_rate_under_null():
    rng = np.random.default_rng(1)
    tests = [trend_test(rng.standard_normal((5, 4))) for _ in range(400)]
    wrong = np.mean([min(t["p_stated_direction"], t["p_opposite_direction"]) <= 0.05
                     for t in tests])
    assert wrong < 0.1 + 3 * math.sqrt(0.1 * 0.9 / 400)   # each direction <= 0.05


def test_paired_sizes_tests():
    ma = {"100": np.full(8, 0.78) + 0.001 * np.arange(8), "200": np.full(8, 0.79)}
    sc = {"100": np.full(8, 0.45), "200": np.full(8, 0.55)}
    st = paired_sizes_tests(ma, sc)
    # MA better at every size: the largest per-size p-value is 2^-8
    assert st["p_holds"] == pytest.approx(2**-8) and st["p_refutes"] == 1.0
    assert st["per_size"]["100"]["p_stated_direction"] == pytest.approx(2**-8)
    # SC better at one size: Bonferroni over 2 sizes, 2 x 2^-8 <= 0.05
    st = paired_sizes_tests(ma, {"100": sc["100"], "200": np.full(8, 0.9)})
    assert st["p_refutes"] == pytest.approx(2 * 2**-8) and st["p_holds"] == 1.0
    # MA better at one size only, the other all ties: neither reaches 0.05
    st = paired_sizes_tests(ma, {"100": sc["100"], "200": ma["200"]})
    assert st["p_holds"] == 1.0 and st["p_refutes"] == 1.0
    # too few seeds to reach the level, even when all agree
    st = paired_sizes_tests({"100": ma["100"][:4]}, {"100": sc["100"][:4]})
    assert st["p_holds"] == pytest.approx(2**-4) and st["p_holds"] > 0.05
    assert st["min_pairs_for_level"] == min_pairs() == 5
    with pytest.raises(ValueError):
        paired_sizes_tests(ma, {"100": sc["100"]})


# --------------------------------------------------------------------------- inputs, extras


def test_bad_budgets():
    smoke = VIPS_BUDGETS["smoke"]
    with pytest.raises(InputError, match="trend test"):
        check_blr_accuracy(dataclasses.replace(smoke, blr_seeds=1), 0)
    with pytest.raises(InputError, match="sbn_iterations"):
        check_sbn_accuracy(dataclasses.replace(smoke, sbn_iterations=0), 0)
    # the former argument, a dict, is still accepted and validated
    with pytest.raises(InputError):
        check_blr_accuracy({"blr_seeds": 1, "blr_iterations": 5}, 0)
    with pytest.raises(InputError):
        check_blr_accuracy({"blr_seeds": 3}, 0)
    with pytest.raises(InputError):
        check_sbn_accuracy({"sbn_seeds": 3, "sbn_iterations": 0}, 0)
    with pytest.raises(InputError):
        check_blr_accuracy(smoke, 0, data_dir="/nonexistent/folder")


def test_sbn_without_sklearn_is_not_checkable(monkeypatch):
    def missing(*args, **kwargs):
        raise ImportError("load_digits_binary needs scikit-learn: install the `vips` extra")

    monkeypatch.setattr(mod, "load_digits_binary", missing)
    verdicts, figures = check_sbn_accuracy(VIPS_BUDGETS["smoke"], 0, out_dir=None)
    assert figures == [] and len(verdicts) == 1
    v = verdicts[0]
    assert v.verdict == "not-checkable" and "vips" in v.sentence
    assert v.sentence.startswith("Not checkable: missing the SBN data")
    assert v.evidence["missing_extra"] == "vips" and not v.certificate


@pytest.mark.skipif(not PAPER.is_file(), reason="paper text not available")
def test_statements_are_quoted_from_the_paper():
    text = PAPER.read_text()
    assert CLAIMS["sbn"].statement in text
    assert CLAIMS["blr"].statement in text  # the sentence the derived claim starts from


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="shared Adult data not available")
def test_adult_data_for_blr():
    d = blr_data(DATA, seed=0)
    assert d["x_train"].shape == (39074, 106)
    assert set(np.unique(d["y_train"])) == {0.0, 1.0}
    assert np.linalg.norm(d["x_train"], axis=1).max() <= 1 + 1e-12
    assert "Adult" in d["which"]
