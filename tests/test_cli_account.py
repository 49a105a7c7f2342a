"""`dpclaims account`: one row per accountant, --json schema, calibration, bad input."""

from __future__ import annotations

import json

import dp_accounting
import pytest
from click.testing import CliRunner

from dpclaims.analysis.accounting import ACCOUNTANTS
from dpclaims.cli import main

BASE = ["account", "--sampling", "poisson", "--dataset-size", "60000", "--batch-size", "250",
        "--epochs", "10", "--delta", "1e-5", "--relation", "add-remove"]


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_json_has_one_row_per_accountant_with_the_documented_keys():
    result = run(*BASE, "--sigma", "1.0", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [r["accountant"] for r in out["rows"]] == list(ACCOUNTANTS)
    for r in out["rows"]:
        assert set(r) == {"accountant", "relation", "kind", "bound", "epsilon", "note"}
        assert r["bound"] in ("upper", "lower", "exact", "model")
        assert r["relation"] == "add-remove"
        assert r["epsilon"] is None or r["epsilon"] > 0
    rows = {r["accountant"]: r for r in out["rows"]}
    # Poisson sampling has no closed form: said, not substituted
    assert rows["analytic-gaussian"]["epsilon"] is None
    assert "unsupported" in rows["analytic-gaussian"]["note"]
    # PLD is the tightest here; the RDP rows of both libraries agree with each other
    assert rows["dp_accounting-pld"]["epsilon"] < rows["dp_accounting-rdp"]["epsilon"]
    assert rows["autodp-rdp"]["epsilon"] == pytest.approx(rows["dp_accounting-rdp"]["epsilon"],
                                                          rel=1e-6)


def test_sampling_rate_is_batch_over_dataset_size():
    a = json.loads(run(*BASE, "--sigma", "1.0", "--json").stdout)
    args = [x for x in BASE if x not in ("--batch-size", "250")]
    b = json.loads(run(*args, "--sampling-rate", str(250 / 60000), "--sigma", "1.0",
                       "--json").stdout)
    assert a["rows"] == b["rows"]


def test_target_epsilon_calibrates_sigma_for_a_shuffled_pass():
    result = run("account", "--target-epsilon", "1", "--sampling", "shuffle", "--dataset-size",
                 "1000", "--batch-size", "1", "--epochs", "100", "--delta", "1e-5", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    rows = {r["accountant"]: r["epsilon"] for r in out["rows"]}
    # calibrated by dp_accounting RDP to epsilon 1 (bisection tolerance 1e-3)
    assert rows["dp_accounting-rdp"] == pytest.approx(1.0, abs=2e-3)
    # T passes of an unamplified Gaussian: exactly one Gaussian of sigma / sqrt(T)
    exact = dp_accounting.get_epsilon_gaussian(out["noise_multiplier"] / 10, 1e-5)
    assert rows["analytic-gaussian"] == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize(("args", "message"), [
    (["--sigma", "1", "--target-epsilon", "1"], "exactly one of --sigma"),
    (["--sigma", "-1"], "noise_multiplier"),
    (["--sigma", "1", "--sampling-rate", "0.1"], "at most one of --batch-size"),
])
def test_bad_input_exits_2(args, message):
    result = run(*BASE, *args)
    assert result.exit_code == 2
    assert message in result.output


def test_bad_delta_and_sizes_exit_2():
    result = run("account", "--sigma", "1", "--sampling", "none", "--dataset-size", "10",
                 "--steps", "5", "--delta", "1.5")
    assert result.exit_code == 2 and "delta" in result.output
    result = run("account", "--sigma", "1", "--sampling", "poisson", "--dataset-size", "10",
                 "--batch-size", "20", "--steps", "5", "--delta", "1e-5")
    assert result.exit_code == 2 and "batch_size" in result.output


def test_field_defaults_textbook_dp_sgd():
    """Issue 13: add-remove by default, epochs rounded up and said so, dp_accounting's own
    figures in the tight/upper-bound rows, the classic moments row labelled, and the
    disagreement flag only among the accountants that claim tightness."""
    result = run("account", "--sigma", "1.1", "--sampling", "poisson", "--dataset-size",
                 "60000", "--batch-size", "256", "--epochs", "60", "--delta", "1e-5", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["relation"] == "add-remove" and out["steps"] == 14063
    assert "rounded up to 14063" in out["notes"][0]
    rows = {r["accountant"]: r for r in out["rows"]}
    assert rows["dp_accounting-rdp"]["epsilon"] == pytest.approx(2.597, abs=5e-4)
    assert rows["dp_accounting-pld"]["epsilon"] == pytest.approx(2.382, abs=5e-3)
    assert rows["dp_accounting-pld"]["kind"] == "tight upper bound"
    assert rows["dp_accounting-pld-optimistic"]["kind"] == "lower bound"
    assert rows["moments-accountant"]["kind"].startswith("classic")
    # the certified bracket: the optimistic PLD below (0 at the pessimistic row's interval,
    # loose by up to 14,063 x 0.0005: refined at finer intervals until it passes 95 % of
    # the upper end), the pessimistic PLD above
    bracket = out["certified_bracket"]
    assert bracket["upper"] == {"accountant": "dp_accounting-pld",
                                "epsilon": rows["dp_accounting-pld"]["epsilon"]}
    assert bracket["lower"]["accountant"] == "dp_accounting-pld-optimistic"
    assert 0.95 * bracket["upper"]["epsilon"] < bracket["lower"]["epsilon"] \
        <= bracket["upper"]["epsilon"]
    assert "refined to interval" in rows["dp_accounting-pld-optimistic"]["note"]
    assert out["disagrees"] and not out["tight_disagrees"] and out["advice"] is None
    text = run("account", "--sigma", "1.1", "--sampling", "poisson", "--dataset-size", "60000",
               "--batch-size", "256", "--epochs", "60", "--delta", "1e-5").output
    assert "rounded up" in text and "disagree" not in text


def test_an_answer_is_cached_and_a_cached_answer_imports_no_accountant(tmp_path,
                                                                       monkeypatch):
    """The second identical question reads the cache (issue 23: `account` under a second
    for a cached event): the same JSON, and in a fresh process neither dp_accounting nor
    scipy is imported."""
    import os
    import subprocess
    import sys

    monkeypatch.setenv("DPCLAIMS_ACCOUNT_CACHE", str(tmp_path))
    args = ["account", "--sampling", "none", "--steps", "3", "--delta", "1e-5",
            "--sigma", "2.0", "--json"]
    first = run(*args)
    assert first.exit_code == 0, first.output
    assert len(list(tmp_path.glob("*.json"))) == 1
    again = run(*args)
    assert json.loads(again.stdout) == json.loads(first.stdout)
    env = {**os.environ, "DPCLAIMS_ACCOUNT_CACHE": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dpclaims.cli", *args],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == json.loads(first.stdout)
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert not {m for m in imported if m.split(".")[0] in ("dp_accounting", "scipy",
                                                           "autodp")}
    # another question (or --no-cache) computes
    other = run(*args[:-2], "3.0", "--json")
    assert other.exit_code == 0 and len(list(tmp_path.glob("*.json"))) == 2
    assert run(*args, "--no-cache").exit_code == 0


def test_the_table_is_plain_lines_in_a_log():
    result = run(*BASE, "--sigma", "1.0")
    assert result.exit_code == 0, result.output
    assert not set(result.output) & set("┃│━─┏┓┗┛┡┩╇")
    assert "dp_accounting-pld: epsilon " in result.output


@pytest.mark.parametrize("plan", [["--sampling", "none", "--steps", "7"],
                                  ["--sampling", "fixed-order", "--epochs", "4"],
                                  ["--sampling", "fixed-order", "--dataset-size", "100",
                                   "--batch-size", "10", "--steps", "35"]])
def test_a_composition_of_gaussians_is_answered_exactly_without_an_accountant(plan):
    """Issue 23: full-batch and fixed-order events have a closed form; it is printed alone
    and equals the analytic-gaussian row of every accountant side by side (dp_accounting's
    get_epsilon_gaussian), with the same certified bracket up to 2e-12."""
    args = ["account", "--sigma", "1.7", *plan, "--delta", "1e-6", "--relation",
            "replace-one", "--no-cache", "--json"]
    fast = json.loads(run(*args).stdout)
    full = json.loads(run(*args, "--all-accountants").stdout)
    assert [r["accountant"] for r in fast["rows"]] == ["analytic-gaussian"]
    assert [r["accountant"] for r in full["rows"]] == list(ACCOUNTANTS)
    exact = {r["accountant"]: r for r in full["rows"]}["analytic-gaussian"]
    (row,) = fast["rows"]
    assert row["bound"] == exact["bound"] == "exact" and row["kind"] == exact["kind"]
    assert row["epsilon"] == pytest.approx(exact["epsilon"], rel=1e-11)
    for end in ("lower", "upper"):
        assert fast["certified_bracket"][end]["epsilon"] == pytest.approx(
            full["certified_bracket"][end]["epsilon"], abs=2e-12)
    assert fast["note"] == full["note"] and fast["steps"] == full["steps"]
    # one tight row: no comparison among tight accountants was made
    assert fast["tight_disagreement"] is None and not fast["tight_disagrees"]
    assert {k for k in fast if not k.startswith("_")} == {k for k in full
                                                          if not k.startswith("_")}


def test_an_exact_answer_imports_no_accountant_in_a_fresh_process(tmp_path):
    """Uncached (--no-cache), `account` for a full-batch event imports neither
    dp_accounting, autodp nor scipy (each import costs seconds); --all-accountants does."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "DPCLAIMS_ACCOUNT_CACHE": str(tmp_path)}
    args = ["account", "--sampling", "none", "--steps", "3", "--delta", "1e-5", "--sigma",
            "2.0", "--json", "--no-cache"]

    def imported(*extra):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dpclaims.cli",
                               *args, *extra], capture_output=True, text=True, env=env,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return {line.split("|")[-1].strip().split(".")[0] for line in
                proc.stderr.splitlines() if line.startswith("import time:")}

    heavy = {"dp_accounting", "scipy", "autodp"}
    assert not imported() & heavy
    assert imported("--all-accountants") >= heavy


def test_bad_delta_on_the_exact_path_exits_2():
    result = run("account", "--sigma", "1", "--sampling", "none", "--steps", "5",
                 "--delta", "0")
    assert result.exit_code == 2 and "delta" in result.output


@pytest.mark.parametrize(("sigma", "error"), [("1e308", "OverflowError"),
                                              ("1e200", "OverflowError"),
                                              ("1e-300", "ZeroDivisionError")])
def test_a_noise_multiplier_outside_the_accountants_range_gives_not_computed_rows(sigma,
                                                                                  error):
    # issue 37 (D13): sigma^2 leaves double precision inside the accountants; each row
    # says so instead of an internal error (exit 70)
    result = run(*BASE, "--sigma", sigma, "--json", "--no-cache")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    rows = {r["accountant"]: r for r in out["rows"]}
    for name in ("dp_accounting-rdp", "dp_accounting-pld", "autodp-rdp"):
        assert rows[name]["epsilon"] is None
        assert rows[name]["note"].startswith("not computed") and error in rows[name]["note"]
    assert out["certified_bracket"] == {"lower": None, "upper": None}


def test_fixed_size_batches_under_add_remove_are_accounted_by_the_reduction():
    args = ["account", "--sampling", "without-replacement", "--dataset-size", "100",
            "--batch-size", "50", "--steps", "4", "--delta", "1e-5", "--sigma", "2",
            "--no-cache", "--json"]
    out = json.loads(run(*args, "--relation", "add-remove").stdout)
    rows = {r["accountant"]: r for r in out["rows"]}
    assert rows["dp_accounting-pld"]["epsilon"] == pytest.approx(6.677, abs=2e-3)
    assert rows["dp_accounting-pld-optimistic"]["bound"] == "lower"
    assert all("Fixed-size batches under add-remove" in r["note"] for r in out["rows"])
    assert "half the noise multiplier" in out["note"]
    assert out["certified_bracket"]["lower"]["epsilon"] > 3.485  # the audit
    ro = json.loads(run(*args, "--relation", "replace-one").stdout)
    assert "Fixed-size" not in json.dumps(ro) and "(N public)" in ro["note"]


def test_poisson_sampling_needs_only_its_rate():
    """Issue 41: Poisson sampling with a rate and steps (or epochs) needs no dataset size;
    its rows are those of the same q given as B / N."""
    common = ["account", "--sigma", "1.1", "--sampling", "poisson", "--delta", "1e-5",
              "--no-cache", "--json"]
    by_rate = json.loads(run(*common, "--sampling-rate", "0.01", "--epochs", "3").stdout)
    by_sizes = json.loads(run(*common, "--dataset-size", "10000", "--batch-size", "100",
                              "--steps", "300").stdout)
    assert by_rate["steps"] == by_sizes["steps"] == 300
    assert [(r["accountant"], r["epsilon"]) for r in by_rate["rows"]] == [
        (r["accountant"], r["epsilon"]) for r in by_sizes["rows"]]
    # without-replacement needs N: the rate alone does not say the batch size
    bad = run("account", "--sigma", "1.1", "--sampling", "without-replacement",
              "--sampling-rate", "0.01", "--steps", "3", "--delta", "1e-5")
    assert bad.exit_code == 2 and "--dataset-size" in bad.output
    both = run(*common, "--sampling-rate", "0.01", "--batch-size", "5", "--steps", "3")
    assert both.exit_code == 2 and "at most one" in both.output
