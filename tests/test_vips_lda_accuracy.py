"""Tests of the VIPS LDA accuracy checks (dpclaims.papers.vips.checks_lda)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from dpclaims.analysis.accounting import Sampling, account, calibrate_noise_multiplier
from dpclaims.analysis.paired_tests import min_pairs, paired_comparison
from dpclaims.claims import InputError
from dpclaims.papers.vips.catalogue import BUDGETS as VIPS_BUDGETS
from dpclaims.papers.vips.checks_lda import (
    BUDGETS,
    CLAIMS,
    check_lda_accuracy,
    lda_verdict,
)
from dpclaims.papers.vips.experiment_lda import (
    classic_gaussian_multiplier,
    strong_composition_step,
    strong_composition_total,
)

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "vips.txt"


# --------------------------------------------------------------------------- strong composition


@pytest.mark.parametrize("total_eps", [0.5, 1.904, 2.38, 8.0])
@pytest.mark.parametrize("steps", [1, 20, 400])
@pytest.mark.parametrize("q", [None, 0.05])
def test_strong_composition_reproduces_total(total_eps, steps, q):
    sc = strong_composition_step(total_eps, 1e-4, steps, sampling_rate=q)
    eps, delta = strong_composition_total(sc.eps_step, sc.delta_step, steps, sc.delta_slack)
    assert abs(eps - total_eps) < 1e-6
    assert abs(sc.reproduced_total_epsilon - total_eps) < 1e-6
    assert delta == pytest.approx(1e-4, rel=1e-12)
    assert sc.delta_slack == pytest.approx(5e-5) and sc.delta_step * steps == pytest.approx(5e-5)
    if q is None:
        assert sc.eps_base == sc.eps_step and sc.delta_base == sc.delta_step
    else:  # amplification inverted: log(1 + q (e^eps_base - 1)) = eps'
        assert math.log1p(q * math.expm1(sc.eps_base)) == pytest.approx(sc.eps_step, rel=1e-12)
        assert sc.delta_base * q == pytest.approx(sc.delta_step)
    assert sc.noise_multiplier == pytest.approx(classic_gaussian_multiplier(sc.eps_base,
                                                                            sc.delta_base))


def test_strong_composition_formula_known_value():
    # J = 1: eps'(e^eps' - 1) + sqrt(2 log(1/delta'')) eps'
    eps, delta = strong_composition_total(0.1, 1e-6, 1, 1e-5)
    assert eps == pytest.approx(0.1 * math.expm1(0.1) + math.sqrt(2 * math.log(1e5)) * 0.1)
    assert delta == pytest.approx(1e-5 + 1e-6)


@pytest.mark.parametrize("d, s, steps", [(240, 12, 20), (240, 12, 40), (95, 5, 19)])
def test_strong_composition_needs_more_noise_than_ma(d, s, steps):
    sampling = Sampling("without-replacement", d, s, steps=steps)
    eps = account(1.24, sampling, 1e-4, "replace-one",
                  accountants=("dp_accounting-rdp",)).row("dp_accounting-rdp").epsilon
    ma_sigma = calibrate_noise_multiplier(eps, 1e-4, sampling, accountant="dp_accounting-rdp")
    assert ma_sigma == pytest.approx(1.24, rel=2e-3)
    for q in (None, s / d):
        sc = strong_composition_step(eps, 1e-4, steps, sampling_rate=q)
        assert sc.noise_multiplier > 2 * ma_sigma


def test_strong_composition_rejects_bad_input():
    for args in ((0.0, 1e-4, 5), (1.0, 0.0, 5), (1.0, 1e-4, 0)):
        with pytest.raises(ValueError):
            strong_composition_step(*args)
    with pytest.raises(ValueError):
        strong_composition_step(1.0, 1e-4, 5, sampling_rate=1.5)


# --------------------------------------------------------------------------- verdict logic


def test_min_pairs():
    assert min_pairs(0.05) == 5 and min_pairs(0.01) == 7


def test_paired_comparison_p_values():
    rng = np.random.default_rng(0)
    worse = 30 + rng.normal(size=6)
    better = worse - 2.0
    st = paired_comparison(better, worse)
    assert st["n_in_stated_direction"] == 6
    assert st["p_stated_direction"] == pytest.approx(0.5 ** 6)
    st = paired_comparison(worse, better)
    assert st["p_opposite_direction"] == pytest.approx(0.5 ** 6)
    # all three seeds in the stated direction, but three cannot reach 0.05
    st = paired_comparison(better[:3], worse[:3])
    assert st["p_stated_direction"] == pytest.approx(0.125)
    # mixed directions: neither p-value reaches 0.05
    mixed = worse + np.array([1, -1, 1, -1, 1, -1])
    st = paired_comparison(mixed, worse)
    assert min(st["p_stated_direction"], st["p_opposite_direction"]) > 0.05
    # ties are dropped; a constant baseline broadcasts
    st = paired_comparison(np.array([1.0, 1.0, 2.0]), 2.0)
    assert st["n_ties"] == 1 and st["p_stated_direction"] == pytest.approx(0.25)
    with pytest.raises(ValueError):
        paired_comparison([np.nan], [1.0])


def test_lda_verdict_sentences_and_guard():
    claim = CLAIMS["word-frequency"]
    better, worse = np.full(5, 10.0), np.full(5, 20.0)
    v = lda_verdict(claim, "r", "MA", "wf", better, worse, seed=3, budget="b")
    assert v.verdict == "holds" and v.certificate and "5 of 5" in v.sentence
    assert v.sentence.startswith("Holds at level 0.05: the exact one-sided sign test")
    assert v.evidence["basis"]["p_holds"] == pytest.approx(0.5 ** 5)
    v = lda_verdict(claim, "r", "MA", "wf", worse, better)
    assert v.verdict == "refuted" and v.certificate and "reduced size" in v.sentence
    assert v.evidence["basis"]["p_refutes"] == pytest.approx(0.5 ** 5)
    guard = paired_comparison(worse, better)  # non-private also loses: outside the regime
    v = lda_verdict(claim, "r", "MA", "wf", worse, better, guard=guard)
    assert v.verdict == "inconclusive" and "regime" in v.sentence and not v.certificate
    assert "regime_guard" in v.evidence and v.evidence["basis"]["rule"] == "undecided"
    # a guard that holds leaves the refutation
    v = lda_verdict(claim, "r", "MA", "wf", worse, better, guard=paired_comparison(better, worse))
    assert v.verdict == "refuted"
    v = lda_verdict(claim, "r", "MA", "wf", better[:2], worse[:2])
    assert v.verdict == "inconclusive" and "needs at least 5" in v.sentence
    assert "rejects neither direction" in v.sentence
    json.dumps(v.to_dict())


def test_statements_are_quoted_exactly():
    if not PAPER.is_file():
        pytest.skip(f"paper text not found at {PAPER}")
    text = PAPER.read_text(encoding="utf-8")
    for claim in CLAIMS.values():
        assert claim.statement in text, claim.id


# The smoke-size LDA run is read from the all-papers smoke audit (tests/test_cli.py:
# test_vips_lda_accuracy_records).


def test_bad_budget_and_data_dir():
    smoke = VIPS_BUDGETS["smoke"]
    with pytest.raises(InputError, match="lda_seeds"):
        check_lda_accuracy(dataclasses.replace(smoke, lda_seeds=0), 0)
    with pytest.raises(InputError, match="lda_epochs"):
        check_lda_accuracy(dataclasses.replace(smoke, lda_epochs=1.5), 0)
    with pytest.raises(InputError, match="VipsBudget"):
        check_lda_accuracy([2, 1], 0)
    # the former argument, a dict, is still accepted and validated
    with pytest.raises(InputError):
        check_lda_accuracy({"lda_seeds": 0, "lda_epochs": 1}, 0)
    with pytest.raises(InputError):
        check_lda_accuracy({"lda_seeds": 2}, 0)
    with pytest.raises(InputError):
        check_lda_accuracy(smoke, 0, data_dir="/nonexistent/dpclaims-data")


def test_a_dict_budget_is_converted_to_the_typed_one():
    from dpclaims.papers.vips.catalogue import as_vips_budget

    keys = ("lda_seeds", "lda_epochs")
    b = as_vips_budget(BUDGETS["smoke"], keys)
    assert b.name == "lda_seeds=2, lda_epochs=1"
    assert (b.lda_seeds, b.lda_epochs) == (2, 1) and b.examples is None
    assert as_vips_budget({**BUDGETS["smoke"], "name": "smoke"}, keys).name == "smoke"
    assert as_vips_budget(VIPS_BUDGETS["smoke"], keys) == VIPS_BUDGETS["smoke"]
