"""The pytest plugin (dpclaims.pytest_plugin, dpclaims.testing) as a user meets it.

Each test writes a user's test file into a fresh directory with pytester and runs
pytest on it in-process; the plugin is loaded by its installed ``pytest11`` entry
point, as in a user's session. The README's ``test_my_mechanism.py`` is taken from
the README itself, so the example there cannot rot.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Imported here, before any pytester snapshot of sys.modules: pytester drops what
# an in-process run (or a test using pytester) imported, and numpy's extension
# modules cannot be imported twice in one process.
import dpclaims.mechanisms  # noqa: F401
import dpclaims.testing  # noqa: F401

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[1] / "README.md"
CORRECT_NOISE = "rng.laplace(0.0, 1 / self.epsilon"
HALF_NOISE = "rng.laplace(0.0, 0.5 / self.epsilon"


def readme_blocks() -> list[tuple[str, str]]:
    """The README's fenced code blocks as (language, text)."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", README.read_text(), flags=re.S | re.M)


def readme_example() -> str:
    """The README's plugin example: the python block starting ``# test_my_mechanism.py``."""
    found = [text for lang, text in readme_blocks()
             if lang == "python" and text.startswith("# test_my_mechanism.py\n")]
    assert len(found) == 1, "the README must have exactly one test_my_mechanism.py example"
    return found[0]


def readme_failure_message() -> list[str]:
    """The failure message the README shows for the half-noise bug (the block after it)."""
    blocks = readme_blocks()
    i = next(i for i, (_, text) in enumerate(blocks) if text.startswith("# test_my_mechanism.py"))
    lines = blocks[i + 1][1].splitlines()
    assert lines[0].startswith("dpclaims: the privacy claim of 'noisy-sum' is refuted")
    return lines


def test_readme_example_passes(pytester):
    pytester.makepyfile(test_my_mechanism=readme_example())
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_readme_example_with_half_the_noise_fails_with_the_readme_message(pytester):
    example = readme_example()
    assert example.count(CORRECT_NOISE) == 1
    pytester.makepyfile(test_my_mechanism=example.replace(CORRECT_NOISE, HALF_NOISE))
    result = pytester.runpytest("-p", "no:cacheprovider")
    # the sensitivity tests pass (the query is right), both audits refute the claim
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert "FAILED test_my_mechanism.py::test_audit_on_my_pair" in out
    assert "FAILED test_my_mechanism.py::test_audit_searches_the_domain" in out
    for line in readme_failure_message():
        assert line.strip() in out, f"README's failure line not in the output: {line!r}"


USER_TESTS = """
from dpclaims.mechanisms import laplace, laplace_half_scale
from dpclaims.testing import assert_not_refuted, seed_from_node_id


def test_laplace_at_its_claim(audit):
    result = audit(laplace())
    assert result.verdict == "inconclusive"
    assert result.sentence.startswith("Inconclusive: a certified lower bound ")
    assert "An audit can refute privacy but not prove it." in result.sentence
    assert result.result.n_trials == 10_000
    assert_not_refuted(result)


def test_laplace_at_half_scale(audit, request):
    result = audit(laplace_half_scale())
    assert result.seed == seed_from_node_id(request.node.nodeid, 0, 0)
    assert_not_refuted(result)
"""


def test_correct_mechanism_passes_and_planted_bug_fails_informatively(pytester):
    pytester.makepyfile(test_zoo=USER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpclaims-trials", "10000")
    result.assert_outcomes(passed=1, failed=1)
    from dpclaims.testing import seed_from_node_id

    seed = seed_from_node_id("test_zoo.py::test_laplace_at_half_scale", 0, 0)
    result.stdout.fnmatch_lines([
        "*dpclaims: the privacy claim of 'laplace-half-scale' is refuted: certified epsilon "
        ">= * > claimed epsilon 1 (delta 0, add-remove)",
        "*pair: * (add-remove); d0 = *, d1 = *",
        "*Clopper-Pearson at 95% confidence on 8000 held-out of 10000 outputs per dataset*",
        f"*seed: {seed} (reproduce with seed={seed} and 10000 trials)",
        "FAILED test_zoo.py::test_laplace_at_half_scale*",
    ])
    bound = float(re.search(r"certified epsilon >= ([0-9.]+) >", result.stdout.str()).group(1))
    assert 1 < bound <= 2  # the true epsilon of half-scale Laplace at a claimed 1 is 2


WRONG_SENSITIVITY = """
from dataclasses import dataclass

import numpy as np

from dpclaims.testing import (
    Box, PrivacyClaim, assert_not_refuted, domain_records, neighbouring_datasets,
)


@dataclass(frozen=True)
class HalfSensitivity:
    name: str = "half-sensitivity"
    domain = Box(0.0, 1.0)
    sensitivity = 0.5          # wrong: adding a record 1 moves the sum by 1

    @property
    def claim(self):
        return PrivacyClaim(1.0, 0.0, "add-remove")

    def query(self, data):
        return np.atleast_1d(np.sum(data, axis=0))

    def release(self, data, rng, n):
        return self.query(data) + rng.laplace(0.0, 0.5, size=(n, 1))


def test_given_strategy_finds_it(check_sensitivity):
    pairs = neighbouring_datasets(domain_records(Box(0.0, 1.0)), "add-remove")
    result = check_sensitivity(HalfSensitivity(), pairs)
    assert result.verdict == "refuted"
    assert result.sentence.startswith("Refuted: the largest distance among")


def test_domain_search(check_sensitivity):
    assert_not_refuted(check_sensitivity(HalfSensitivity()))
"""


def test_wrong_sensitivity_fails_with_the_shrunk_pair(pytester):
    pytester.makepyfile(test_sens=WRONG_SENSITIVITY)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*dpclaims: the claimed L2 sensitivity 0.5 of 'half-sensitivity' is refuted: a "
        "add-remove pair moves the query by * x the claim",
        "*pair (shrunk by hypothesis): d0 = *, d1 = *",
        "*seed: *",
    ])


OPTION_TESTS = """
import numpy as np

from dpclaims.mechanisms import laplace
from dpclaims.testing import seed_from_node_id


def test_budget_from_options(dpclaims_budget):
    assert dpclaims_budget.n_trials == 4000          # command line beats the ini file
    assert dpclaims_budget.alpha == 0.01             # ini
    assert dpclaims_budget.max_examples == 7         # ini
    assert dpclaims_budget.selection_trials == 2000  # default


def test_seeds(audit, request):
    m = laplace()
    pair = m.neighbouring_pairs()[0]
    first, second = audit(m, pair), audit(m, pair)
    assert first.seed == seed_from_node_id(request.node.nodeid, 5, 0)
    assert second.seed == seed_from_node_id(request.node.nodeid, 5, 1)
    again = audit(m, pair, seed=first.seed)
    assert again.epsilon_lower_bound == first.epsilon_lower_bound
    assert again.result.false_positives == first.result.false_positives
"""


def test_sensitivity_without_counterexample_is_inconclusive_not_holds():
    """A search that finds no counterexample certifies no bound: the verdict kernel's
    inconclusive, with the search's size; assert_not_refuted passes it."""
    from dpclaims.mechanisms import laplace
    from dpclaims.testing import VariantBudget, assert_not_refuted, check_mechanism_sensitivity

    out = check_mechanism_sensitivity(laplace(), budget=VariantBudget.for_tests(max_examples=40),
                                      seed=3)
    assert out.verdict == "inconclusive"
    n = out.result.n_examples
    assert out.sentence.startswith("Inconclusive: a certified lower bound ")
    assert "no certified upper bound on L1 sensitivity" in out.sentence
    assert f"No counterexample in {n} add-remove pairs" in out.sentence
    assert out.message.splitlines() == [
        f"dpclaims: the claimed L1 sensitivity 1 of 'laplace' is not refuted (inconclusive): "
        f"no counterexample in {n} add-remove pairs (largest ratio "
        f"{out.result.max_ratio:.4g} x the claim); a search refutes a bound but cannot "
        "certify one",
        "  seed: 3",
    ]
    assert_not_refuted(out)


def test_options_ini_and_command_line_and_seeds(pytester):
    pytester.makeini("[pytest]\ndpclaims_trials = 3000\ndpclaims_alpha = 0.01\n"
                     "dpclaims_max_examples = 7\ndpclaims_seed = 5\n")
    pytester.makepyfile(test_options=OPTION_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpclaims-trials", "4000")
    result.assert_outcomes(passed=2)


def test_bad_ini_value_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\ndpclaims_trials = many\n")
    pytester.makepyfile(test_bad="def test_it(audit):\n    assert audit is not None\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ini option dpclaims_trials must be a int, got 'many'*"])


def test_options_are_listed_in_help(pytester):
    result = pytester.runpytest("--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--dpclaims-trials=INT*", "*dpclaims_alpha (string)*"])


def test_entry_point_and_cheap_import():
    eps = {e.name: e.value for e in importlib.metadata.entry_points(group="pytest11")}
    assert eps.get("dpclaims") == "dpclaims.pytest_plugin"
    code = textwrap.dedent("""
        import sys
        import dpclaims.pytest_plugin
        heavy = ("numpy", "scipy", "hypothesis", "dpclaims.testing", "dpclaims.audits")
        print([m for m in heavy if m in sys.modules])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_seed_from_node_id_is_stable_and_distinct():
    from dpclaims.testing import seed_from_node_id

    a = seed_from_node_id("t.py::test_a")
    assert a == seed_from_node_id("t.py::test_a")
    assert len({a, seed_from_node_id("t.py::test_b"), seed_from_node_id("t.py::test_a", 1),
                seed_from_node_id("t.py::test_a", 0, 1)}) == 4
    assert 0 <= a < 2**63
    with pytest.raises(ValueError):
        seed_from_node_id("t.py::test_a", -1)


def test_check_budget_is_a_deprecated_alias_of_the_test_budget():
    """CheckBudget (both old import places) warns and returns VariantBudget.for_tests(...),
    positional arguments in its old order included; the plugin's defaults are unchanged."""
    from dpclaims.claims.budgets import TEST_BUDGET, VariantBudget
    from dpclaims.claims.checks import mechanism
    from dpclaims.testing import CheckBudget

    assert (TEST_BUDGET.n_trials, TEST_BUDGET.selection_trials, TEST_BUDGET.max_examples,
            TEST_BUDGET.alpha, TEST_BUDGET.n_random_pairs, TEST_BUDGET.workers,
            TEST_BUDGET.score) == (20_000, 2_000, 100, 0.05, 8, 1, None)
    assert TEST_BUDGET.pilot_trials == 2_000
    for alias in (CheckBudget, mechanism.CheckBudget):
        with pytest.warns(DeprecationWarning, match="VariantBudget.for_tests"):
            b = alias()
        assert type(b) is VariantBudget and b == TEST_BUDGET
        with pytest.warns(DeprecationWarning):
            b = alias(1000, 500, 0.1, 7, 3, 2)
        assert b == VariantBudget(n_trials=1000, selection_trials=500, alpha=0.1,
                                  max_examples=7, n_random_pairs=3, workers=2)
        with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="alpha"):
            alias(alpha=1.5)
    # check-variant's budget keeps its own defaults
    assert (VariantBudget().n_trials, VariantBudget().selection_trials,
            VariantBudget().max_examples) == (200_000, None, 300)


def test_bad_arguments_raise():
    from dpclaims.mechanisms import laplace
    from dpclaims.testing import (
        VariantBudget,
        assert_not_refuted,
        audit_mechanism,
        check_mechanism_sensitivity,
    )

    with pytest.raises(TypeError, match="outcome of the `audit`"):
        assert_not_refuted(0.5)
    with pytest.raises(TypeError, match="where must be"):
        audit_mechanism(laplace(), where="everywhere")
    with pytest.raises(ValueError, match="empty list"):
        audit_mechanism(laplace(), where=[])
    with pytest.raises(ValueError, match="alpha"):
        VariantBudget.for_tests(alpha=1.5)

    class NoQuery:
        name = "no-query"
        claim = laplace().claim

        def release(self, data, rng, n):
            return rng.laplace(size=(n, 1))

    with pytest.raises(ValueError, match="nothing to audit"):
        audit_mechanism(NoQuery())
    with pytest.raises(ValueError, match="needs a `query"):
        check_mechanism_sensitivity(NoQuery())
    pair = laplace().neighbouring_pairs()[0]
    r = audit_mechanism(NoQuery(), pair, budget=VariantBudget.for_tests(n_trials=1000))
    # the release ignores the data: nothing to distinguish, the given pair is used as is
    assert r.pair is pair and r.selection is None and r.verdict == "inconclusive"
