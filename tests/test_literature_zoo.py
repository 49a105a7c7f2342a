"""The literature's mechanisms (dpclaims.mechanisms), record domains, the pair search,
pure-DP accounting and the nothing-checked exit code of `dpclaims check-variant`."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.analysis.accounting import PURE_DP_ACCOUNTANT, account_event
from dpclaims.analysis.domains import Ball, Box, FiniteSet, Product
from dpclaims.audits import (
    NeighbouringPair,
    PrivacyClaim,
    Sensitivity,
    candidate_pairs,
    select_pair,
)
from dpclaims.claims.checks.variant import (
    EXIT_NOT_CHECKED,
    EXIT_OK,
    EXIT_REFUTED,
    VariantBudget,
    check_variant,
    exit_code,
)
from dpclaims.cli import main
from dpclaims.mechanisms import STATDP_PATTERNS, ZOO, answers_pair, statdp_pairs
from dpclaims.property_tests.strategies import (
    domain_records,
    draw_examples,
    neighbouring_datasets,
)
from dpclaims.reports.results import reading_records

# A reduced budget: every zoo verdict below was seen to hold at seed 0; a correct
# mechanism is refuted with probability <= alpha = 0.05 whatever the seed.
SMALL = VariantBudget(n_trials=40_000, max_examples=40, selection_trials=4_000,
                      n_random_pairs=4)


@pytest.mark.parametrize("factory", list(ZOO))
def test_zoo_verdicts_at_a_reduced_budget(factory):
    mech = ZOO[factory]()
    verdicts, _, meta = check_variant(mech, SMALL, seed=0)
    expected = EXIT_OK if mech.literature.correct else EXIT_REFUTED
    assert exit_code(verdicts) == expected, [v.sentence for v in verdicts]
    audit_v = next(v for v in verdicts if v.claim.id.endswith("empirical-audit"))
    if not mech.literature.correct:
        # the refutation is the audit's certificate, not only a property test
        assert audit_v.verdict == "refuted" and audit_v.certificate
        cert = audit_v.evidence["audit"]["epsilon_lower_bound"]
        assert mech.claim.epsilon < cert <= (mech.literature.true_epsilon or math.inf)
    assert meta["exit code"] == expected


def test_zoo_literature_is_consistent_with_the_claims():
    for factory, make in ZOO.items():
        mech = make()
        lit = mech.literature
        if lit.true_epsilon is not None:
            if lit.correct:
                assert lit.true_epsilon <= mech.claim.epsilon * (1 + 1e-9), factory
            else:
                assert lit.true_epsilon > mech.claim.epsilon, factory
        # every mechanism states a domain and pairs the literature audits it on
        assert mech.domain is not None and mech.neighbouring_pairs(), factory
        for p in mech.neighbouring_pairs():
            assert p.relation == mech.claim.relation


def test_svt_outputs_follow_lyu_et_al():
    rng = np.random.default_rng(0)
    data = np.ones((1, 10))
    for alg in (1, 2, 3, 4):  # halting variants: at most c = 1 positive, then -1 (not answered)
        m = ZOO[f"svt_alg{alg}"]()
        out = m.release(data, rng, 5000)[:, :10]
        assert set(np.unique(out)) <= {-1.0, 0.0, 1.0}
        assert np.all((out == 1).sum(axis=1) <= 1)
        first = np.argmax(out == 1, axis=1)
        hit = (out == 1).any(axis=1)
        after = np.arange(10)[None] > first[:, None]
        assert np.all(out[hit[:, None] & after] == -1)
    # Alg. 5 adds no noise to the answers: with rho fixed by the seed, a query far above
    # the threshold is always positive
    m5 = ZOO["svt_alg5"]()
    out = m5.release(np.r_[[100.0], np.zeros(9)][None], rng, 2000)
    assert np.all(out[:, 0] == 1) and set(np.unique(out)) <= {0.0, 1.0}
    # Alg. 3 releases the noisy answer of each positive query
    m3 = ZOO["svt_alg3"]()
    out = m3.release(data, rng, 2000)
    assert out.shape == (2000, 20)
    pos = out[:, :10] == 1
    assert np.all(out[:, 10:][~pos] == 0) and np.all(out[:, 10:][pos] != 0)


def test_noisy_max_value_privacy_loss_grows_with_k():
    """The derivation in the module docstring: max of k answers all moved by 1 has a left
    tail whose density ratio is e^{k eps / 2}; the literature entry says k eps / 2."""
    m = ZOO["report_noisy_max_value"]()
    assert m.literature.true_epsilon == pytest.approx(m.k * m.eps / 2)
    b, k, x = 2 / m.eps, m.k, -40.0
    # density of max of k iid Laplace(q, b) in the left tail: k F^{k-1} f, F = e^{(x-q)/b}/2
    def dens(q):
        f = np.exp((x - q) / b) / (2 * b)
        return k * (np.exp((x - q) / b) / 2) ** (k - 1) * f
    assert math.log(dens(1.0) / dens(2.0)) == pytest.approx(k / b)


def test_statdp_pairs_are_add_remove_neighbours_with_the_stated_answers():
    pairs = statdp_pairs(5)
    assert len(pairs) == len(STATDP_PATTERNS)
    for (name, make), p in zip(STATDP_PATTERNS.items(), pairs, strict=True):
        a0, a1 = make(5)
        assert np.allclose(p.d0.sum(axis=0), a0) and np.allclose(p.d1.sum(axis=0), a1), name
        assert np.all(np.abs(p.d1) <= 1)
    with pytest.raises(ValueError, match="leave the record box"):
        answers_pair(np.zeros(3), np.r_[2.0, 0, 0])


# --------------------------------------------------------------------------- domains


def test_domains_reject_bad_input():
    with pytest.raises(ValueError, match="low < high"):
        Box(1.0, 0.0)
    with pytest.raises(ValueError, match="finite"):
        Box(0.0, np.inf)
    with pytest.raises(ValueError, match="norm"):
        Ball(1.0, norm=3)
    with pytest.raises(ValueError, match="radius"):
        Ball(-1.0)
    with pytest.raises(ValueError, match="at least one record"):
        FiniteSet(())
    with pytest.raises(ValueError, match="non-finite"):
        FiniteSet((0.0, np.nan))
    with pytest.raises(TypeError, match="record domain"):
        domain_records([0, 1])


DOMAINS = [Box(-1.0, 1.0, (3,)), Box(0.0, 1.0), Ball(2.0, 2, (2,)), Ball(1.0, 1, (3,)),
           Ball(1.0, math.inf, (2,)), FiniteSet((0, 1, 2)),
           Product(Ball(1.0, 2, (3,)), Box(-1.0, 1.0)),
           Product(Box(0.0, 1.0, (2, 2)), FiniteSet((0, 1, 2)), Ball(1.0, 1, (2,)))]


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: type(d).__name__)
def test_domain_records_and_patterns_lie_in_the_domain(domain):
    for r in draw_examples(domain_records(domain), 30, seed=1):
        assert domain.contains(r)
    for relation in ("replace-one", "add-remove"):
        pats = domain.patterns(relation)
        assert pats
        for _, r0, r1 in pats:
            assert domain.contains(r1)
            assert (r0 is None) == (relation == "add-remove") or domain.contains(r0)


@settings(max_examples=40, deadline=None, database=None)
@given(data=st.data(), relation=st.sampled_from(["replace-one", "add-remove"]))
def test_neighbouring_datasets_are_neighbours(data, relation):
    d0, d1 = data.draw(neighbouring_datasets(domain_records(Box(-1.0, 1.0, (2,))), relation))
    NeighbouringPair(d0, d1, relation)  # raises unless they are neighbours


def test_draw_examples_is_reproducible():
    s = neighbouring_datasets(domain_records(Box(0.0, 1.0)), "add-remove")
    a, b = draw_examples(s, 6, seed=3), draw_examples(s, 6, seed=3)
    assert len(a) == 6
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
               for x, y in zip(a, b, strict=True))


# --------------------------------------------------------------------------- no data


@dataclass(frozen=True)
class DomainOnlyLaplaceSum:
    """Sum of records in [0, 1] + Laplace: a query and a domain, no data."""

    noise_scale: float = 1.0
    claimed_sensitivity: float = 1.0
    name: str = "domain-only-laplace-sum"
    domain: object = Box(0.0, 1.0)

    @property
    def claim(self):
        return PrivacyClaim(1.0, 0.0, "add-remove", dp_accounting.LaplaceDpEvent(1.0))

    @property
    def sensitivity(self):
        return Sensitivity(self.claimed_sensitivity, 1)

    def query(self, data):
        return np.atleast_1d(np.sum(data))

    def release(self, data, rng, n):
        return self.query(data) + rng.laplace(0.0, self.noise_scale, (n, 1))


def test_a_mechanism_with_a_domain_and_no_data_is_judged():
    ok, _, _ = check_variant(DomainOnlyLaplaceSum(), SMALL, seed=0)
    assert exit_code(ok) == EXIT_OK, [v.sentence for v in ok]
    # planted bug in the noise: half the scale, true epsilon 2 > 1
    bug, _, _ = check_variant(DomainOnlyLaplaceSum(noise_scale=0.5), SMALL, seed=0)
    by = {v.claim.id.split("/")[-1]: v for v in bug}
    assert by["empirical-audit"].verdict == "refuted"
    assert by["accounting"].verdict == "holds"  # the event is consistent; the noise is not
    selected = by["empirical-audit"].evidence["pair_selection"]["selected"]
    assert selected.startswith(("domain pattern", "random pair")), selected
    # planted bug in the sensitivity: claimed 1/2, a record moves the sum by up to 1
    sens, _, _ = check_variant(DomainOnlyLaplaceSum(claimed_sensitivity=0.5), SMALL, seed=0)
    by = {v.claim.id.split("/")[-1]: v for v in sens}
    assert by["sensitivity"].verdict == "refuted"
    assert "drawn from the domain" in by["sensitivity"].evidence["datasets"]


def test_candidate_pairs_from_a_domain_alone_are_valid_and_reproducible():
    m = DomainOnlyLaplaceSum()
    a = candidate_pairs(m, seed=2, n_random=4)
    b = candidate_pairs(m, seed=2, n_random=4)
    assert len(a) >= 2 and [p.description for p in a] == [p.description for p in b]
    for p in a:
        assert p.relation == "add-remove"
    sel = select_pair(m, a, 2_000, seed=0)
    assert sel.n_candidates == len(a) and len(sel.pilots) == len(a)
    assert select_pair(m, a, 2_000, seed=0).index == sel.index


def test_the_pair_search_fits_a_classifier_once_on_the_chosen_pair(monkeypatch):
    from dpclaims.audits import scores
    from dpclaims.testing import VariantBudget, audit_mechanism

    fits = []
    real_fit = scores.ClassifierScore.fit

    def counted(self, train0, train1, seed):
        fits.append(len(train0))
        return real_fit(self, train0, train1, seed)

    monkeypatch.setattr(scores.ClassifierScore, "fit", counted)
    m = ZOO["svt_alg3"]()  # mixed outputs: auto chooses gradient boosting
    out = audit_mechanism(m, budget=VariantBudget.for_tests(n_trials=4_000,
                                                            selection_trials=2_000,
                                                            n_random_pairs=2), seed=0)
    pilots = out.selection.pilots
    assert len(pilots) >= 3 and fits == [out.result.n_train // 2]
    assert not any("classifier" in p["score"].lower() or "boosting" in p["score"].lower()
                   for p in pilots)
    assert out.result.score_name == "gradient-boosting"


NO_DOMAIN = """
import numpy as np
from dpclaims.audits import PrivacyClaim, Sensitivity

class M:
    name = "query-without-data"
    claim = PrivacyClaim(1.0, 0.0, "add-remove")
    sensitivity = Sensitivity(0.5, 1)          # wrong, but nothing can show it
    def query(self, data):
        return np.atleast_1d(np.sum(data))
    def release(self, data, rng, n):
        return self.query(data) + rng.laplace(0.0, 1.0, (n, 1))

m = M()
"""


def test_nothing_checked_exits_3_and_says_so(tmp_path):
    f = tmp_path / "nodomain.py"
    f.write_text(NO_DOMAIN)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["check-variant", f"{f}:m", "--out", str(out),
                                       "--n-trials", "2000"])
    assert result.exit_code == EXIT_NOT_CHECKED, result.output
    data = json.loads((out / "results.json").read_text())
    kinds = {v["claim_id"].split("/")[-1]: v["verdict"] for v in reading_records(data)}
    assert kinds == {"sensitivity": "not-checkable", "empirical-audit": "not-checkable"}
    assert "Exit codes" in CliRunner().invoke(main, ["check-variant", "--help"]).output


def test_unknown_score_is_bad_input(tmp_path):
    result = CliRunner().invoke(main, ["check-variant", "dpclaims.mechanisms:laplace",
                                       "--score", "bogus", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown score 'bogus'" in result.output
    result = CliRunner().invoke(main, ["check-variant", "dpclaims.mechanisms:nope",
                                       "--out", str(tmp_path)])
    assert result.exit_code == 2 and "no object 'nope'" in result.output


# --------------------------------------------------------------------------- pure DP


def test_pure_dp_accounting():
    res = account_event(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(2.0), 3),
                        0.0, "add-remove")
    rows = {r.name: r for r in res.rows}
    assert rows[PURE_DP_ACCOUNTANT].epsilon == pytest.approx(1.5)
    assert "exact at delta = 0" in rows[PURE_DP_ACCOUNTANT].note
    for name in ("dp_accounting-rdp", "dp_accounting-pld", "autodp-rdp"):
        assert rows[name].epsilon is None and "needs delta > 0" in rows[name].note
    # a Gaussian is never pure DP
    g = {r.name: r for r in account_event(dp_accounting.GaussianDpEvent(1.0), 0.0,
                                          "add-remove").rows}
    assert g[PURE_DP_ACCOUNTANT].epsilon == math.inf
    # at delta > 0 the composition is an upper bound and the tight accountants are below it
    d = {r.name: r for r in account_event(dp_accounting.SelfComposedDpEvent(
        dp_accounting.LaplaceDpEvent(2.0), 3), 1e-6, "add-remove").rows}
    assert d[PURE_DP_ACCOUNTANT].epsilon == pytest.approx(1.5)
    assert d["dp_accounting-pld"].epsilon <= 1.5 + 1e-9


def test_pure_dp_claims_are_refuted_only_by_the_exact_composition():
    @dataclass(frozen=True)
    class Claimed:
        eps: float
        name: str = "laplace-claim"

        @property
        def claim(self):
            return PrivacyClaim(self.eps, 0.0, "add-remove", dp_accounting.LaplaceDpEvent(1.0))

        def release(self, data, rng, n):
            return np.sum(data) + rng.laplace(0.0, 1.0, (n, 1))

    from dpclaims.claims.checks.variant import check_accounting_claim
    assert check_accounting_claim(Claimed(1.0), 0).verdict == "holds"
    v = check_accounting_claim(Claimed(0.5), 0)
    assert v.verdict == "refuted" and PURE_DP_ACCOUNTANT in v.sentence
    assert dataclasses.replace(Claimed(1.0), eps=2.0).claim.epsilon == 2.0


# --------------------------------------------------------------------------- soundness


def test_false_refutation_benchmark_small_version(tmp_path):
    """benchmarks/false_refutation.py at 50 audits: true claims refuted at most at rate
    alpha. Refutations ~ Binomial(50, <= 0.05); the test fails on more than
    binom.isf(1e-3, 50, 0.05) of them (false-alarm rate <= 1e-3 for a sound audit)."""
    import subprocess
    import sys
    from pathlib import Path

    from scipy.stats import binom

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "false_refutation.py"
    out = tmp_path / "fr.json"
    subprocess.run([sys.executable, str(script), "--audits", "50", "--trials", "4000",
                    "--pilot", "1000", "--processes", "1", "--json", str(out)],
                   check=True, capture_output=True, text=True, timeout=600)
    res = json.loads(out.read_text())
    assert res["audits"] == 50
    assert {r["score"] for r in res["rows"]} == {"auto", "fisher", "likelihood-ratio",
                                                  "logistic", "gradient-boosting"}
    assert res["refuted"] <= binom.isf(1e-3, 50, 0.05)
