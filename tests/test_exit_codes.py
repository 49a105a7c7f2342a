"""Every exit-code path of the CLI (issue 21): the code, and one line on stderr that names
the problem, never a traceback. 0 nothing refuted, 1 refuted, 2 bad input, 3 not
checkable, 70 internal error, 130 interrupted (143, SIGTERM, and the folders every ending
leaves: tests/test_output_safety.py); 69 (a Dask cluster failed mid-run) is
tested in tests/test_cluster.py, with a real scheduler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpclaims.cli import main
from dpclaims.reports.results import load_results, reading_records

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad_variants.py"
EXAMPLE = ROOT / "examples" / "variants.py"
SMALL = ["--n-trials", "2000", "--max-examples", "20"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line(result) -> str:
    """The error line on stderr; fails on a traceback or on more than one line."""
    err = [line for line in result.stderr.splitlines() if line.startswith("dpclaims:")]
    assert "Traceback" not in result.stderr, result.stderr
    assert len(err) == 1, result.stderr
    return err[0]


def bad_variant(tmp_path, name, *extra):
    return invoke("check-variant", f"{BAD}:{name}", *SMALL, "--out", tmp_path / "o", *extra)


# --------------------------------------------------------------------------- 0, 1, 3


def test_0_nothing_refuted_1_refuted(tmp_path):
    ok = invoke("check-variant", f"{EXAMPLE}:correct", *SMALL, "--out", tmp_path / "a")
    assert ok.exit_code == 0, ok.output
    wrong = invoke("check-variant", f"{EXAMPLE}:wrong", "--n-trials", "20000",
                   "--max-examples", "50", "--out", tmp_path / "b")
    assert wrong.exit_code == 1, wrong.output


def toml(tmp_path, body: str) -> Path:
    p = tmp_path / "claims.toml"
    p.write_text('[paper]\ntitle = "T"\n\n[[privacy]]\nid = "t/e"\nlocation = "Sec. 1"\n'
                 'statement = "we get epsilon"\n' + body)
    return p


DPSGD = ("reported_epsilon = {eps}\ndelta = 1e-5\nnoise_multiplier = 1.1\n"
         "dataset_size = 60000\nbatch_size = 256\nsteps = {steps}\n")


def test_3_a_claim_without_dataset_size_is_not_checkable(tmp_path):
    body = "reported_epsilon = 2.0\ndelta = 1e-5\nnoise_multiplier = 1.1\nbatch_size = 256\n" \
           "epochs = 60\n"
    r = invoke("check", toml(tmp_path, body), "--out", tmp_path / "o")
    assert r.exit_code == 3, r.output
    v = reading_records(load_results(tmp_path / "o"))[0]
    assert v["verdict"] == "not-checkable" and "dataset size N" in v["sentence"]


def test_1_the_false_holds_of_issue_21_is_refuted(tmp_path):
    # Issue 21's case at a tenth of its steps (12 s instead of 51 s; the same path): DP-SGD,
    # q = 256/60000, sigma = 1.1, delta = 1e-5, Poisson, add-remove, 3,211 steps. The
    # pessimistic PLD gives 1.082; a reported 1.05 lies within the 5 % relative tolerance
    # that used to make such a claim "hold" (issue 21: 3.66 against 3.773 at 32,110
    # steps). The optimistic PLD at its first interval gives only 0.28; refined, it
    # certifies epsilon >= 1.056 > 1.05.
    r = invoke("check", toml(tmp_path, DPSGD.format(eps=1.05, steps=3211)), "--out",
               tmp_path / "o")
    assert r.exit_code == 1, r.output
    v = reading_records(load_results(tmp_path / "o"))[0]
    assert v["verdict"] == "refuted"
    assert v["evidence"]["basis"]["lower"]["value"] > 1.05
    assert "dp_accounting-pld-optimistic" in v["evidence"]["basis"]["lower"]["source"]
    upper = v["evidence"]["basis"]["upper"]["value"]
    assert 1.05 < upper < 1.05 / 0.95  # the claim is within the old 5 % tolerance


# --------------------------------------------------------------------------- 2: claims files


@pytest.mark.parametrize("line, key", [
    ('noise_multiplier = "1.1"', "noise_multiplier"),
    ('epochs = "60"', "epochs"),
    ('reported_epsilon = "1.2"', "reported_epsilon"),
    ("batch_size = 256.0", "batch_size"),
    ("dataset_size = true", "dataset_size"),
])
def test_2_a_string_or_wrong_type_where_a_number_belongs(tmp_path, line, key):
    base = {"noise_multiplier": "noise_multiplier = 1.1", "epochs": "epochs = 60",
            "reported_epsilon": "reported_epsilon = 1.2", "batch_size": "batch_size = 256",
            "dataset_size": "dataset_size = 60000"}
    base[key] = line
    r = invoke("check", toml(tmp_path, "delta = 1e-5\n" + "\n".join(base.values()) + "\n"),
               "--out", tmp_path / "o")
    assert r.exit_code == 2, r.output
    msg = one_line(r)
    assert f": {key} must be" in msg and "[[privacy]] #1 (t/e)" in msg
    assert not (tmp_path / "o").exists()


def test_2_batch_size_above_the_dataset_size(tmp_path):
    r = invoke("check", toml(tmp_path, DPSGD.format(eps=1, steps=10).replace(
        "batch_size = 256", "batch_size = 70000")), "--out", tmp_path / "o")
    assert r.exit_code == 2 and "batch_size 70000 exceeds dataset_size 60000" in one_line(r)


def test_claims_file_errors_import_neither_the_accountants_nor_the_audits(tmp_path):
    # bad input answers before the heavy modules load (benchmarks/cli_timings.py times it)
    path = toml(tmp_path, 'reported_epsilon = "1.2"\n')
    code = ("import sys\nfrom dpclaims.cli import main\n"
            f"try:\n    main(['check', {str(path)!r}, '--out', {str(tmp_path / 'o')!r}])\n"
            "except SystemExit as e:\n    print('exit', e.code)\n"
            "print(sorted(m for m in ('dp_accounting', 'autodp', 'dpclaims.audits.core', "
            "'hypothesis') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert "exit 2" in out.stdout and out.stdout.strip().endswith("[]"), out


# --------------------------------------------------------------------------- 2: the user's code


@pytest.mark.parametrize("name, words", [
    ("RaisingRelease", ["bad_variants.py:", "ZeroDivisionError", "my bug in release"]),
    ("BadClaimProperty", ["bad_variants.py:", "relation"]),
    ("raising_factory", ["KeyError", "no such key"]),
    ("IgnoresRng", ["does not follow its rng"]),
    ("NanData", ["non-finite", "record 1"]),
    ("OutsideDomain", ["outside the declared domain"]),
    ("DomainShape", ["shape (2,)", "(3,)"]),
    # issue 37: a user's output that is not real numbers is bad input, never exit 70
    ("StringRelease", ["'mean': release(data, rng, n=2)", "strings", "<U3"]),
    ("ExitingRelease", ["your code called sys.exit(0)", "bad_variants.py:", "release"]),
    ("RaggedRelease", ["release(data, rng, n=2)", "dtype object", "ndarray"]),
    ("DictRelease", ["release(data, rng, n=2)", "list", "dict"]),
    ("MaskedRelease", ["release(data, rng, n=2)", "masked value(s)"]),
    ("ComplexRelease", ["release(data, rng, n=2)", "complex128",
                        "np.concatenate([z.real, z.imag], axis=-1)"]),
    ("ComplexData", ["`data`", "complex", "separate real coordinates"]),
    ("StringCandidates", ["candidate 0 of `candidates`", "strings"]),
    # follows its rng at n <= 100 only: caught on the audit's first block (n = 400)
    ("RngBelowThreshold", ["does not follow its rng", "n=400"]),
])
def test_2_bad_user_code_and_data(tmp_path, name, words):
    r = bad_variant(tmp_path, name)
    assert r.exit_code == 2, r.output
    msg = one_line(r)
    for w in words:
        assert w in msg, msg
    assert not (tmp_path / "o").exists()


def test_2_debug_shows_the_traceback(tmp_path):
    r = invoke("--debug", "check-variant", f"{BAD}:RaisingRelease", *SMALL, "--out",
               tmp_path / "o")
    assert r.exit_code == 2 and "Traceback" in r.stderr


def test_2_out_folders(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    t0 = time.perf_counter()
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", blocker / "sub")
    assert r.exit_code == 2 and "cannot create a folder" in one_line(r)
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", blocker)
    assert r.exit_code == 2 and "is a file" in r.stderr  # click's own option check
    used = tmp_path / "used"
    used.mkdir()
    (used / "results.json").write_text("{}")
    r = invoke("audit", "--out", used)
    assert r.exit_code == 2 and "--overwrite" in one_line(r)
    assert time.perf_counter() - t0 < 60  # refused before any work (a sanity limit)
    assert (used / "results.json").read_text() == "{}"


def test_overwrite_replaces_the_whole_folder(tmp_path):
    out = tmp_path / "o"
    out.mkdir()  # an earlier run's report (written before the marker file existed)
    (out / "results.json").write_text('{"schema_version": 1, "claims": []}')
    (out / "run_info.json").write_text('{"dpclaims": "0.1.0"}')
    (out / "stale_figure.png").write_text("from another run")
    r = invoke("check-variant", f"{EXAMPLE}:correct", *SMALL, "--out", out, "--overwrite")
    assert r.exit_code == 0, r.output
    assert (out / "results.json").is_file() and not (out / "stale_figure.png").exists()
    assert (out / ".dpclaims-report").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".o.")]
    # a folder of the user's own files is never replaced (tests/test_output_safety.py)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    r = invoke("check-variant", f"{EXAMPLE}:correct", *SMALL, "--out", tmp_path / "mine",
               "--overwrite")
    assert r.exit_code == 2 and "notes.txt" in one_line(r)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "mine"


# --------------------------------------------------------------------------- 70, 130


def test_70_an_internal_error_is_not_a_verdict(tmp_path, monkeypatch):
    import dpclaims.claims.checks.variant as variant

    def broken(*args, **kwargs):
        raise RuntimeError("an invariant of dpclaims failed")

    monkeypatch.setattr(variant, "check_variant", broken)
    r = invoke("check-variant", f"{EXAMPLE}:correct", *SMALL, "--out", tmp_path / "o")
    assert r.exit_code == 70, r.output
    msg = one_line(r)
    assert "internal error" in msg and "RuntimeError" in msg and "--debug" in msg
    assert not (tmp_path / "o").exists()


def test_130_an_interrupt(tmp_path):
    r = bad_variant(tmp_path, "Interrupted")
    assert r.exit_code == 130 and "interrupted" in one_line(r)
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_130_ctrl_c_in_a_real_process(tmp_path):
    # The SIGINT is sent once a release is running (a flag file, not a fixed sleep: at a
    # high load the CLI may still be loading after seconds). The child gets SIGINT's
    # default disposition: a shell that starts a job in the background (`make test &`)
    # sets it to "ignore", which the child would inherit, and then Ctrl-C does nothing
    # by design of the shell, not of dpclaims.
    flag = tmp_path / "started"
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\nfrom dataclasses import dataclass\nimport numpy as np\n"
        "from pathlib import Path\nfrom dpclaims.audits import PrivacyClaim\n"
        "@dataclass(frozen=True)\nclass Slow:\n    name: str = 'slow'\n"
        "    data: np.ndarray = None\n"
        "    def __post_init__(self):\n"
        "        object.__setattr__(self, 'data', np.arange(4.0).reshape(4, 1))\n"
        "    @property\n    def claim(self):\n        return PrivacyClaim(1.0, 1e-5, "
        "'replace-one')\n"
        f"    def release(self, data, rng, n):\n        Path({str(flag)!r}).touch()\n"
        "        time.sleep(60)\n"
        "        return rng.standard_normal((n, 1))\n")
    proc = subprocess.Popen([sys.executable, "-m", "dpclaims.cli", "check-variant",
                             f"{slow}:Slow", "--out", str(tmp_path / "o")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not flag.exists():  # the audit's releases are running
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 20  # not after the hanging release
    assert "Traceback" not in err and "interrupted" in err
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- small audits


def test_3_an_audit_too_small_to_certify_anything_is_not_checkable(tmp_path):
    """Issue 37 (D9): at 2 trials even an attack without an error certifies nothing above
    the claim (the capacity of bounds.audit_capacity): nothing was checked, exit 3."""
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--n-trials", "2", "--max-examples",
               "10", "--selection-trials", "2", "--out", tmp_path / "o")
    assert r.exit_code == 3, r.output
    v = {x["claim_id"].split("/")[-1]: x for x in
         reading_records(load_results(tmp_path / "o"))}
    audit = v["empirical-audit"]
    assert audit["verdict"] == "not-checkable" and "too small" in audit["sentence"]
    assert audit["evidence"]["basis"]["rule"] == "not-checkable"
    assert audit["evidence"]["audit_capacity"] <= 2.0  # the claimed epsilon


def test_an_audit_that_could_refute_is_checked(tmp_path):
    """The boundary is computed, not a count: at 2,000 trials the capacity is above the
    claim, so the same variant is checked (exit 0, inconclusive)."""
    r = invoke("check-variant", f"{EXAMPLE}:correct", *SMALL, "--out", tmp_path / "o")
    assert r.exit_code == 0, r.output
    v = {x["claim_id"].split("/")[-1]: x for x in
         reading_records(load_results(tmp_path / "o"))}
    assert v["empirical-audit"]["evidence"]["audit_capacity"] > 2.0


# --------------------------------------------------------------------------- one validation


AUDIT_TOML = ('[paper]\ntitle = "T"\n\n[[audit]]\nid = "t/a"\nlocation = "Alg. 1"\n'
              'statement = "Alg. 1 is DP."\nmechanism = "{spec}"\n')


@pytest.mark.parametrize("name, words", [
    ("OutsideDomain", ["outside the declared domain"]),
    ("StringRelease", ["release(data, rng, n=2)", "strings"]),
    ("ComplexRelease", ["complex", "separate real coordinates"]),
    ("RngBelowThreshold", ["does not follow its rng"]),
])
def test_2_check_and_check_variant_refuse_the_same_mechanisms(tmp_path, name, words):
    """Issue 37 (D4): `check`'s [[audit]] entries go through check-variant's validation
    (claims.checks.variant.validated): the same exit 2 and message, no report."""
    cv = bad_variant(tmp_path / "cv", name)
    f = tmp_path / "claims.toml"
    f.write_text(AUDIT_TOML.format(spec=f"{BAD}:{name}"))
    ck = invoke("check", f, *SMALL, "--out", tmp_path / "ck" / "o")
    for r, out in ((cv, tmp_path / "cv" / "o"), (ck, tmp_path / "ck" / "o")):
        assert r.exit_code == 2, r.output
        msg = one_line(r)
        for w in words:
            assert w in msg, msg
        assert not out.exists()


# --------------------------------------------------------------------------- 2: work beyond
# the machine (issue 37, D7b, D13): refused before any work, naming the option or key


def test_2_a_trial_count_beyond_the_machines_memory(tmp_path):
    t0 = time.perf_counter()
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--n-trials", 10**12, "--out",
               tmp_path / "a")
    assert r.exit_code == 2, r.output
    assert "--n-trials" in r.output and "16,000,000,000,000 bytes" in r.output
    assert "physical memory" in r.output
    p = tmp_path / "claims.toml"
    p.write_text('[paper]\ntitle = "T"\n\n[[audit]]\nid = "t/a"\nlocation = "Alg. 1"\n'
                 'statement = "Alg. 1 is 1-DP."\n'
                 'mechanism = "dpclaims.mechanisms:laplace_half_scale"\n')
    r = invoke("check", p, "--n-trials", 10**12, "--out", tmp_path / "b")
    assert r.exit_code == 2, r.output
    assert "--n-trials" in r.output and "physical memory" in r.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert time.perf_counter() - t0 < 30  # refused up front, not after drawing outputs


@pytest.mark.parametrize("kind", ['kind = "box", low = 0.0, high = 1.0',
                                  'kind = "ball", radius = 1.0'])
def test_2_a_record_domain_beyond_the_machines_memory(tmp_path, kind):
    p = tmp_path / "claims.toml"
    p.write_text('[paper]\ntitle = "T"\n\n[[sensitivity]]\nid = "t/s"\nlocation = "Eq. 1"\n'
                 'statement = "s"\nquery = "numpy:sum"\nvalue = 1.0\n'
                 f'domain = {{{kind}, shape = [100000000000]}}\n')
    r = invoke("check", p, "--out", tmp_path / "o")
    assert r.exit_code == 2, r.output
    msg = one_line(r)
    assert "[[sensitivity]] #1 (t/s): domain shape [100000000000]" in msg
    assert "800,000,000,000 bytes" in msg and "physical memory" in msg


def test_2_out_of_memory_is_named_not_a_bug(tmp_path, monkeypatch):
    """Issue 37 (D13): a MemoryError (a size this machine cannot hold) is exit 2 with one
    line saying so, never 'a bug in dpclaims' (70)."""
    import dpclaims.claims.checks.variant as variant

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(variant, "check_variant", no_memory)
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", tmp_path / "o")
    assert r.exit_code == 2, r.output
    assert "needs more memory than this machine has" in one_line(r)
    assert not (tmp_path / "o").exists()
