"""Tests of the attack scores (dpclaims.audits.scores) and their use by audit():
the automatic choice, the counted likelihood ratio, randomised thresholds whose
counts stay exact binomials, pure-DP claims, and bad input."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.stats import binom

from dpclaims.audits import (
    ClassifierScore,
    FisherScore,
    InvalidMechanismError,
    LikelihoodRatioScore,
    PrivacyClaim,
    ScoreError,
    add_one,
    audit,
    choose_score,
    replace_one,
)
from dpclaims.audits.core import discrete_threshold_grid
from dpclaims.audits.scores import (
    as_score,
    randomise_ties,
    score_levels,
    threshold_in_score_units,
)

# False-alarm rate of each repeated-audit soundness test: P(Binomial(runs, alpha) > k) <= FA.
FALSE_ALARM = 1e-3


@dataclass(frozen=True)
class RandomisedResponse:
    """Binary randomised response on record 0: exactly eps-DP (delta = 0), replace-one."""

    eps: float
    claimed: float | None = None
    name: str = "randomised-response"

    @property
    def claim(self):
        return PrivacyClaim(self.claimed or self.eps, 0.0)

    def release(self, data, rng, n):
        keep = rng.random((n, 1)) < math.exp(self.eps) / (1 + math.exp(self.eps))
        return np.where(keep, data[0], 1 - data[0]).astype(float)


@dataclass(frozen=True)
class LaplaceSum:
    """Sum of records in [0, 1] plus Laplace(scale): (1 / scale)-DP under add-remove."""

    scale: float
    claimed: float = 1.0
    name: str = "laplace-sum"

    @property
    def claim(self):
        return PrivacyClaim(self.claimed, 0.0, "add-remove")

    def release(self, data, rng, n):
        return np.sum(data) + rng.laplace(0.0, self.scale, (n, 1))


RR_PAIR = replace_one(np.array([0.0, 0.0]), 0, 1.0)
LAP_PAIR = add_one(np.zeros(1), 1.0)


def test_auto_choice_follows_the_stated_rule():
    rng = np.random.default_rng(0)
    discrete = rng.integers(0, 5, (1000, 2)).astype(float)
    score, why = choose_score(discrete[:500], discrete[500:])
    assert isinstance(score, LikelihoodRatioScore) and "25 distinct" in why
    continuous = rng.standard_normal((1000, 3))
    score, why = choose_score(continuous[:500], continuous[500:])
    assert isinstance(score, FisherScore) and "continuous" in why
    mixed = np.hstack([rng.integers(0, 2, (1000, 1)), rng.standard_normal((1000, 1))])
    score, why = choose_score(mixed[:500], mixed[500:])
    assert isinstance(score, ClassifierScore) and score.model == "gradient-boosting"
    assert "1 of 2 coordinates discrete" in why


def _rule_by_counting_rows(x):
    """choose_score's rule (its docstring) computed naively: (score type, distinct rows)."""
    from dpclaims.audits.scores import (
        CONTINUOUS_MIN_DISTINCT_FRACTION,
        DISCRETE_MAX_LEVELS,
        DISCRETE_MIN_MEAN_COUNT,
    )

    n = len(x)
    x = x + 0.0  # -0.0 and 0.0 are one value
    rows = len({tuple(r) for r in x.tolist()})
    if rows <= DISCRETE_MAX_LEVELS and n / rows >= DISCRETE_MIN_MEAN_COUNT:
        return LikelihoodRatioScore, rows
    per = [len(set(c)) for c in x.T.tolist()]
    if min(per) >= CONTINUOUS_MIN_DISTINCT_FRACTION * n:
        return FisherScore, rows
    return ClassifierScore, rows


@pytest.mark.parametrize("case", ["few-levels", "many-row-combinations", "signed-zeros",
                                  "one-coordinate", "continuous", "mixed"])
def test_auto_choice_equals_the_rule_counted_row_by_row(case):
    """The shortcut (distinct rows bounded below by a coordinate's distinct values, rows
    hashed only when their count matters) decides as counting every row would."""
    rng = np.random.default_rng(5)
    n = 300_000 if case == "many-row-combinations" else 4_000
    x = {
        "few-levels": lambda: rng.integers(0, 7, (n, 3)).astype(float),
        # 150 x 150 levels: 22,500 distinct rows (> 10,000), each seen about 13 times
        "many-row-combinations": lambda: rng.integers(0, 150, (n, 2)).astype(float),
        "signed-zeros": lambda: rng.choice([-0.0, 0.0, 1.0], (n, 2)),
        "one-coordinate": lambda: rng.integers(0, 40, (n, 1)).astype(float),
        "continuous": lambda: rng.standard_normal((n, 4)),
        "mixed": lambda: np.hstack([rng.integers(0, 3, (n, 1)), rng.standard_normal((n, 2))]),
    }[case]()
    expected, rows = _rule_by_counting_rows(x)
    score, why = choose_score(x[: n // 2], x[n // 2:])
    assert isinstance(score, expected), (case, why)
    # the columns sorted in two threads (an audit given two or more workers): the same
    assert choose_score(x[: n // 2], x[n // 2:], threads=True) == (score, why)
    if expected is not FisherScore:
        assert f"{rows} distinct" in why
    if case == "signed-zeros":
        assert rows == 4 and "4 distinct outputs" in why  # {-0.0, 0.0, 1.0}: two values each

def test_pilot_scores_never_fit_a_classifier():
    from dpclaims.audits.scores import AutoScore, UserScore, pilot_score

    for named in (None, "auto", "gradient-boosting", "logistic", ClassifierScore("logistic")):
        assert pilot_score(named) == AutoScore(classifiers=False)
    assert isinstance(pilot_score("fisher"), FisherScore)
    assert isinstance(pilot_score("likelihood-ratio"), LikelihoodRatioScore)
    assert isinstance(pilot_score(np.sum), UserScore)
    rng = np.random.default_rng(0)
    mixed = np.hstack([rng.integers(0, 2, (1000, 1)), rng.standard_normal((1000, 1))])
    score, why = choose_score(mixed[:500], mixed[500:], classifiers=False)
    assert isinstance(score, FisherScore) and "without classifiers" in why
    with pytest.raises(ScoreError, match="unknown score"):
        pilot_score("svm")


def test_one_table_names_the_scores_and_the_strategies():
    """Issue 39: dpclaims.audits.registry is the only list of the names; the CLI's --score
    help, the budgets' check, the audit's resolvers and the API reference read it."""
    from click.testing import CliRunner

    from dpclaims.audits.registry import SCORES, THRESHOLDS
    from dpclaims.audits.scores import SCORE_NAMES, AttackScore
    from dpclaims.audits.thresholds import ThresholdStrategy, as_threshold_strategy
    from dpclaims.claims.budgets import VariantBudget
    from dpclaims.cli import main

    assert SCORE_NAMES == tuple(SCORES) and list(SCORES)[0] == "auto"
    for name in SCORES:
        assert isinstance(as_score(name), AttackScore) and as_score(name).name == name
        VariantBudget(score=name)
    for name in THRESHOLDS:
        assert isinstance(as_threshold_strategy(name), ThresholdStrategy)
    help_text = " ".join(CliRunner().invoke(main, ["check-variant", "--help"]).output.split())
    for name, entry in SCORES.items():
        assert f"{name}{' (default)' if name == 'auto' else ''}: {entry.description}" \
            in help_text
    import dpclaims.audits.registry as registry
    assert all(f"``{name}``" in registry.__doc__ for name in (*SCORES, *THRESHOLDS))
    with pytest.raises(ValueError, match="threshold must be 'auto', 'split', 'bonferroni', 'rank'"):
        as_threshold_strategy("median")


def test_a_classifier_is_fitted_on_at_most_max_train_outputs_per_dataset():
    rng = np.random.default_rng(1)
    t0, t1 = rng.standard_normal((300, 2)), rng.standard_normal((300, 2)) + 0.5
    capped = ClassifierScore("logistic", max_train=100)
    assert "at most 100 outputs per dataset" in capped.describe()
    x = rng.standard_normal((50, 2))
    np.testing.assert_array_equal(capped.fit(t0, t1, 0)(x),
                                  ClassifierScore("logistic").fit(t0[:100], t1[:100], 0)(x))
    assert not np.array_equal(capped.fit(t0, t1, 0)(x),
                              ClassifierScore("logistic").fit(t0, t1, 0)(x))
    for bad in (1, 2.5, True):
        with pytest.raises(ScoreError, match="max_train"):
            ClassifierScore(max_train=bad)


def test_likelihood_ratio_counts_rows_with_the_stated_prior():
    t0 = np.array([[0.0, 1.0]] * 3 + [[1.0, 1.0]] * 1)
    t1 = np.array([[0.0, 1.0]] * 1 + [[1.0, 1.0]] * 3)
    fitted = LikelihoodRatioScore(prior=0.5).fit(t0, t1, 0)
    # K = 2 distinct rows + 1 unseen bucket; n0 = n1 = 4: the normalisers cancel
    s = fitted(np.array([[0.0, 1.0], [1.0, 1.0], [7.0, 7.0], [-0.0, 1.0]]))
    np.testing.assert_allclose(s, [math.log(1.5 / 3.5), math.log(3.5 / 1.5), 0.0,
                                   math.log(1.5 / 3.5)])
    assert np.all(np.diff(fitted.levels) > 0) and 0.0 in fitted.levels
    with pytest.raises(ScoreError, match="coordinates"):
        fitted(np.zeros((2, 3)))


def test_randomised_threshold_map_is_monotone_and_reads_back():
    levels = np.array([-1.0, 0.0, 2.0])
    s = np.array([-1.0, 0.0, 2.0, 0.5, -5.0, 9.0])
    v = randomise_ties(s, levels, np.full(6, 0.5))
    np.testing.assert_allclose(v, [0.5, 2.5, 4.5, 3.5, -0.5, 5.5])
    assert threshold_in_score_units(2.25, levels) == (0.0, 0.75)
    assert threshold_in_score_units(3.0, levels) == (0.0, 0.0)
    assert threshold_in_score_units(-0.5, levels) == (-1.0, 1.0)
    np.testing.assert_allclose(discrete_threshold_grid(2), [0, 0.25, 0.5, 0.75, 2, 2.25,
                                                            2.5, 2.75])
    assert score_levels(FisherScore().fit(np.zeros((3, 1)), np.ones((3, 1)), 0),
                        np.arange(100.0)) is None
    np.testing.assert_array_equal(score_levels(lambda x: x, np.repeat([1.0, 2.0], 50)),
                                  [1.0, 2.0])


def test_randomised_threshold_counts_are_exact_binomials():
    """The held-out decisions at a randomised threshold are i.i.d. Bernoulli: over many
    seeds, the false-positive count at a fixed (level, p) follows Binomial(n, FPR)."""
    eps, n = 1.0, 2_000
    m = RandomisedResponse(eps)
    p_flip = 1 / (1 + math.exp(eps))
    counts = []
    for seed in range(200):
        r = audit(m, RR_PAIR, 2 * n, seed=seed, threshold="split",
                  score="likelihood-ratio")
        if r.tie_probability is not None:
            # decisions on D0 (record 0 = 0): "guess D1" iff output is 1 (prob p_flip) or,
            # at the threshold level, with probability p
            counts.append((r.false_positives, r.n_held_out, r.threshold, r.tie_probability))
    assert counts, "the likelihood-ratio score of a binary output is discrete"
    # a two-sided exact binomial test per audit would be noisy; pool the expected means
    # levels: output 1 (log ratio > 0), every unseen output (0), output 0 (< 0)
    expected = []
    for _, n_ho, t, p in counts:
        if t > 0:
            rate = p_flip * p
        elif t == 0:
            rate = p_flip
        else:
            rate = p_flip + (1 - p_flip) * p
        expected.append(n_ho * rate)
    z = (sum(c[0] for c in counts) - sum(expected)) / math.sqrt(
        sum(e * (1 - e / c[1]) for e, c in zip(expected, counts, strict=True)))
    assert abs(z) < 3.3  # two-sided false-alarm rate 1e-3


@pytest.mark.parametrize("score", ["fisher", "likelihood-ratio", "logistic",
                                   "gradient-boosting", None])
def test_pure_dp_randomised_response_is_audited_tightly_by_discrete_scores(score):
    r = audit(RandomisedResponse(1.0), RR_PAIR, 100_000, seed=1, score=score)
    assert r.claim.delta == 0 and r.epsilon_gdp_estimate is None
    assert 0.9 < r.epsilon_lower_bound <= 1.0  # exact epsilon 1
    assert not r.refutes_claim


def test_a_planted_bug_in_a_pure_dp_claim_is_refuted():
    # claims eps = 0.5, is eps = 1.5
    r = audit(RandomisedResponse(1.5, claimed=0.5), RR_PAIR, 50_000, seed=2)
    assert r.refutes_claim and r.epsilon_lower_bound > 1.2
    # Laplace at half the scale: claims 1, is 2
    r = audit(LaplaceSum(0.5), LAP_PAIR, 100_000, seed=3)
    assert r.score_name == "fisher" and r.refutes_claim and 1.8 < r.epsilon_lower_bound <= 2.0


def test_repeated_audits_of_exact_pure_dp_claims_refute_at_most_alpha():
    """Soundness at delta = 0: RR and Laplace claim their exact epsilon; over runs audits
    at alpha = 0.05 the number of refutations is at most the Binomial(runs, 0.05) quantile
    at 1 - FALSE_ALARM."""
    runs, alpha = 40, 0.05
    limit = binom.ppf(1 - FALSE_ALARM, runs, alpha)
    for m, pair, score in ((RandomisedResponse(1.0), RR_PAIR, "likelihood-ratio"),
                           (LaplaceSum(1.0), LAP_PAIR, "fisher")):
        refuted = sum(audit(m, pair, 20_000, alpha=alpha, seed=100 + s, score=score)
                      .refutes_claim for s in range(runs))
        assert refuted <= limit


def test_score_names_and_bad_scores_are_clear_errors():
    assert isinstance(as_score("fisher"), FisherScore)
    assert as_score("logistic").model == "logistic"
    with pytest.raises(ScoreError, match="unknown score 'likelihood'.*known scores"):
        audit(RandomisedResponse(1.0), RR_PAIR, 100, score="likelihood")
    with pytest.raises(ScoreError, match="score must be"):
        as_score(3)
    with pytest.raises(InvalidMechanismError, match="score must map"):
        audit(RandomisedResponse(1.0), RR_PAIR, 100, score=lambda x: x[:2, 0])
    with pytest.raises(InvalidMechanismError, match="score must map"):
        audit(RandomisedResponse(1.0), RR_PAIR, 100, score=lambda x: x[:, 0] * np.nan)


def test_outputs_that_change_shape_are_bad_input():
    @dataclass(frozen=True)
    class Shifty:
        name: str = "shifty"
        claim: PrivacyClaim = PrivacyClaim(1.0, 1e-5)

        def release(self, data, rng, n):
            return rng.standard_normal((n, 2 if n == 2 else 3))

    with pytest.raises(InvalidMechanismError, match="every output must have one shape"):
        audit(Shifty(), replace_one(np.zeros(3), 0, 1.0), 100)

    @dataclass(frozen=True)
    class SizeDependent:
        name: str = "per-record"
        claim: PrivacyClaim = PrivacyClaim(1.0, 1e-5, "add-remove")

        def release(self, data, rng, n):
            return data[None, :] + rng.standard_normal((n, len(data)))

    with pytest.raises(InvalidMechanismError, match="one shape to be compared"):
        audit(SizeDependent(), add_one(np.zeros(3), 1.0), 100)


def test_classifier_scores_are_reproducible_and_fitted_on_training_only():
    a = audit(LaplaceSum(1.0), LAP_PAIR, 20_000, seed=4, score="gradient-boosting")
    b = audit(LaplaceSum(1.0), LAP_PAIR, 20_000, seed=4, score="gradient-boosting", workers=2)
    assert a == b
    assert a.score_choice == "named by the caller"
    assert "half the training split" in a.score
