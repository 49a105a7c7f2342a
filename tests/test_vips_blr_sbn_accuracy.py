"""Tests of the VIPS BLR and SBN accuracy checks (dpclaims.papers.vips.checks_blr_sbn)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import dp_accounting
import numpy as np
import pytest

from dpclaims.claims import VERDICTS, InputError
from dpclaims.papers.vips import checks_blr_sbn as mod
from dpclaims.papers.vips.catalogue import BUDGETS as VIPS_BUDGETS
from dpclaims.papers.vips.checks_blr_sbn import (
    BLR_FIGURE,
    BUDGETS,
    CLAIMS,
    SBN_DELTA,
    SBN_FIGURE,
    SBN_SIGMA,
    blr_data,
    check_blr_accuracy,
    check_sbn_accuracy,
    min_pairs,
    paired_sizes_tests,
    sbn_setting,
    trend_test,
)
from dpclaims.papers.vips.experiment_lda import strong_composition_total

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "vips.txt"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("figs")
    budget = VIPS_BUDGETS["smoke"]
    blr = check_blr_accuracy(budget, seed=0, out_dir=out)
    sbn = check_sbn_accuracy(budget, seed=0, out_dir=out)
    return out, blr, sbn


# --------------------------------------------------------------------------- smoke runs


def _valid(v, claim_id):
    assert v.claim.id == claim_id
    assert v.verdict in VERDICTS
    # exact tests: a certificate exactly when they decide
    assert v.certificate == (v.verdict in ("holds", "refuted"))
    assert v.seed == 0 and v.budget == "smoke"
    assert v.evidence and v.sentence
    json.dumps(v.to_dict(), allow_nan=False)


def test_smoke_blr(smoke):
    out, (verdicts, figures), _ = smoke
    assert figures == [BLR_FIGURE] and (out / BLR_FIGURE).stat().st_size > 0
    assert len(verdicts) == 1
    v = verdicts[0]
    _valid(v, "vips/blr-approaches-nonprivate")
    assert v.figures == [BLR_FIGURE]
    ev = v.evidence
    assert "embedded default" in ev["dataset"] and "embedded default" in v.sentence
    sz = ev["sizes"]
    assert (sz["N_train"], sz["d"], sz["S"], sz["iterations"], sz["seeds"]) == (
        5729, 9, 23, BUDGETS["smoke"]["blr_iterations"], BUDGETS["smoke"]["blr_seeds"])
    assert set(ev["test_auc"]) == {"0", "1", "6", "12"}
    assert all(len(s["per_seed"]) == sz["seeds"] for s in ev["test_auc"].values())
    # epsilon decreases in sigma, and the two-releases reading is always the larger one
    e = ev["epsilon"]
    assert e["1"]["paper"] > e["6"]["paper"] > e["12"]["paper"] > 0
    for k in ("1", "6", "12"):
        assert e[k]["two-releases"] > e[k]["paper"]
    assert e["0"]["paper"] == "inf"
    # the verdict is the kernel's, from the exact trend test's p-values
    st = trend_test(np.array([ev["test_auc"][k]["per_seed"] for k in ("0", "1", "6", "12")]).T)
    assert st["method"] == "exact"
    basis = ev["basis"]
    assert (basis["rule"], basis["level"]) == ("tests", 0.05)
    assert basis["p_holds"] == st["p_stated_direction"]
    assert basis["p_refutes"] == st["p_opposite_direction"]
    assert v.verdict == ("holds" if st["p_stated_direction"] <= 0.05 else "refuted"
                         if st["p_opposite_direction"] <= 0.05 else "inconclusive")


def test_smoke_sbn(smoke):
    out, _, (verdicts, figures) = smoke
    assert figures == [SBN_FIGURE] and (out / SBN_FIGURE).stat().st_size > 0
    assert [v.reading for v in verdicts] == ["no-amplification (verdict of record)",
                                             "amplified"]
    for v in verdicts:
        _valid(v, "vips/sbn-ma-beats-strong-composition")
        assert v.figures == [SBN_FIGURE]
        acc = v.evidence["accuracy"]
        assert set(acc) == {"100", "200"}
        for per in acc.values():
            for m in ("NP", "MA", "SC", "SC-amplified"):
                assert len(per[m]["per_seed"]) == BUDGETS["smoke"]["sbn_seeds"]
                assert 0 <= per[m]["mean"] <= 1
        assert v.evidence["sizes"]["N_train"] == 1438


def test_smoke_sbn_calibration_in_evidence(smoke):
    _, _, (verdicts, _) = smoke
    for s, st in verdicts[0].evidence["per_size"].items():
        assert st["S"] == int(s)
        for key in ("strong_composition", "strong_composition_amplified"):
            sc = st[key]
            eps, delta = strong_composition_total(sc["eps_step"], sc["delta_step"], st["J"],
                                                  sc["delta_slack"])
            assert eps == pytest.approx(st["epsilon_MA"], rel=1e-9)
            assert delta == pytest.approx(SBN_DELTA, rel=1e-12)


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


def test_smoke_sbn_verdict_is_the_kernels(smoke):
    _, _, (verdicts, _) = smoke
    for v in verdicts:
        st, basis = v.evidence["test"], v.evidence["basis"]
        assert (basis["p_holds"], basis["p_refutes"]) == (st["p_holds"], st["p_refutes"])
        assert v.verdict == ("holds" if st["p_holds"] <= 0.05 else "refuted"
                             if st["p_refutes"] <= 0.05 else "inconclusive")


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
