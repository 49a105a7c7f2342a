"""Issue 37: what the CLI leaves behind at every ending. ``--overwrite`` replaces only a
dpclaims report (never the user's own files); an --out that cannot be renamed into
place is refused up front; a second run into the same --out fails fast on its lock;
SIGTERM ends like Ctrl-C (exit 143, no staging folder, no lock); a reader of stdout that
stops early (``| head -1``) leaves the exit code the run earned; a data cache path that
is a file is bad input; computed text with "[" is printed, not taken for markup."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpclaims.analysis.validation import InputError
from dpclaims.cli import main
from dpclaims.reports.output import MARKER, StagedOutput, foreign_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "variants.py"
SMALL = ["--n-trials", "2000", "--max-examples", "20"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line(result) -> str:
    err = [line for line in result.stderr.splitlines() if line.startswith("dpclaims:")]
    assert "Traceback" not in result.stderr, result.stderr
    assert len(err) == 1, result.stderr
    return err[0]


def leftovers(parent: Path, name: str = "o") -> list[str]:
    """Staging folders, set-aside folders and locks of --out ``parent/name``."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def legacy_report(folder: Path) -> None:
    """A report folder as dpclaims wrote it before the marker file existed."""
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"schema_version": 1, "claims": []}))
    (folder / "run_info.json").write_text(json.dumps({"dpclaims": "0.1.0"}))
    (folder / "report.md").write_text("# old")
    (folder / "stale_figure.png").write_text("from another run")


# --------------------------------------------------------------------------- D17 --overwrite


def test_overwrite_refuses_a_folder_of_the_users_own_files(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", out, "--overwrite")
    assert r.exit_code == 2, r.output
    msg = one_line(r)
    assert str(out) in msg and "notes.txt" in msg and "not part of a dpclaims report" in msg
    assert (out / "notes.txt").read_text() == "my notes"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert leftovers(tmp_path) == []


def test_overwrite_refuses_a_report_the_user_added_a_file_to(tmp_path):
    out = tmp_path / "o"
    legacy_report(out)
    (out / "sub").mkdir()
    (out / "sub" / "mine.csv").write_text("1,2")
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", out, "--overwrite")
    assert r.exit_code == 2 and "sub" in one_line(r)
    assert (out / "sub" / "mine.csv").read_text() == "1,2"
    assert leftovers(tmp_path) == []


def test_foreign_file_reads_the_marker(tmp_path):
    (tmp_path / "empty").mkdir()
    assert foreign_file(tmp_path / "empty") is None
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "results.json").write_text("{}")
    (rep / "fig.png").write_text("x")
    assert foreign_file(rep) is not None  # no marker, no run_info: not a report
    (rep / MARKER).write_text(json.dumps({"dpclaims": "x", "files": ["results.json"]}))
    assert foreign_file(rep) is not None  # not dpclaims's signature
    staged = StagedOutput(tmp_path / "new")
    (staged.staging / "results.json").write_text("{}")
    (staged.staging / "figs").mkdir()
    (staged.staging / "figs" / "a.png").write_text("x")
    staged.commit()
    assert foreign_file(tmp_path / "new") is None
    (tmp_path / "new" / "figs" / "b.png").write_text("the user's")
    assert foreign_file(tmp_path / "new") == tmp_path / "new" / "figs" / "b.png"


def test_overwrite_replaces_an_earlier_report_and_an_empty_folder(tmp_path):
    out = tmp_path / "o"
    legacy_report(out)
    staged = StagedOutput(out, overwrite=True)
    with staged as staging:
        (staging / "results.json").write_text("{}")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "results.json"]
    assert leftovers(tmp_path) == []
    with StagedOutput(out, overwrite=True) as staging:  # its own marker: replaced again
        (staging / "report.md").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "report.md"]
    empty = tmp_path / "e"
    empty.mkdir()
    with StagedOutput(empty) as staging:
        (staging / "results.json").write_text("{}")
    assert (empty / "results.json").is_file() and leftovers(tmp_path, "e") == []


def test_a_file_added_during_the_run_is_kept(tmp_path):
    out = tmp_path / "o"
    legacy_report(out)
    staged = StagedOutput(out, overwrite=True)
    with pytest.raises(InputError, match="notes.txt"):
        with staged as staging:
            (staging / "results.json").write_text("{}")
            (out / "notes.txt").write_text("mine")
    assert (out / "notes.txt").read_text() == "mine" and (out / "report.md").is_file()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("where", ["cwd", "dot", "parent", "root"])
def test_an_out_that_cannot_be_renamed_is_refused_up_front(tmp_path, monkeypatch, where):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    out = {"cwd": work, "dot": Path("."), "parent": Path(".."), "root": Path("/")}[where]
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", out, "--overwrite")
    assert r.exit_code == 2, r.output
    msg = one_line(r)
    assert f"--out {out}" in msg and ("current folder" in msg or "root" in msg), msg
    assert os.listdir(work) == [] and sorted(os.listdir(tmp_path / "a")) == ["b"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions")
def test_an_out_whose_parent_is_not_writable_is_refused(tmp_path):
    parent = tmp_path / "ro"
    (parent / "o").mkdir(parents=True)
    parent.chmod(0o555)
    try:
        r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", parent / "o")
    finally:
        parent.chmod(0o755)
    assert r.exit_code == 2 and "not writable" in one_line(r)
    assert os.listdir(parent) == ["o"]


# --------------------------------------------------------------------------- D17 the lock


def test_a_second_run_into_the_same_out_fails_fast(tmp_path):
    out = tmp_path / "o"
    first = StagedOutput(out)  # holds the lock, as a running audit does
    assert leftovers(tmp_path) == sorted([".o.lock", first.staging.name])
    t0 = time.perf_counter()
    r = invoke("check-variant", f"{EXAMPLE}:correct", "--out", out)
    assert r.exit_code == 2 and time.perf_counter() - t0 < 5
    assert f"another dpclaims run is writing to {out} (pid {os.getpid()})" in one_line(r)
    assert leftovers(tmp_path) == sorted([".o.lock", first.staging.name])
    first.discard()
    assert leftovers(tmp_path) == [] and not out.exists()


def test_the_lock_is_released_at_every_ending(tmp_path):
    out = tmp_path / "o"
    with pytest.raises(RuntimeError):
        with StagedOutput(out):
            raise RuntimeError("a crash")
    assert leftovers(tmp_path) == []
    out.mkdir()
    (out / "x").write_text("x")
    with pytest.raises(InputError, match="already holds files"):
        StagedOutput(out)
    assert leftovers(tmp_path) == []
    with pytest.raises(InputError, match="not part of a dpclaims report"):
        StagedOutput(out, overwrite=True)
    assert leftovers(tmp_path) == []


def test_a_stale_lock_does_not_block(tmp_path):
    (tmp_path / ".o.lock").write_text("999999999\n")  # a killed run's: no flock held
    with StagedOutput(tmp_path / "o") as staging:
        assert (tmp_path / ".o.lock").read_text() == f"{os.getpid()}\n"
        (staging / "results.json").write_text("{}")
    assert leftovers(tmp_path) == [] and (tmp_path / "o" / "results.json").is_file()


# --------------------------------------------------------------------------- D18 SIGTERM

SLOW = """
import os, time
from dataclasses import dataclass
import numpy as np
from dpclaims.audits import PrivacyClaim

@dataclass(frozen=True)
class Slow:
    name: str = "slow"
    data: np.ndarray = None

    def __post_init__(self):
        object.__setattr__(self, "data", np.arange(4.0).reshape(4, 1))

    @property
    def claim(self):
        return PrivacyClaim(1.0, 1e-5, "replace-one")

    def release(self, data, rng, n):
        if n > 10:  # the audit's trials (not the probe of its output shape): say so, hang
            open(os.path.join({flags!r}, str(os.getpid())), "w").close()
            time.sleep(60)
        return rng.standard_normal((n, 1))
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM to a child process")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_143_sigterm_removes_the_staging_folder_and_the_lock(tmp_path, workers):
    # workers 2: the releases hang in a process pool's workers, which must not be waited
    # for (60 s) nor print anything
    flags = tmp_path / "started"
    flags.mkdir()
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW.format(flags=str(flags)))
    proc = subprocess.Popen([sys.executable, "-m", "dpclaims.cli", "check-variant",
                             f"{slow}:Slow", "--workers", workers, "--out",
                             str(tmp_path / "o")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV)
    deadline = time.monotonic() + 60
    while not any(flags.iterdir()):  # the audit's releases are running
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    assert [n for n in leftovers(tmp_path) if n.startswith(".o.partial-")]
    assert (tmp_path / ".o.lock").read_text() == f"{proc.pid}\n"
    started = {int(p.name) for p in flags.iterdir()}
    assert (proc.pid in started) == (workers == "1")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert time.monotonic() - t0 < 20  # not after the hanging releases
    assert "Traceback" not in err and err.count("terminated") == 1, err
    assert leftovers(tmp_path) == [] and not (tmp_path / "o").exists()
    time.sleep(0.5)
    for pid in started:  # no worker left behind
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# --------------------------------------------------------------------------- D15 a closed pipe


def closed_pipe_run(*args) -> subprocess.CompletedProcess:
    """The CLI with its stdout a pipe whose reader has already gone (``| head -0``):
    every write to it fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "dpclaims.cli", *map(str, args)],
                              stdout=write, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120)
    finally:
        os.close(write)


def quiet(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, \
        proc.stderr
    assert "internal error" not in proc.stderr and "BrokenPipe" not in proc.stderr, \
        proc.stderr


@pytest.mark.parametrize("args", [
    ["account", "--sigma", "1", "--sampling", "none", "--steps", "10", "--delta", "1e-5"],
    ["account", "--sigma", "1", "--sampling", "none", "--steps", "10", "--delta", "1e-5",
     "--json"],
    ["data", "list"],
    ["data", "list", "--json"],
    ["papers"],
])
def test_a_closed_stdout_exits_0_quietly(args):
    r = closed_pipe_run(*args)
    assert r.returncode == 0, r.stderr
    quiet(r)


def test_a_closed_stdout_after_a_check_exits_with_its_verdicts(tmp_path):
    claims = tmp_path / "claims.toml"  # not checkable: no dataset size (exit 3)
    claims.write_text('[paper]\ntitle = "T"\n\n[[privacy]]\nid = "t/e"\nlocation = "S 1"\n'
                      'statement = "eps"\nreported_epsilon = 2.0\ndelta = 1e-5\n'
                      'noise_multiplier = 1.1\nbatch_size = 256\nepochs = 60\n')
    r = closed_pipe_run("check", claims, "--out", tmp_path / "o")
    assert r.returncode == 3, r.stderr
    quiet(r)
    assert (tmp_path / "o" / "results.json").is_file() and leftovers(tmp_path) == []


def test_head_reads_one_line(tmp_path):
    # the probe's case: a reader that takes one line, then closes its end
    proc = subprocess.Popen([sys.executable, "-m", "dpclaims.cli", "data", "list"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    assert proc.stdout.readline().startswith(b"data cache ")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


# --------------------------------------------------------------------------- D14 the data cache


@pytest.mark.parametrize("under", [False, True])
def test_a_data_cache_that_is_a_file(tmp_path, monkeypatch, under):
    from dpclaims.data.fetch import cache_dir, check_cache_folder, resolve_data_dir, status

    blocker = tmp_path / "file"
    blocker.write_text("x")
    path = blocker / "sub" if under else blocker
    monkeypatch.setenv("DPCLAIMS_DATA_CACHE", str(path))
    for fn in (cache_dir, lambda: resolve_data_dir(None), lambda: status(None)):
        with pytest.raises(InputError, match=r"\$DPCLAIMS_DATA_CACHE") as info:
            fn()
        assert str(path) in str(info.value)
    with pytest.raises(InputError, match="--cache"):
        check_cache_folder(path, "--cache")
    assert check_cache_folder(tmp_path / "new" / "folder") == tmp_path / "new" / "folder"
    r = invoke("data", "list")
    assert r.exit_code == 2 and "$DPCLAIMS_DATA_CACHE" in one_line(r)
    assert str(path) in one_line(r) and ("under the file" in one_line(r)) == under
    r = invoke("audit", "--out", tmp_path / "o")
    assert r.exit_code == 2 and "$DPCLAIMS_DATA_CACHE" in one_line(r)
    assert not (tmp_path / "o").exists() and leftovers(tmp_path) == []
    monkeypatch.delenv("DPCLAIMS_DATA_CACHE")
    r = invoke("data", "list", "--cache", blocker / "sub")
    assert r.exit_code == 2 and "(from --cache)" in one_line(r)
    assert blocker.read_text() == "x"


# --------------------------------------------------------------------------- D21 markup


def test_account_prints_no_lower_bound_in_brackets():
    # a hidden shuffle: only upper-bound accountants run, so the bracket has no lower end
    r = invoke("account", "--sigma", "1", "--sampling", "shuffle", "--dataset-size", "1000",
               "--batch-size", "100", "--epochs", "1", "--delta", "1e-5")
    assert r.exit_code == 0, r.output
    line = [x for x in r.stdout.splitlines() if x.startswith("certified bracket")]
    assert len(line) == 1
    assert line[0].startswith("certified bracket on the true epsilon: [no lower bound, ")
    assert line[0].endswith(")]"), line  # "..., 4.37718 (analytic-gaussian)]", one line
