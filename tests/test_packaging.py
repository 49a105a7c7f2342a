"""The built wheel installs beside a researcher's stack (issue 13).

The wheel's metadata must state the license, the Pythons and the ranges of
pyproject.toml. Then each install test makes a fresh venv, installs a stack first
and the built wheel after it with plain ``pip install``, and fails if pip moved any
package of that stack; then it runs the CLI from the venv (``--help``, ``account``
against dp_accounting's own DP-SGD figures, ``check-variant`` on the README's
correct and wrong variants, ``check`` on the Abadi et al. claims file, which reads
TOML).

Two stacks: numpy and scipy alone at the lower bounds in pyproject.toml (pip then
chooses every other dependency, newest first), and every runtime dependency at its
lower bound. Marked ``install``: `make test` leaves these out, `make test-install`
runs them (1 to 5 minutes on 2 cores: fresh venvs from PyPI). They skip when PyPI
cannot be reached. ``DPCLAIMS_INSTALL_PYTHON=/path/to/python`` makes the venvs
with another interpreter (default: the one running pytest).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dpclaims.reports.results import load_results, reading_records

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("DPCLAIMS_INSTALL_PYTHON", sys.executable)
# The README's textbook DP-SGD (sigma 1.1, Poisson, N 60,000, B 256, 60 epochs, 1e-5):
# dp_accounting's own figures.
DP_SGD = ["--sigma", "1.1", "--sampling", "poisson", "--dataset-size", "60000",
          "--batch-size", "256", "--epochs", "60", "--delta", "1e-5", "--json"]


def run(*args, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run a command with the venv's environment only (no PYTHONPATH into src/)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def check(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, (f"{' '.join(result.args)} exited {result.returncode}\n"
                                    f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def target_environment(python: str) -> dict[str, str]:
    """The marker environment of ``python`` (its version; the platform is this one)."""
    out = subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    env = dict(default_environment())
    env["python_version"] = ".".join(out.split(".")[:2])
    env["python_full_version"] = out
    return env


def lower_bounds(environment: dict[str, str]) -> dict[str, str]:
    """Each runtime dependency of pyproject.toml that applies in ``environment``,
    mapped to its lower bound.

    Raises
    ------
    ValueError
        If a dependency has no ``>=`` lower bound (it could not be tested at one).
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    bounds = {}
    for line in project["dependencies"]:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate(environment):
            continue
        lows = [s.version for s in req.specifier if s.operator == ">="]
        if len(lows) != 1:
            raise ValueError(f"dependency {line!r} needs exactly one '>=' lower bound")
        bounds[canonicalize_name(req.name)] = lows[0]
    return bounds


def freeze(bin_dir: Path, cwd: Path) -> dict[str, str]:
    out = check(run(bin_dir / "python", "-m", "pip", "list", "--format=json", cwd=cwd))
    return {canonicalize_name(p["name"]): p["version"] for p in json.loads(out)}


def pip_install(bin_dir: Path, *args, cwd: Path) -> None:
    check(run(bin_dir / "python", "-m", "pip", "install", "--quiet", *args, cwd=cwd))


def changed(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {n: (v, after.get(n, "removed")) for n, v in before.items() if after.get(n) != v}


@pytest.fixture(scope="module")
def pypi():
    try:
        urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15).close()
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"PyPI is not reachable ({exc}): cannot install into a fresh venv")


@pytest.fixture(scope="module")
def wheel(pypi, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    check(run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, ROOT,
              cwd=out))
    wheels = sorted(out.glob("dpclaims-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def bounds() -> dict[str, str]:
    return lower_bounds(target_environment(PYTHON))


def fresh_venv(tmp: Path) -> Path:
    check(run(PYTHON, "-m", "venv", tmp / "venv", cwd=tmp))
    return tmp / "venv" / "bin"


def exercise(bin_dir: Path, tmp: Path) -> None:
    """Run the installed CLI: every layer, the accountants, hypothesis, TOML."""
    assert "check-variant" in check(run(bin_dir / "dpclaims", "--help", cwd=tmp))

    out = json.loads(check(run(bin_dir / "dpclaims", "account", *DP_SGD, cwd=tmp)))
    rows = {r["accountant"]: r for r in out["rows"]}
    assert rows["dp_accounting-rdp"]["epsilon"] == pytest.approx(2.597, abs=5e-4)
    assert rows["dp_accounting-pld"]["epsilon"] == pytest.approx(2.382, abs=5e-3)
    assert rows["autodp-rdp"]["epsilon"] == pytest.approx(2.597, abs=5e-3)

    variants = ROOT / "examples" / "variants.py"
    budget = ["--n-trials", "20000", "--max-examples", "100", "--seed", "0"]
    check(run(bin_dir / "dpclaims", "check-variant", f"{variants}:correct", *budget,
              "--out", tmp / "correct", cwd=tmp))
    verdicts = {v["id"]: v["verdict"] for v in
                json.loads((tmp / "correct" / "results.json").read_text())["claims"]}
    # a search certifies no bound: inconclusive; the exact accounting holds
    assert verdicts["clipped-mean (2C/N)/sensitivity"] == "inconclusive", verdicts
    assert verdicts["clipped-mean (2C/N)/accounting"] == "holds", verdicts
    assert "refuted" not in verdicts.values(), verdicts

    wrong = run(bin_dir / "dpclaims", "check-variant", f"{variants}:wrong", *budget,
                "--out", tmp / "wrong", cwd=tmp)
    assert wrong.returncode == 1, wrong.stdout[-3000:] + wrong.stderr[-3000:]
    verdicts = {v["id"]: v["verdict"] for v in
                json.loads((tmp / "wrong" / "results.json").read_text())["claims"]}
    assert verdicts["clipped-mean (C/N)/sensitivity"] == "refuted", verdicts

    # a mixed discrete/continuous output (sparse vector, Alg. 3): `auto` picks gradient
    # boosting, which a plain install must have (scikit-learn is a runtime dependency)
    svt = run(bin_dir / "dpclaims", "check-variant", "dpclaims.mechanisms:svt_alg3",
              "--n-trials", "5000", "--max-examples", "50", "--out", tmp / "svt", cwd=tmp)
    assert svt.returncode in (0, 1), svt.stdout[-3000:] + svt.stderr[-3000:]
    audit = next(v for v in reading_records(load_results(tmp / "svt"))
                 if v["claim_id"].endswith("empirical-audit"))
    assert audit["evidence"]["audit"]["score_name"] == "gradient-boosting"

    claims = run(bin_dir / "dpclaims", "check", ROOT / "examples" / "claims" / "abadi2016.toml",
                 "--seed", "0", "--out", tmp / "check", cwd=tmp)
    assert claims.returncode == 3, claims.stdout[-3000:] + claims.stderr[-3000:]
    assert json.loads((tmp / "check" / "results.json").read_text())["claims"]


def test_wheel_metadata_has_the_license_python_and_ranges(wheel):
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(name).decode())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == project["requires-python"] == ">=3.10"
    requires = [str(Requirement(r)) for r in meta.get_all("Requires-Dist")
                if "extra ==" not in r]
    assert requires == [str(Requirement(r)) for r in project["dependencies"]]


def test_wheel_keeps_numpy_and_scipy_at_their_lower_bounds(wheel, bounds, tmp_path):
    bin_dir = fresh_venv(tmp_path)
    pip_install(bin_dir, f"numpy=={bounds['numpy']}", f"scipy=={bounds['scipy']}",
                cwd=tmp_path)
    before = freeze(bin_dir, tmp_path)
    pip_install(bin_dir, wheel, cwd=tmp_path)
    after = freeze(bin_dir, tmp_path)
    assert (after["numpy"], after["scipy"]) == (bounds["numpy"], bounds["scipy"]), (
        f"pip moved numpy/scipy: {changed(before, after)}")
    assert not changed(before, after)
    check(run(bin_dir / "python", "-m", "pip", "check", cwd=tmp_path))
    exercise(bin_dir, tmp_path)
    # the suite's smoke audit (DP-SEP, the default paper) on the lowest numpy and scipy
    smoke = run(bin_dir / "dpclaims", "audit", "--budget", "smoke", "--seed", "0",
                "--out", tmp_path / "smoke", cwd=tmp_path)
    # exit 1: DP-SEP's claims are refuted (a finding, as in tests/test_cli.py)
    assert smoke.returncode == 1, (f"{' '.join(smoke.args)} exited {smoke.returncode}\n"
                                   f"{smoke.stdout[-3000:]}\n{smoke.stderr[-3000:]}")
    claims = json.loads((tmp_path / "smoke" / "results.json").read_text())["claims"]
    assert {c["id"] for c in claims} >= {"dpsep/prop1-sensitivity", "dpsep/empirical-audit"}


def test_wheel_installs_beside_every_dependency_at_its_lower_bound(wheel, bounds, tmp_path):
    bin_dir = fresh_venv(tmp_path)
    pip_install(bin_dir, *(f"{n}=={v}" for n, v in bounds.items()), cwd=tmp_path)
    before = freeze(bin_dir, tmp_path)
    assert {n: before.get(n) for n in bounds} == bounds
    pip_install(bin_dir, wheel, cwd=tmp_path)
    after = freeze(bin_dir, tmp_path)
    assert not changed(before, after), f"pip moved the researcher's stack: {changed(before, after)}"
    assert after["dpclaims"] == "0.1.0"
    check(run(bin_dir / "python", "-m", "pip", "check", cwd=tmp_path))
    exercise(bin_dir, tmp_path)


def test_lower_bounds_reject_a_dependency_without_one(monkeypatch, tmp_path):
    """Bad input: a dependency with no '>=' bound is named, not silently skipped."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["numpy>=2.0.2", "scipy"]\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(ValueError, match="'scipy'"):
        lower_bounds(dict(default_environment()))


def test_a_paper_package_installs_and_is_audited_by_its_id(wheel, tmp_path):
    """Issue 22: ``pip install ./examples/bs18_expfam`` beside the wheel in a fresh venv
    registers the paper by entry point; one ``dpclaims audit --paper bs18`` writes a
    report with a verdict and evidence for each of its claims."""
    bin_dir = fresh_venv(tmp_path)
    pip_install(bin_dir, wheel, ROOT / "examples" / "bs18_expfam", cwd=tmp_path)
    assert "bs18" in check(run(bin_dir / "dpclaims", "papers", cwd=tmp_path))
    out = tmp_path / "report"
    res = run(bin_dir / "dpclaims", "audit", "--paper", "bs18", "--budget", "smoke",
              "--out", out, cwd=tmp_path)
    assert res.returncode == 1, res.stderr[-3000:]  # the multinomial release is refuted
    data = json.loads((out / "results.json").read_text())
    assert len(data["claims"]) == 7
    assert all(c["readings"] and c["readings"][0]["evidence"] for c in data["claims"])
    assert {c["id"]: c["verdict"] for c in data["claims"]}[
        "bs18/multinomial-release-privacy"] == "refuted"
