"""Issue 41, item 2: the README's sequences run in order as typed.

Each command's default output folder is its own, ``reports/<command>-<name>``:
``check-variant ...:correct`` then ``...:wrong``, ``check abadi2016.toml`` then
``tramer2021.toml``, ``audit --paper all`` after ``make audit`` (``audit --paper dpsep``)
do not collide; rerunning a command replaces its own earlier report without
``--overwrite``; another command's folder, and a folder with the user's own files, are
never touched; an explicit ``--out`` keeps its rules (replaced only with
``--overwrite``). Each test runs in a fresh working folder. check-variant runs for real
at a small budget; the claims files' checks and the papers' runs are stubbed (their
verdicts are tested elsewhere: tests/test_user_claims.py, tests/test_cli.py) so the
file stays within seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpclaims.cli import main
from dpclaims.reports.output import MARKER, report_owner

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ROOT / "examples" / "variants.py"
CLAIMS = ROOT / "examples" / "claims"
SMALL = ["--n-trials", "2000", "--max-examples", "20"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def folders() -> list[str]:
    return sorted(p.name for p in Path("reports").iterdir())


def meta(folder) -> dict:
    return json.loads((Path(folder) / "results.json").read_text())["meta"]


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def stubbed(monkeypatch):
    """The claims files' checks and the papers' runs replaced by one toy verdict each
    (not-checkable for a claims file, holds for a paper)."""
    import dpclaims.claims.checks.user_claims as user_claims
    import dpclaims.claims.registry as registry
    from dpclaims.claims import Claim
    from dpclaims.claims.kernel import Bound, Claimed, decide, not_checkable

    def check_claims_file(spec, budget, seed=0, tick=lambda name: None):
        claim = Claim("stub/eps", spec["paper"], "Sec. 1", "epsilon = 1", "stub",
                      kind="privacy-number")
        return ([not_checkable(claim, "as printed", "the number of steps")], [],
                {"paper": spec["paper"]})

    def run_papers(papers, budget, seed, staging, *args, **kwargs):
        claim = Claim("stub/mean", "Stub", "Sec. 1", "mean <= 1", "exact", kind="identity")
        b = Bound(0.5, "exact mean", basis="exact")
        return ([decide(claim, "as printed", Claimed("mean", 1.0), lower=b, upper=b,
                        seed=seed, budget=budget)], [], {"budget": budget}, {})

    monkeypatch.setattr(user_claims, "check_claims_file", check_claims_file)
    monkeypatch.setattr(registry, "run_papers", run_papers)


def test_check_variant_correct_then_wrong_then_correct_again(cwd):
    r = invoke("check-variant", f"{VARIANTS}:correct", *SMALL)
    assert r.exit_code == 0, r.output
    r = invoke("check-variant", f"{VARIANTS}:wrong", *SMALL)
    assert r.exit_code == 1, r.output
    assert folders() == ["check-variant-variants-correct", "check-variant-variants-wrong"]
    before = (cwd / "reports/check-variant-variants-wrong/results.json").read_text()
    # the same command again replaces its own report, without --overwrite
    r = invoke("check-variant", f"{VARIANTS}:correct", *SMALL, "--seed", "1")
    assert r.exit_code == 0, r.output
    assert meta("reports/check-variant-variants-correct")["seed"] == 1
    assert (cwd / "reports/check-variant-variants-wrong/results.json").read_text() == before
    assert report_owner("reports/check-variant-variants-correct") == {
        "command": "check-variant", "name": "variants-correct"}
    assert folders() == ["check-variant-variants-correct", "check-variant-variants-wrong"]


def test_check_one_claims_file_then_another_then_the_first_again(cwd, stubbed):
    for name in ("abadi2016", "tramer2021", "abadi2016"):
        r = invoke("check", CLAIMS / f"{name}.toml")
        assert r.exit_code == 3, r.output
        assert f"reports/check-{name}" in r.output
    assert folders() == ["check-abadi2016", "check-tramer2021"]


def test_audit_all_after_make_audit_and_make_audit_again(cwd, stubbed):
    for paper in ("dpsep", "all", "dpsep"):  # make audit: audit --paper dpsep
        r = invoke("audit", "--paper", paper, "--budget", "quick", "--seed", "0")
        assert r.exit_code == 0, r.output
    r = invoke("audit", "--budget", "smoke")  # the default paper: its own folder again
    assert r.exit_code == 0, r.output
    assert folders() == ["audit-all", "audit-dpsep"]
    assert meta("reports/audit-dpsep")["budget"] == "smoke"
    assert meta("reports/audit-all")["budget"] == "quick"


def test_another_commands_folder_and_the_users_files_are_never_touched(cwd, stubbed):
    # a check-variant report written, by --out, where check's default folder is
    r = invoke("check-variant", f"{VARIANTS}:correct", *SMALL, "--out",
               "reports/check-abadi2016")
    assert r.exit_code == 0, r.output
    mark = (cwd / "reports/check-abadi2016" / MARKER).read_text()
    r = invoke("check", CLAIMS / "abadi2016.toml")
    assert r.exit_code == 2
    assert "a report of `dpclaims check-variant` for variants-correct" in r.stderr
    assert "--overwrite" in r.stderr
    assert (cwd / "reports/check-abadi2016" / MARKER).read_text() == mark
    # the user's own file in a default folder: refused, even with --overwrite
    own = cwd / "reports" / "audit-dpsep"
    own.mkdir()
    (own / "notes.txt").write_text("mine")
    for extra in ([], ["--overwrite"]):
        r = invoke("audit", *extra)
        assert r.exit_code == 2, r.output
        assert (own / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in own.iterdir()) == ["notes.txt"]


def test_an_explicit_out_keeps_its_rules(cwd, stubbed):
    r = invoke("audit", "--out", "mine")
    assert r.exit_code == 0, r.output
    assert report_owner("mine") == {"command": "audit", "name": "dpsep"}
    r = invoke("audit", "--out", "mine")  # the same command, but --out given: refused
    assert r.exit_code == 2 and "--overwrite" in r.stderr
    r = invoke("audit", "--out", "mine", "--overwrite")
    assert r.exit_code == 0, r.output
    assert not Path("reports").exists()  # no default folder made on the side


def test_default_folder_names():
    from dpclaims.cli import _default_out, _variant_name

    assert _variant_name("examples/variants.py:correct") == "variants-correct"
    assert _variant_name("dpclaims.mechanisms:svt_alg4") == "mechanisms-svt_alg4"
    assert _variant_name("examples/algorithms.py:dpvi_aligned") == "algorithms-dpvi_aligned"
    owner, out, own = _default_out("audit", "my paper/v2", None)
    assert out == Path("reports/audit-my-paper-v2") and own
    assert owner == {"command": "audit", "name": "my-paper-v2"}
    assert _default_out("audit", "dpsep", Path("x")) == (
        {"command": "audit", "name": "dpsep"}, Path("x"), False)


def test_the_readme_and_make_audit_name_each_commands_own_folder():
    """Every README command line that names its report folder (``# exit N ->
    reports/X/``) names the command's default folder, no two the same; ``make audit``
    runs the audit into its default folder and says so."""
    import re
    import shlex

    from dpclaims.cli import _default_out, _variant_name

    seen = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        m = re.match(r"^\$? ?dpclaims (.*?)\s+# exit (\d+) -> (reports/[^/\s]+)/", line)
        if not m:
            continue
        args = shlex.split(m.group(1))
        if args[0] == "audit":
            name = args[args.index("--paper") + 1] if "--paper" in args else "dpsep"
        elif args[0] == "check":
            name = Path(args[1]).stem
        else:
            assert args[0] == "check-variant", line
            name = _variant_name(args[1])
        folder = str(_default_out(args[0], name, None)[1])
        assert folder == m.group(3), line
        assert seen.setdefault(folder, args) == args, f"two commands write {folder}"
    assert len(seen) >= 6
    make = (ROOT / "Makefile").read_text()
    audit = make[make.index("\naudit:"):make.index("\n\n", make.index("\naudit:"))]
    assert "dpclaims audit --paper dpsep" in audit and "--out" not in audit
    assert "reports/audit-dpsep/" in audit and "source $(VENV)/bin/activate" in audit
