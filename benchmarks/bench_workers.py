"""Worker processes beside threaded runtimes (issue 40, item 2): speed of 1 against 2
workers on a JAX mechanism (spawned workers), and fork against spawn on plain numpy.

Run: ``.venv/bin/python benchmarks/bench_workers.py [--repeats R] [--part jax|numpy|all]
[--jax-trials N]``
(JAX part needs ``pip install "jax==0.4.30" "jaxlib==0.4.30"``).

Part 1, JAX. A noisy-gradient-descent release written in JAX: each output is T = 40
steps of full-batch gradient descent on a least-squares loss over the dataset's
m = 64 records of d = 16 features, each step's gradient plus N(0, sigma^2) noise, the
final parameters the output (d coordinates); ``jax.vmap`` over the n outputs of a
block, ``jax.jit`` once per block shape, the key from the numpy generator. An audit of
``--jax-trials`` (default 10^6) trials per dataset (blocks of 65,536: 2 x 16 blocks;
one block takes about 2.6 s on one core here, each new block shape a compile of about
3 s in each process) with 1 worker (in this process, XLA's
default threads) and with 2 workers (spawned: JAX is imported, so forking is unsafe;
one compute thread each), alternating, ``--repeats`` times each; every result must be
identical. The ratio is the median 1-worker time over the median 2-worker time of
this run. The workers keep this process's XLA threads (results depend on them);
run once more with ``XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1"`` in the environment for one XLA thread per process,
the 1-worker audit included. ``os.getloadavg()`` is printed before
and after each audit, and the CPU seconds the audit used (this process and its
reaped workers): on a shared machine the other processes' load is what a ratio
cannot control.

Part 2, numpy. A 32-coordinate Gaussian sum (the audit-throughput benchmark's), 10^6
trials: 1 worker; 2 workers forked (the plain case, unchanged); 2 workers spawned
(forced, as if a threaded runtime were loaded), the training outputs in named shared
memory and, for comparison, through the pool's pipe. Results identical everywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime, timezone

import numpy as np

from dpclaims.audits import core
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import PrivacyClaim, replace_one

try:
    from dpclaims.execution.processes import StartMethod
except ImportError:  # an older dpclaims (the comparison with main)
    StartMethod = None

D, M, STEPS, SIGMA, LR = 16, 64, 40, 1.0, 0.1


def _jax_step_fn():
    import jax
    import jax.numpy as jnp

    def one_run(key, x, y):
        def step(theta, k):
            g = x.T @ (x @ theta - y) / x.shape[0]
            return theta - LR * (g + SIGMA * jax.random.normal(k, theta.shape)), None

        theta, _ = jax.lax.scan(step, jnp.zeros(x.shape[1]), jax.random.split(key, STEPS))
        return theta

    return jax.jit(jax.vmap(one_run, in_axes=(0, None, None)))


_FN = []


class JaxNoisyGD:
    """Noisy full-batch gradient descent in JAX (module docstring); outputs (n, D)."""

    name = "jax noisy GD"
    claim = PrivacyClaim(1.0, 1e-5, "replace-one")

    def release(self, data, rng, n):
        import jax
        import jax.numpy as jnp

        if not _FN:
            _FN.append(_jax_step_fn())
        keys = jax.random.split(jax.random.PRNGKey(int(rng.integers(0, 2**31 - 1))), n)
        x, y = jnp.asarray(data[:, :-1]), jnp.asarray(data[:, -1])
        return np.asarray(_FN[0](keys, x, y), dtype=float)


class GaussianSum32:
    """The sum of the data plus N(0, I_32) (the plain numpy case)."""

    name = "gaussian sum 32"
    claim = PrivacyClaim(1.0, 1e-5, "replace-one")

    def release(self, data, rng, n):
        return np.sum(data, axis=0) + rng.standard_normal((n, 32))


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cpu() -> float:
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (
        resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


def _timed(label, fn):
    before, cpu = _load(), _cpu()
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    print(f"  {label:<34} {seconds:8.2f} s  {_cpu() - cpu:8.1f} CPU-s   load {before} -> "
          f"{_load()}", flush=True)
    return seconds, json.dumps(result.to_dict(), sort_keys=True)


def jax_part(repeats: int, trials: int) -> None:
    rng = np.random.default_rng(0)
    base = np.hstack([rng.standard_normal((M, D)), rng.standard_normal((M, 1))])
    other = base[0].copy()
    other[:D] = 3.0
    other[-1] = -3.0
    pair = replace_one(base, 0, other)
    mech = JaxNoisyGD()
    print(f"JAX noisy GD (d={D}, m={M}, T={STEPS}), {trials:,} trials per dataset")
    times = {1: [], 2: []}
    texts = set()
    for r in range(repeats):
        for w in (1, 2):
            s, text = _timed(f"repeat {r}, {w} worker(s)",
                             lambda w=w: audit(mech, pair, trials, seed=0, workers=w))
            times[w].append(s)
            texts.add(text)
    assert len(texts) == 1, "results differ between 1 and 2 workers"
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"  median 1 worker {one:.2f} s, 2 workers {two:.2f} s: speed-up {one / two:.2f}x; "
          "results identical")


def numpy_part(repeats: int) -> None:
    pair = replace_one(np.zeros((5, 32)), 0, np.r_[1.0, np.zeros(31)])
    mech = GaussianSum32()
    print("numpy 32-D Gaussian sum, 10^6 trials per dataset")
    spawn = StartMethod("spawn", "forced by the benchmark")
    rows = {"1 worker": [], "2 workers, fork": [], "2 workers, spawn, shared memory": [],
            "2 workers, spawn, pipe": []}
    texts = set()
    real = core.start_method
    for r in range(repeats):
        for label in rows:
            core.start_method = real if "spawn" not in label else (lambda **kw: spawn)
            core._SPAWN_SHARES_TRAINING = "pipe" not in label
            try:
                s, text = _timed(f"repeat {r}, {label}", lambda label=label: audit(
                    mech, pair, 1_000_000, seed=0, workers=1 if label == "1 worker" else 2))
            finally:
                core.start_method, core._SPAWN_SHARES_TRAINING = real, True
            rows[label].append(s)
            texts.add(text)
    assert len(texts) == 1, "results differ"
    for label, ts in rows.items():
        print(f"  median {label}: {statistics.median(ts):.2f} s")
    print("  results identical")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--part", choices=["jax", "numpy", "all"], default="all")
    parser.add_argument("--jax-trials", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"python {sys.version.split()[0]}, load {_load()}, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
    if args.part in ("numpy", "all"):
        numpy_part(args.repeats)
    if args.part in ("jax", "all"):
        jax_part(args.repeats, args.jax_trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
