"""Worker processes that are safe beside threaded libraries, and never hang silently.

Which start method (:func:`start_method`)
-----------------------------------------
``fork`` copies the parent's memory but only its calling thread: a thread pool the
parent's libraries had started is gone in the child while their locks and state say it
is there, and the child's first use of it can wait forever. This is what hung an audit
of a JAX algorithm with ``--workers 2`` (issue 40: 300 s, no output). The rule:

* **fork** where the platform has it (not macOS, whose system libraries are not
  fork-safe and where Python's own default is spawn), no threaded runtime is imported
  (:data:`THREADED_MODULES`: JAX, PyTorch, TensorFlow, which start their thread pools
  on import or on first use) and no OpenMP runtime has started its threads. An OpenMP
  runtime that is only loaded is no hazard: GNU libgomp starts its pool at the first
  parallel region, and scikit-learn loads libgomp on import without running one. It has
  started them when this process runs more OS threads (``/proc/self/task``) than it has
  Python threads plus the pool threads of the OpenBLAS libraries loaded (OpenBLAS's
  pool is fork-safe: a ``pthread_atfork`` handler shuts it down before ``fork`` and it
  starts again when next used, which is how the suite's numpy audits have always
  forked; threadpoolctl reports each library's ``internal_api`` and thread count).
  Fork keeps the plain numpy case as fast as it was: workers start in milliseconds and
  write the training outputs into memory they inherit.
* A started OpenMP pool is a hazard only for a child that runs a parallel region on
  more than one thread: GNU libgomp (scikit-learn's) has no fork handler, so the
  child's libgomp believes the parent's pool threads exist and a team of two or more
  waits for them forever, while a team of one never touches the pool. Checked on this
  project's stack: after a ``HistGradientBoostingClassifier`` fit in the parent, a
  forked child's fit hung (killed after 20 s), and the same fit under
  ``threadpool_limits(1, "openmp")`` finished. An audit's forked workers then run
  OpenMP on one thread (``one_thread=True``, :attr:`StartMethod.limit_openmp`), so for
  them a started OpenMP pool does not prevent fork; and the run does not change where it
  runs (or require a picklable mechanism) because an earlier check fitted a
  classifier. A check run by
  :class:`~dpclaims.execution.CheckTimer` runs OpenMP at full width (BLAS on one thread
  when checks run in several processes), so for it a started pool does.
* **spawn** otherwise: a fresh interpreter that inherits no thread. The objects the
  workers need are pickled to them (they must be importable: defined at module level
  of a module the worker can import, or of a file loaded by ``check-variant``, which
  the worker loads again by its path; see :func:`pickle_for_workers`).
  ``forkserver`` was not chosen: its server is forked from the parent once, on first
  use, which is unsafe by the same rule if a threaded runtime is loaded by then, and
  it saves nothing over spawn for pools that live as long as an audit.

Every choice is recorded (:func:`record_start`, :func:`starts_used`): the CLI writes
them into ``run_info.json``, with the reason.

Threads in the workers (:func:`limit_worker_threads`)
-----------------------------------------------------
A worker computes as this process would, so that the audit's result does not depend on
where its blocks run. Each worker runs one BLAS thread (threadpoolctl; as since issue
23: two workers on two cores had run four BLAS threads). Other libraries keep the
thread settings this process has, because their thread count can change their
results: XLA with ``--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``
gave float32 outputs one ulp away from XLA's default on blocks of 2 and 3,392 runs of
a vmapped noisy gradient descent (not on blocks of 65,536), which moved an audit's
threshold and AUROC in the tenth digit. To run JAX on one thread per worker without
that, set those flags in ``XLA_FLAGS`` for the whole run (this process included):
spawned workers inherit the environment. The exception is a forked worker in a
process whose OpenMP pool has started: it runs OpenMP on one thread, the price of not
hanging (an OpenMP-parallel release may then round differently from one worker's).

Lost workers (:class:`WorkerLostError`, :func:`collect`)
--------------------------------------------------------
A worker that stops answering is reported, never waited for silently: while a run waits
for its blocks, ``timeout`` seconds in which none of them came back raise
:class:`WorkerLostError` (the CLI exits 69 with one line naming the timeout and the
worker count), and so does a worker process that died (``BrokenProcessPool``). The
pool's processes are then terminated (:func:`stop_pool`).

Work whose length is not known beforehand (a check run in a forked process by
:class:`~dpclaims.execution.CheckTimer`, DP-SEP's Thm. 4.1 jobs) is judged by its CPU
time instead (:class:`CpuProgress`): a process that answers nothing and uses less than
half a CPU-second (a twentieth of a shorter timeout) in the worker timeout (600 s unless
``--worker-timeout`` says otherwise) is waiting for something that will not come (the
fork hang above leaves its child asleep on a lock) and is reported the same way; one
that computes is waited for.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import io
import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

#: Modules whose runtime starts threads (on import or on first use): once one is
#: imported in this process, workers are spawned, never forked.
THREADED_MODULES = ("jax", "jaxlib", "torch", "tensorflow")

#: The least default worker timeout, seconds (:func:`default_worker_timeout`).
MIN_WORKER_TIMEOUT = 600.0

#: The default timeout is this many times the probe's time per output x a block's size.
TIMEOUT_FACTOR = 20


class WorkerLostError(RuntimeError):
    """A worker process stopped answering (no block came back within the timeout) or
    died. The CLI exits 69 (:data:`~dpclaims.claims.headline.EXIT_CLUSTER_LOST`, "a worker
    or the Dask cluster lost mid-run") with this one line; no report is written."""


@dataclass(frozen=True)
class StartMethod:
    """How worker processes start: ``method`` ("fork" or "spawn") and why;
    ``limit_openmp``: forked workers must run OpenMP on one thread (this process's
    OpenMP pool has started)."""

    method: str
    reason: str
    limit_openmp: bool = False

    def to_dict(self) -> dict:
        return {"method": self.method, "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.method} ({self.reason})"


def start_method(one_thread: bool = False) -> StartMethod:
    """The start method for worker processes made now (module docstring).

    Parameters
    ----------
    one_thread : bool, default False
        The workers can run OpenMP on one thread (an audit's block workers can): a
        started OpenMP pool in this process is then no reason to spawn, and the result
        says ``limit_openmp``.

    Returns
    -------
    StartMethod
        ``"fork"`` or ``"spawn"``, with the reason in words.

    Notes
    -----
    Decided anew at each call, from this process's state: ``sys.modules`` (a module of
    :data:`THREADED_MODULES`, or a submodule, imported), threadpoolctl's
    ``threadpool_info()`` (an ``openmp`` runtime loaded) and the number of OS threads
    (Linux's ``/proc/self/task``). A few milliseconds.
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        return StartMethod("spawn", "this platform has no fork")
    if sys.platform == "darwin":
        return StartMethod("spawn", "macOS: its system libraries are not fork-safe "
                                    "(Python's default there is spawn)")
    loaded = sorted({name.split(".")[0] for name in list(sys.modules)
                     if name.split(".")[0] in THREADED_MODULES})
    if loaded:
        return StartMethod("spawn", f"{', '.join(loaded)} imported in this process: its "
                                    "runtime's threads would not survive a fork")
    started = openmp_threads_started()
    if started and not one_thread:
        return StartMethod("spawn", started)
    if started:
        return StartMethod("fork", f"{started}, but the workers run OpenMP on one thread, "
                                   "which never uses that pool", limit_openmp=True)
    return StartMethod("fork", "no threaded runtime (JAX, PyTorch, TensorFlow, a started "
                               "OpenMP pool) in this process")


def openmp_threads_started() -> str | None:
    """Why forking is unsafe because of an OpenMP runtime, or None when none is loaded
    or the loaded one has started no threads (module docstring)."""
    from threadpoolctl import threadpool_info

    info = threadpool_info()
    openmp = [i for i in info if i.get("internal_api") == "openmp"]
    if not openmp:
        return None
    names = ", ".join(sorted({os.path.basename(i.get("filepath", "?")) for i in openmp}))
    native = native_thread_count()
    if native is None:
        return f"an OpenMP runtime ({names}) is loaded and this platform cannot count threads"
    blas_pool = sum(max(int(i.get("num_threads") or 1) - 1, 0) for i in info
                    if i.get("internal_api") == "openblas")
    unexplained = native - threading.active_count() - blas_pool
    if unexplained <= 0:
        return None
    return (f"an OpenMP runtime ({names}) is loaded and this process runs {unexplained} "
            "thread(s) started outside Python and OpenBLAS: its pool has started")


def native_thread_count() -> int | None:
    """The OS threads of this process (Linux's ``/proc/self/task``), or None where they
    cannot be counted."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


# --------------------------------------------------------------------------- records

_STARTS: dict[tuple, int] = {}


def record_start(what: str, start: StartMethod, workers: int) -> None:
    """Record that ``workers`` processes for ``what`` were started with ``start``."""
    key = (what, start.method, start.reason, int(workers))
    _STARTS[key] = _STARTS.get(key, 0) + 1


def reset_starts() -> None:
    """Forget the starts recorded so far (a command's start)."""
    _STARTS.clear()


def starts_used() -> list[dict]:
    """Every distinct start recorded in this process (:func:`record_start`), in order:
    ``{"what", "method", "reason", "workers", "times"}`` (for ``run_info.json``)."""
    return [{"what": w, "method": m, "reason": r, "workers": n, "times": k}
            for (w, m, r, n), k in _STARTS.items()]


# --------------------------------------------------------------------------- spawn

def pickle_for_workers(obj) -> tuple[bytes, list[tuple[str, str]]]:
    """``obj`` pickled for a spawned worker, and the files the worker must load first.

    Returns
    -------
    payload : bytes
    sources : list of (str, str)
        ``(module name, file)`` of each module the pickle refers to that the worker
        could not import by name (a file loaded by path, e.g. ``check-variant
        FILE.py:OBJECT``): :func:`load_for_worker` executes it under the same name.

    Raises
    ------
    Exception
        Whatever ``pickle`` raises for an object that does not pickle (a lambda, a
        local class or function, an open handle): the caller names the object.
    """
    modules: set[str] = set()

    class _Recorder(pickle.Pickler):
        def reducer_override(self, o):
            modules.add(getattr(o, "__module__", None))
            modules.add(getattr(type(o), "__module__", None))
            return NotImplemented

    buffer = io.BytesIO()
    _Recorder(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    sources = []
    for name in sorted(m for m in modules if isinstance(m, str)):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if name == "__main__" or "." in name or module is None or file is None:
            continue  # spawn loads __main__ itself; a package's module imports by name
        if importlib.machinery.PathFinder.find_spec(name) is None:
            sources.append((name, file))
    return buffer.getvalue(), sources


def load_for_worker(payload: bytes, sources: list[tuple[str, str]]):
    """In a spawned worker: load ``sources`` (:func:`pickle_for_workers`) under their
    names, then unpickle ``payload``."""
    import importlib.util

    for name, file in sources:
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return pickle.loads(payload)


def one_blas_thread():
    """threadpoolctl's limiter of every loaded BLAS library to one thread: in effect from
    this call until its ``restore_original_limits()``, or for a ``with`` block. For work
    whose processes already fill the cores (further BLAS threads spin while they wait
    for one); a BLAS thread count does not change a product's value here (OpenBLAS
    splits a product's output between threads, not its sums)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def limit_worker_threads(openmp: bool = False):
    """In a worker: one BLAS thread (and one OpenMP thread with ``openmp``); other
    libraries keep this process's settings (module docstring). Returns threadpoolctl's
    limiters (keep them alive)."""
    from threadpoolctl import threadpool_limits

    limits = [one_blas_thread()]
    if openmp:
        limits.append(threadpool_limits(limits=1, user_api="openmp"))
    return limits


def worker_signals() -> None:
    """In a spawned worker: Ctrl-C is the parent's to handle (it terminates the pool);
    the worker ignores SIGINT instead of printing a traceback of its own."""
    import signal

    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


# --------------------------------------------------------------------------- timeouts

_TIMEOUT: list[float | None] = [None]


def default_worker_timeout(seconds_per_output: float, block_size: int) -> float:
    """The default worker timeout: ``max(600 s, 20 x seconds_per_output x block_size)``.

    ``seconds_per_output``: what the audit's probe took per output (its first calls, so
    with any compilation: an overestimate). A block of ``block_size`` outputs is then
    expected to take at most ``seconds_per_output x block_size``; twenty times that, and
    never less than ten minutes (a spawned worker's start, imports and a JIT compile
    included), is a wait no working worker needs and that a user notices.
    """
    per = max(float(seconds_per_output), 0.0)
    return max(MIN_WORKER_TIMEOUT, TIMEOUT_FACTOR * per * int(block_size))


def check_worker_timeout(seconds) -> float | None:
    """``seconds`` as a positive finite float (None passes).

    Raises
    ------
    ValueError
        Not a number, not finite, or <= 0, naming the value.
    """
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise ValueError(f"worker_timeout must be a number of seconds, got {seconds!r}") \
            from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"worker_timeout must be a positive finite number of seconds, "
                         f"got {seconds!r}")
    return value


@contextlib.contextmanager
def worker_timeout(seconds: float | None):
    """Within the block, runs that are not given a worker timeout use ``seconds``
    (the CLI's ``--worker-timeout``); None leaves the default."""
    previous = _TIMEOUT[0]
    _TIMEOUT[0] = check_worker_timeout(seconds)
    try:
        yield
    finally:
        _TIMEOUT[0] = previous


def current_worker_timeout() -> float | None:
    """The timeout set by :func:`worker_timeout`, or None."""
    return _TIMEOUT[0]


class CpuProgress:
    """Whether processes still compute: their CPU time grew since the last time it did.

    ``pids()`` gives the processes' ids at each call (a pool's may change); their CPU
    time is user + system, with that of their running descendants and of the children
    they waited for (psutil). A process that
    has ended counts no more. :meth:`advanced` is True when the total grew by at least
    ``min_cpu`` seconds since it was last True (or since the object was made): so a
    process asleep on a lock, which wakes for a few milliseconds now and then, does
    not count as working.

    Raises
    ------
    ValueError
        ``min_cpu`` not positive.
    """

    def __init__(self, pids, min_cpu: float = 0.5):
        if not min_cpu > 0:
            raise ValueError(f"min_cpu must be a positive number of seconds, got {min_cpu!r}")
        self._pids, self.min_cpu = pids, float(min_cpu)
        self._mark = self.cpu_seconds()

    @classmethod
    def for_timeout(cls, pids, timeout: float) -> CpuProgress:
        """The progress that keeps a wait of ``timeout`` seconds going: half a CPU-second,
        or a twentieth of the timeout if less (so a short timeout on a loaded machine
        does not take a process that gets a sliver of a core for one asleep)."""
        return cls(pids, min_cpu=min(0.5, float(timeout) / 20))

    def cpu_seconds(self) -> float:
        """The processes' CPU seconds now (user + system, with waited-for children)."""
        import psutil

        gone = (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess)
        total = 0.0
        for pid in self._pids():
            try:
                process = psutil.Process(pid)
                family = [process, *process.children(recursive=True)]
            except gone:
                continue
            for member in family:  # a check may run its own pool: its workers compute
                try:
                    t = member.cpu_times()
                except gone:
                    continue
                total += t.user + t.system + t.children_user + t.children_system
        return total

    def advanced(self) -> bool:
        """True when the CPU time grew by ``min_cpu`` since it last did."""
        now = self.cpu_seconds()
        if now - self._mark >= self.min_cpu:
            self._mark = now
            return True
        return False


def _pool_processes(pool) -> list:
    """A ``ProcessPoolExecutor``'s worker processes (none before it starts)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def pool_pids(pool) -> list[int]:
    """The process ids of a ``ProcessPoolExecutor``'s workers (none before it starts)."""
    return [p.pid for p in _pool_processes(pool) if p.pid is not None]


def collect(futures: list, timeout: float, workers: int, what: str = "block",
            hint: str = "", started=None, busy=None) -> Iterator:
    """The results of ``futures`` in order; never waits silently.

    ``started``: None (the workers are running: forked), or a callable that says whether
    a worker has started (a spawned worker imports its modules and unpickles its objects
    first, seconds under load): until then the clock does not run, for at most
    ``max(timeout, 600 s)``.

    ``busy``: None (``timeout`` counts from the last future that came back: the audit's
    blocks, whose length the probe predicts), or a callable that says whether the
    workers computed since it was last asked (:meth:`CpuProgress.advanced`): then the
    clock restarts whenever they did, so ``timeout`` is the time without a result and
    without CPU use (work of unknown length).

    Raises
    ------
    WorkerLostError
        ``timeout`` seconds passed in which none of the futures still running finished,
        a spawned pool did not start, or a worker process died (``BrokenProcessPool``).
        The message names the timeout and the worker count.
    """
    pending = set(futures)
    poll = min(float(timeout), 1.0)
    t0 = last = time.monotonic()
    for f in futures:
        while not f.done():
            done, _ = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
            now = time.monotonic()
            if done:
                pending -= done
                last = now
                continue
            if started is not None and not started():
                if now - t0 > max(timeout, MIN_WORKER_TIMEOUT):
                    raise WorkerLostError(
                        f"a worker was lost: none of the {workers} spawned worker "
                        f"processes started within {max(timeout, MIN_WORKER_TIMEOUT):g} s "
                        "(the worker timeout); the workers were terminated and no report "
                        f"was written{hint}")
                last = now  # the clock runs from the workers' start
                continue
            if busy is not None and busy():
                last = now
                continue
            if now - last >= timeout:
                idle = "" if busy is None else " and none of them used CPU"
                raise WorkerLostError(
                    f"a worker was lost: no {what} came back from the {workers} worker "
                    f"processes{idle} within the worker timeout of {timeout:g} s (a worker "
                    "stopped answering); the workers were terminated and no report was "
                    "written. Rerun with --workers 1, or a longer --worker-timeout if the "
                    f"{what}s are that slow")
        try:
            yield f.result()
        except BrokenProcessPool as exc:
            raise WorkerLostError(
                f"a worker was lost: one of the {workers} worker processes died while "
                f"running a {what} ({exc}); the workers were terminated and no report was "
                f"written{hint}. Rerun with --workers 1 to see the error") from exc


def stop_pool(pool, wait_for_workers: bool) -> None:
    """Shut ``pool`` (a ``ProcessPoolExecutor``) down: as usual when ``wait_for_workers``
    (every task has come back), else its processes are terminated first (a run that
    failed, was interrupted, or lost a worker)."""
    if not wait_for_workers:
        _terminate(pool)
    pool.shutdown(wait=wait_for_workers, cancel_futures=True)
    if not wait_for_workers:  # a worker the pool started while it was being stopped
        _terminate(pool)


def _terminate(pool) -> None:
    """Terminate the pool's processes and wait up to 10 s for them to end."""
    processes = _pool_processes(pool)
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    deadline = time.monotonic() + 10
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(max(0.0, deadline - time.monotonic()))
