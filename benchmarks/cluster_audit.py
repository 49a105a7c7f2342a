"""An audit of every paper run locally and on a two-worker Dask cluster, alternating.

    python benchmarks/cluster_audit.py [--budget standard] [--seed 0] [--repeats 1]
                                       [--paper all] [--data-dir DIR]

Starts a ``distributed.LocalCluster`` of 2 single-threaded worker processes (needs
``pip install 'dpclaims[dask]'``), then runs ``dpclaims audit --paper all --budget
BUDGET --seed SEED`` as a user does (a fresh process each time) ``--repeats`` times
each way, alternating: locally with ``--workers 2``, then with ``--scheduler`` at the
cluster. Prints each run's wall time with the load average (1 min) before and after
it, the median of each way and their ratio (local / cluster: above 1 means the cluster
run is faster), and checks that every run's ``results.json`` is byte-identical to the
first one's (exit 1 otherwise).

The cluster's workers run on this machine, beside the run's own process, so this
measures the overhead of the cluster (task submission, pickling, the workers' own
imports) and what moves to it, not a gain from more cores. The accounting memo
(``DPCLAIMS_ACCOUNTING_MEMO``) is unset for the runs and the workers, so that no run
reuses another's accounting.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FINISHED = (0, 1, 3)  # nothing refuted, refuted, not checkable: the audit ran


def audit(args, out: Path, extra: list[str]) -> tuple[float, float, float]:
    """One ``dpclaims audit`` in a fresh process: (seconds, load before, load after)."""
    cmd = [sys.executable, "-m", "dpclaims.cli", "audit", "--paper", args.paper, "--budget",
           args.budget, "--seed", str(args.seed), "--out", str(out), *extra]
    if args.data_dir:
        cmd += ["--data-dir", str(args.data_dir)]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode not in FINISHED:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return seconds, load0, os.getloadavg()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", default="standard",
                        choices=["smoke", "quick", "standard", "full"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paper", default="all")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each way (alternating local, cluster)")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    try:
        from distributed import LocalCluster
    except ImportError:
        parser.error("needs the dask extra: pip install 'dpclaims[dask]'")

    os.environ.pop("DPCLAIMS_ACCOUNTING_MEMO", None)  # for the runs and the workers
    print(f"{os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}; audit --paper {args.paper} --budget {args.budget} "
          f"--seed {args.seed}")
    rows, results = [], []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cluster-audit-") as tmp, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster:
        print(f"LocalCluster: 2 workers x 1 thread at {cluster.scheduler_address}, started "
              f"in {time.perf_counter() - t0:.1f} s\n")
        ways = {"local (--workers 2)": ["--workers", "2"],
                "cluster (2 workers)": ["--scheduler", cluster.scheduler_address]}
        for k in range(args.repeats):
            for way, extra in ways.items():
                out = Path(tmp) / f"run-{len(rows)}"
                seconds, before, after = audit(args, out, extra)
                rows.append((way, seconds, before, after))
                results.append((out / "results.json").read_bytes())
                print(f"{way:<20} run {k + 1}: {seconds:7.1f} s   load average "
                      f"{before:.2f} before, {after:.2f} after", flush=True)
    median = {way: statistics.median(s for w, s, *_ in rows if w == way) for way in ways}
    local, remote = median.values()
    print(f"\nmedian wall time: local {local:.1f} s, cluster {remote:.1f} s; "
          f"local / cluster = {local / remote:.2f}")
    same = all(r == results[0] for r in results)
    print(f"results.json byte-identical in all {len(results)} runs: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
