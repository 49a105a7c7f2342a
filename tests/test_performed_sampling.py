"""A whole run's declared sampler is accounted as performed, and a library's own
accountant is a reading of its own (issue 40 item 4; claims.checks.performed_sampling).

The configuration is issue 40's d3p run (N = 100, batches of exactly 50, 4 steps, noise
multiplier 2, delta = 1e-5; d3p's ``DPSVI.get_epsilon`` assumes Poisson add-remove and
says 2.524), played by the plain numpy :class:`DPVIRun` with a declared ``sampling``."""

from __future__ import annotations

from dataclasses import dataclass

import dp_accounting
import pytest

from dpclaims.algorithms.dpvi.whole_run import DPVIRun
from dpclaims.analysis.accounting import dp_event_for
from dpclaims.analysis.fixed_size_exact import EXACT_PAIR_ROW
from dpclaims.analysis.sampling import Sampling
from dpclaims.analysis.validation import InputError
from dpclaims.claims.checks.performed_sampling import (
    check_library_accounting,
    claim_noise_multiplier,
    performed_accounting,
    read_library_accounting,
)
from dpclaims.claims.checks.whole_run import check_algorithm, check_performed_sampling

D3P = {"name": "d3p's DPSVI.get_epsilon", "epsilon": 2.524, "delta": 1e-5,
       "relation": "add-remove", "assumes": "poisson"}


@dataclass(frozen=True, eq=False)
class Declared(DPVIRun):
    """DPVIRun (its claim: Poisson add-remove, PLD) declaring the sampler it performs and
    a library's accountant (the run itself is not used here)."""

    kind: str = "without-replacement"
    library: dict | None = None
    event: object = None

    @property
    def sampling(self):
        b = round(self.sampling_rate * self.n_records)
        if self.kind == "shuffle":
            return Sampling("shuffle", self.n_records, b, epochs=2)
        return Sampling(self.kind, self.n_records, b, steps=self.steps)

    @property
    def performed_is_shuffle(self):
        return self.kind == "shuffle"

    @property
    def library_accounting(self):
        return self.library

    @property
    def performed_event(self):
        return self.event


def issue_run(**kw) -> Declared:
    return Declared(n_records=100, steps=4, noise_multiplier=2.0, sampling_rate=0.5,
                    clip=0.5, **kw)


def test_the_declared_sampler_is_what_is_accounted():
    # the claim is the Poisson epsilon (2.524 by the PLD); Poisson performed: it holds
    poisson = issue_run(kind="poisson")
    assert poisson.claim.epsilon == pytest.approx(2.524, abs=1e-3)
    [v] = check_performed_sampling(poisson, 0)
    assert v.claim.id.endswith("/accounting-as-performed") and v.verdict == "holds"
    # fixed-size batches performed: the fixed-size add-remove rows refute it, and the
    # exact computation of one pair is a lower bound of its own, beside the optimistic PLD
    [v] = check_performed_sampling(issue_run(), 0)
    assert v.reading == "as performed" and v.verdict == "refuted"
    rows = {r["name"]: r for r in v.evidence["accounting"]["rows"]}
    assert rows["dp_accounting-pld"]["bound"] == "upper"
    assert rows["dp_accounting-pld"]["epsilon"] == pytest.approx(6.677, abs=2e-3)
    assert rows["dp_accounting-pld-optimistic"]["bound"] == "lower"
    exact = rows[EXACT_PAIR_ROW]
    assert exact["bound"] == "lower" and 6.66 < exact["epsilon"] <= 6.677 + 2e-3
    assert exact["details"]["pair"]["larger_size"] == 100
    assert v.evidence["noise_multiplier"] == 2.0
    assert "(lower)" in v.sentence and "pushes another out" in v.sentence


def test_a_shuffled_sampler_gives_the_two_readings_of_a_shuffled_pass():
    known, hidden = check_performed_sampling(issue_run(kind="shuffle"), 0)
    assert "order known" in known.reading and not known.text_reading
    assert hidden.reading == "as performed, hidden shuffle"
    # 2 passes of an unamplified Gaussian at sigma 2 are far above 2.524: exact for a
    # known order, an upper bound only for a hidden one
    exact = dp_accounting.get_epsilon_gaussian(2.0 / 2 ** 0.5, 1e-5)
    assert known.verdict == "refuted"
    assert known.evidence["basis"]["lower"]["value"] == pytest.approx(exact, rel=1e-6)
    assert hidden.verdict == "inconclusive" and hidden.evidence["basis"]["lower"] is None


def test_fixed_size_batches_under_replace_one_keep_the_replace_one_rows():
    plan = Sampling("without-replacement", 100, 50, steps=4)
    r = performed_accounting(1.0, plan, 1e-5, "replace-one")
    rows = {x.name: x for x in r.rows}
    assert rows["autodp-rdp"].epsilon is not None and rows["autodp-rdp"].bound == "upper"
    assert rows["dp_accounting-rdp"].bound == "upper"
    assert rows["dp_accounting-pld"].epsilon is None  # no replace-one WOR PLD: says so
    assert EXACT_PAIR_ROW not in rows                  # the pair is an add-remove one


def test_a_performed_event_that_disagrees_with_the_sampling_is_bad_input():
    poisson_event = dp_event_for(2.0, Sampling("poisson", 100, 50, steps=4))
    with pytest.raises(InputError, match="disagrees with sampling"):
        check_performed_sampling(issue_run(event=poisson_event), 0)
    # the same event as the sampling declared: accepted
    agreeing = dp_event_for(2.0, Sampling("without-replacement", 100, 50, steps=4))
    [v] = check_performed_sampling(issue_run(event=agreeing), 0)
    assert v.verdict == "refuted"


def test_the_library_accountant_is_a_reading_of_its_own():
    [v] = check_library_accounting(issue_run(library=D3P), 0)
    assert v.claim.id.endswith("/library-accounting")
    assert v.reading == "d3p's DPSVI.get_epsilon" and v.text_reading
    # refuted on certified lower bounds: 2.524 is far below the fixed-size epsilon
    assert v.verdict == "refuted" and v.certificate
    assert v.evidence["basis"]["claimed"]["value"] == 2.524
    assert v.evidence["basis"]["lower"]["value"] > 6.6
    # what the library assumes (Poisson) is what its number stands for
    assumed = {r["name"]: r["epsilon"]
               for r in v.evidence["assumed_sampling_accounting"]["rows"]}
    assert assumed["dp_accounting-pld"] == pytest.approx(2.524, abs=1e-3)
    assert "the library's number stands for that sampling" in v.sentence
    # a library number at or above a certified upper bound holds
    [ok] = check_library_accounting(issue_run(library={**D3P, "epsilon": 7.0}), 0)
    assert ok.verdict == "holds" and ok.evidence["basis"]["upper"]["value"] <= 7.0
    # a hidden shuffle has only an upper bound: a number below it is inconclusive
    [und] = check_library_accounting(issue_run(kind="shuffle", library=D3P), 0)
    assert und.verdict == "inconclusive" and und.evidence["basis"]["lower"] is None


def test_the_library_reading_needs_the_sampling_and_the_claims_relation():
    @dataclass(frozen=True, eq=False)
    class NoSampling(DPVIRun):
        library_accounting = D3P
        sampling = None  # DPVIRun declares its sampler: this one does not

    [v] = check_library_accounting(NoSampling(n_records=100, steps=4, noise_multiplier=2.0,
                                              sampling_rate=0.5), 0)
    assert v.verdict == "not-checkable" and "declare `sampling`" in v.sentence
    [v] = check_library_accounting(issue_run(library={**D3P, "relation": "replace-one"}), 0)
    assert v.verdict == "not-checkable" and "not converted" in v.sentence


@pytest.mark.parametrize(("bad", "key"), [
    ({**D3P, "epsilon": -1.0}, "epsilon"),
    ({**D3P, "epsilon": "2.5"}, "epsilon"),
    ({**D3P, "delta": 0.0}, "delta"),
    ({**D3P, "relation": "add-or-remove"}, "relation"),
    ({**D3P, "assumes": "Poisson"}, "assumes"),
    ({**D3P, "name": ""}, "name"),
    ({k: v for k, v in D3P.items() if k != "assumes"}, "missing \\['assumes'\\]"),
    ({**D3P, "sigma": 2.0}, "unknown \\['sigma'\\]"),
    ([("name", "d3p")], "mapping"),
])
def test_a_bad_library_accounting_is_bad_input_naming_the_key(bad, key):
    with pytest.raises(InputError, match=key):
        read_library_accounting(bad)
    # check-variant stops on it before any check runs
    with pytest.raises(InputError, match=key):
        check_algorithm(issue_run(library=bad), budget=None)


def test_a_sampling_that_is_not_a_sampling_is_bad_input():
    @dataclass(frozen=True, eq=False)
    class Named(DPVIRun):
        sampling = "without-replacement"

    with pytest.raises(InputError, match="sampling must be a dpclaims.analysis"):
        check_performed_sampling(Named(), 0)


def test_the_claims_noise_multiplier_is_read_off_its_event():
    event = dp_event_for(2.0, Sampling("poisson", 100, 50, steps=4))
    assert claim_noise_multiplier(event) == 2.0
    two = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(1.0),
                                         dp_accounting.GaussianDpEvent(2.0)])
    assert claim_noise_multiplier(two) is None
    assert claim_noise_multiplier(dp_accounting.LaplaceDpEvent(1.0)) is None
    assert claim_noise_multiplier(None) is None
