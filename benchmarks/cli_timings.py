"""Wall-clock timings of the everyday commands, cold and warm, beside their targets.

    python benchmarks/cli_timings.py [--repeats 3] [--skip-audit] [--make-test] [--record]

What is timed (each a fresh process, as a user runs it):

* ``import dpclaims`` and ``import dpclaims.cli`` (target: under 0.5 s);
* ``dpclaims --help``;
* ``dpclaims check-variant examples/variants.py:correct`` at its default budget;
* ``dpclaims audit --budget smoke`` (DP-SEP) and ``--paper all --budget smoke`` (target:
  under 1 min on 2 cores);
* ``dpclaims audit --paper dpsep --budget quick``, what ``make audit`` runs (target:
  within 3 min on 2 cores), unless ``--skip-audit``;
* ``dpclaims account``: a full-batch event answered exactly (target: under 1 s), the
  same with ``--all-accountants``, and a cached answer (cold: computed; warm: read
  from a cache folder of this run's own; target: under 1 s);
* ``dpclaims check`` on claims files with an error (a string where a number belongs, a
  batch above the dataset size): bad input must answer, exit 2, within 1 s.

*Cold* is the first run after the package's ``__pycache__`` folders are removed (the
bytecode is compiled again; the operating system's file cache is not dropped, which
needs privileges a user does not have); *warm* is the median of ``--repeats`` runs after
it. The machine (cores, Python, platform) and its load average are printed with the
table, so figures from a busy machine read as such. Beside each wall time, the CPU
seconds (user + system) the command's process and its children used (the warm run's;
``resource.getrusage(RUSAGE_CHILDREN)`` before and after): on a loaded machine the wall
time grows with the load, the CPU seconds much less. ``make audit``'s target is 120 CPU
seconds. ``--make-test`` also runs ``make test`` once (target: 400 CPU seconds), last.

``--record`` writes ``src/dpclaims/expected_seconds.json``: the seconds per check of the
audits run here (from their ``run_info.json``), which the CLI's progress line uses for
"check k of N" and its estimate of the time left.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "dpclaims"
DPCLAIMS = str(Path(sys.executable).with_name("dpclaims"))


# Exit codes of a finished check (0 nothing refuted, 1 refuted, 3 not checkable) and of
# bad input (2), which the claims-file error cases expect.
FINISHED, BAD_INPUT = (0, 1, 3), (2,)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: dict[tuple, float] = {}  # CPU seconds of the last run of each command


def run(cmd: list[str], codes=FINISHED) -> float:
    """Seconds of one run of ``cmd`` (its CPU seconds, with its children's, go to
    :data:`CPU`); raises CalledProcessError (with its stderr) on an exit code not in
    ``codes``."""
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    CPU[tuple(cmd)] = _children_cpu() - c0
    if proc.returncode not in codes:
        raise subprocess.CalledProcessError(proc.returncode, cmd, proc.stdout, proc.stderr)
    return seconds


def clear_bytecode() -> None:
    for cache in PACKAGE.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def cold_and_warm(cmd: list[str], repeats: int, codes=FINISHED) -> tuple[float, float]:
    clear_bytecode()
    cold = run(cmd, codes)
    warm = statistics.median(run(cmd, codes) for _ in range(repeats))
    return cold, warm


def record(key: str, run_info: Path) -> None:
    """Write the seconds per check of ``run_info`` (a run_info.json of ``dpclaims audit``)
    as the plan of ``key`` ("paper/budget") in src/dpclaims/expected_seconds.json. For
    ``all/...`` the papers' checks are concatenated in the order they ran; for
    ``dpsep/...`` the DP-SEP part of an ``all`` run is the same list of checks."""
    if "/" not in key:
        raise ValueError(f"key must be paper/budget, got {key!r}")
    timings = json.loads(Path(run_info).read_text())["seconds per check"]
    paper = key.split("/")[0]
    nested = all(isinstance(v, dict) for v in timings.values())
    if paper == "all":
        if not nested:
            raise ValueError(f"{run_info} is not an `audit --paper all` run")
        plan = [[n, s] for part in timings.values() for n, s in part.items()]
    elif nested:
        plan = [[n, s] for n, s in timings[paper].items()]
    else:
        plan = [[n, s] for n, s in timings.items()]
    path = PACKAGE / "expected_seconds.json"
    table = json.loads(path.read_text()) if path.exists() else {"plans": {}}
    table["plans"][key] = plan
    table.setdefault("measured_on", {})[key] = (
        f"{os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{sum(s for _, s in plan):.0f} s in all")
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"recorded {key} ({len(plan)} checks) in {path}")


# CPU-second targets (issue 42): make audit's job and make test
CPU_TARGETS = {"make audit (audit --paper dpsep --budget quick)": 120.0, "make test": 400.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="warm runs per command (median)")
    ap.add_argument("--skip-audit", action="store_true",
                    help="leave out the quick DP-SEP audit (make audit's job, minutes)")
    ap.add_argument("--make-test", action="store_true",
                    help="also run `make test` once (minutes) and report its CPU seconds")
    ap.add_argument("--record", action="store_true",
                    help="write src/dpclaims/expected_seconds.json from the audits run")
    ap.add_argument("--record-from", action="append", default=[], metavar="KEY=RUN_INFO",
                    help="record the plan KEY (e.g. all/quick) from an existing run_info.json "
                         "and exit (nothing is timed)")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.record_from:  # record existing runs only, time nothing
        for spec in args.record_from:
            key, _, path = spec.partition("=")
            record(key, Path(path))
        return 0
    out = Path(tempfile.mkdtemp(prefix="dpclaims-timings-"))
    py = sys.executable
    head = ('[paper]\ntitle = "T"\n[[privacy]]\nid = "t/e"\nlocation = "1"\nstatement = "s"\n'
            'reported_epsilon = 1.2\ndelta = 1e-5\nepochs = 60\n')
    (out / "string.toml").write_text(head + 'noise_multiplier = "1.1"\ndataset_size = 60000\n'
                                     'batch_size = 256\n')
    (out / "batch.toml").write_text(head + 'noise_multiplier = 1.1\ndataset_size = 600\n'
                                    'batch_size = 6000\n')
    over = ["--overwrite"]
    full_batch = ["--sigma", "1", "--sampling", "none", "--steps", "100", "--delta", "1e-5"]
    os.environ["DPCLAIMS_ACCOUNT_CACHE"] = str(out / "account-cache")  # never the user's
    jobs = [
        ("import dpclaims", [py, "-c", "import dpclaims"], 0.5, 1),
        ("import dpclaims.cli", [py, "-c", "import dpclaims.cli"], 0.5, args.repeats),
        ("dpclaims --help", [DPCLAIMS, "--help"], None, args.repeats),
        ("check-variant examples/variants.py:correct (default budget)",
         [DPCLAIMS, "check-variant", "examples/variants.py:correct",
          "--out", str(out / "variant"), *over], None, 1),
        ("audit --budget smoke (DP-SEP, the default paper)",
         [DPCLAIMS, "audit", "--budget", "smoke", "--seed", "0",
          "--out", str(out / "smoke-dpsep"), *over], 60.0, 1),
        ("audit --paper all --budget smoke",
         [DPCLAIMS, "audit", "--paper", "all", "--budget", "smoke", "--seed", "0",
          "--out", str(out / "smoke"), *over], 60.0, 1),
        ("account, 100 full-batch steps (exact, --no-cache)",
         [DPCLAIMS, "account", *full_batch, "--no-cache"], 1.0, args.repeats),
        ("account, the same with --all-accountants (--no-cache)",
         [DPCLAIMS, "account", *full_batch, "--no-cache", "--all-accountants"], None, 1),
        ("account, textbook DP-SGD (warm: the cached answer)",
         [DPCLAIMS, "account", "--sigma", "1.1", "--sampling", "poisson", "--dataset-size",
          "60000", "--batch-size", "256", "--epochs", "60", "--delta", "1e-5"], 1.0,
         args.repeats),
        ("check: a string where a number belongs (exit 2)",
         [DPCLAIMS, "check", str(out / "string.toml"), "--out", str(out / "c1")], 1.0,
         args.repeats, BAD_INPUT),
        ("check: a batch above the dataset size (exit 2)",
         [DPCLAIMS, "check", str(out / "batch.toml"), "--out", str(out / "c2")], 1.0,
         args.repeats, BAD_INPUT),
    ]
    if not args.skip_audit:
        jobs.append(("make audit (audit --paper dpsep --budget quick)",
                     [DPCLAIMS, "audit", "--paper", "dpsep", "--budget", "quick", "--seed",
                      "0", "--out", str(out / "quick"), *over], 180.0, 0, FINISHED))
    if args.make_test:
        jobs.append(("make test", ["make", "test"], None, 0, (0,)))
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}; load average before: {os.getloadavg()[0]:.2f}")
    rows = []
    for label, cmd, target, repeats, *codes in jobs:
        codes = codes[0] if codes else FINISHED
        if repeats:
            cold, warm = cold_and_warm(cmd, repeats, codes)
        else:  # minutes long: one run, bytecode already compiled by the runs above
            cold, warm = float("nan"), run(cmd, codes)
        ok = "" if target is None else ("yes" if warm <= target else "NO")
        cpu = CPU[tuple(cmd)]
        cpu_target = CPU_TARGETS.get(label)
        cpu_ok = "" if cpu_target is None else ("yes" if cpu <= cpu_target else "NO")
        rows.append((label, cold, warm, target, ok, cpu, cpu_target, cpu_ok))
        print(f"  {label}: cold {cold:.2f} s, warm {warm:.2f} s, {cpu:.1f} CPU-s "
              f"(load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print("| command | cold (s) | warm (s) | target (s) | within | CPU-s | CPU-s target "
          "| within |")
    print("|---|---|---|---|---|---|---|---|")
    for label, cold, warm, target, ok, cpu, cpu_target, cpu_ok in rows:
        t = "-" if target is None else f"{target:g}"
        c = "-" if cold != cold else f"{cold:.2f}"
        ct = "-" if cpu_target is None else f"{cpu_target:g}"
        print(f"| {label} | {c} | {warm:.2f} | {t} | {ok or '-'} | {cpu:.1f} | {ct} "
              f"| {cpu_ok or '-'} |")
    if args.record:
        for key, folder in (("all/smoke", "smoke"), ("dpsep/quick", "quick")):
            if (out / folder / "run_info.json").exists():
                record(key, out / folder / "run_info.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
