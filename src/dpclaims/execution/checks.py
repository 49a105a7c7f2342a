"""The checks' runner: :class:`CheckTimer` runs a report's checks, timing each, in this
process, in forked processes (``workers`` > 1, where forking is safe) or on a Dask
cluster (``client``).

It knows no claim and no verdict: a check is any function of no arguments whose value
can be pickled, and the caller assembles the values in a fixed order. Moved here from
``dpclaims.claims.core`` (issue 39), where the name still imports, with a warning.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import time
import traceback

from dpclaims.analysis.validation import InputError
from dpclaims.execution.processes import (
    MIN_WORKER_TIMEOUT,
    CpuProgress,
    StartMethod,
    WorkerLostError,
    current_worker_timeout,
    limit_worker_threads,
    one_blas_thread,
    record_start,
    start_method,
)

_LOG = logging.getLogger(__name__)


class CheckTimer:
    """Runs a report's checks, announcing each and timing it.

    ``timer(name, fn)`` calls ``progress(name)`` (the CLI's progress line), runs ``fn()``
    and records its wall time in ``timer.timings[name]`` (seconds, one decimal). Timings
    go to run_info.json, never into results.json (they are not determined by the seed).

    ``timer.start(name, fn)`` runs ``fn()`` in a forked child process while the caller
    goes on (when ``workers`` > 1; otherwise at once, as ``timer(name, fn)``) and returns
    a handle whose ``result()`` is ``fn()``'s value (an exception in the child is raised
    again in the parent). A check's value depends only on its own seed, so results are
    the same whatever ``workers`` is; the caller assembles them in a fixed order.
    ``fn`` may be a closure (fork needs no pickling of it); its value is pickled back.
    Where forking is unsafe (:func:`~dpclaims.execution.start_method` says spawn: JAX,
    PyTorch, TensorFlow or a started OpenMP pool in this process, or no fork on this
    platform) the check runs here at once instead, since a closure cannot be sent to a
    spawned process; ``timer.in_process`` then holds the reason (also logged, and
    recorded for ``run_info.json`` by
    :func:`~dpclaims.execution.processes.record_start`).

    With a ``client`` (a ``dask.distributed.Client``, ``dpclaims audit --scheduler``)
    ``timer.start`` submits ``fn()`` to the Dask cluster instead (``workers`` is then not
    used) and ``result()`` gathers it; the timing is the worker's. ``fn`` is pickled with
    cloudpickle at once: a check that cannot be pickled raises :class:`InputError`
    naming it (it is not run locally instead: where a check runs is never changed
    silently). A check running on a Dask worker must not start processes of its own
    (the workers are daemonic): give it ``workers=1`` and no client.

    With ``workers`` > 1 every check runs one BLAS thread, in this process
    (:func:`~dpclaims.execution.processes.one_blas_thread` for the check's length)
    and in a forked one (which, with the pools a check forks, inherits the limit): the
    checks' processes fill the cores, and each BLAS thread beyond one would wait for a
    busy core (OpenBLAS's threads spin while they wait). DP-SEP's quick audit with 2
    workers writes results.json byte for byte as before (docs/benchmarks.md). With
    ``workers`` = 1 the checks run BLAS at full width.

    A forked check is never waited for silently: ``result()`` raises
    :class:`~dpclaims.execution.WorkerLostError` (the CLI exits 69) when the check's
    process neither answered nor used half a CPU-second in the worker timeout (600 s, or
    ``--worker-timeout``; :class:`~dpclaims.execution.processes.CpuProgress`), and
    terminates it. A check that computes is waited for however long it takes.

    Raises
    ------
    InputError
        From ``start`` with a client: ``fn`` cannot be pickled.
    WorkerLostError
        From ``result()``: a forked check stopped answering (above).
    """

    def __init__(self, progress=None, workers: int = 1, client=None):
        self.progress = progress or (lambda name: None)
        self.timings: dict[str, float] = {}
        self.workers = int(workers)
        self.client = client
        self._handles: list[_Handle] = []
        #: Why checks given to ``start`` ran in this process although ``workers`` > 1
        #: (forking unsafe), or None.
        self.in_process: str | None = None

    def __call__(self, name: str, fn):
        self.progress(name)
        t0 = time.perf_counter()
        with self._threads():
            value = fn()
        self.timings[name] = round(time.perf_counter() - t0, 1)
        return value

    def start(self, name: str, fn) -> _Handle:
        import multiprocessing

        if self.client is not None:
            return self._submit(name, fn)
        method = start_method() if self.workers > 1 else None
        if method is not None:
            self._record(method)
        if method is None or method.method != "fork":
            try:  # at once; an error is raised by result(), as from a second process
                return _Handle(value=self(name, fn))
            except Exception as exc:  # noqa: BLE001  (re-raised by result())
                return _Handle(error=exc)
        self.progress(name)
        self.timings[name] = None  # keeps the order of the checks; filled by result()
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)

        def child():
            t0 = time.perf_counter()
            limits = limit_worker_threads()  # noqa: F841  (kept alive for the check)
            try:
                send.send(("ok", fn(), round(time.perf_counter() - t0, 1)))
            except BaseException as exc:  # noqa: BLE001  (re-raised in the parent)
                send.send(("error", _portable(exc), traceback.format_exc()))

        process = ctx.Process(target=child, name=f"dpclaims check: {name}")
        process.start()
        send.close()
        handle = _Handle(process=process, receive=receive, timer=self, name=name,
                         timeout=current_worker_timeout() or MIN_WORKER_TIMEOUT)
        self._handles.append(handle)
        return handle

    def _threads(self):
        """One BLAS thread for a check run here while other processes run checks
        (``workers`` > 1; the class docstring), else nothing."""
        if self.workers > 1 and self.client is None:
            return one_blas_thread()
        return contextlib.nullcontext()

    def _record(self, method: StartMethod) -> None:
        """Record where the checks run (the first time, and whenever it changes)."""
        reason = None if method.method == "fork" else method.reason
        if reason is not None and reason != self.in_process:
            _LOG.warning("checks run in this process, not in %d forked ones: forking is "
                         "unsafe (%s)", self.workers, reason)
        self.in_process = reason
        record_start("checks" if reason is None else
                     "checks (run in this process: forking is unsafe)", method, self.workers)

    def _submit(self, name: str, fn) -> _Handle:
        """``fn()`` as a task on the Dask cluster of ``self.client``."""
        import uuid

        import cloudpickle

        try:  # here, so that a closure that does not pickle is named at once
            payload = cloudpickle.dumps(fn)
        except Exception as exc:  # noqa: BLE001  (any pickling failure)
            raise InputError(
                f"the check {name!r} cannot be sent to the Dask cluster: its function does "
                f"not pickle ({type(exc).__name__}: {exc}); run the audit without "
                "--scheduler") from exc
        self.progress(name)
        self.timings[name] = None  # keeps the order of the checks; filled by result()
        future = self.client.submit(_run_on_worker, payload, name, pure=False,
                                    key=f"dpclaims-check-{name}-{uuid.uuid4().hex}")
        handle = _Handle(future=future, timer=self, name=name)
        self._handles.append(handle)
        return handle

    def close(self) -> None:
        """Stop the checks started in other processes whose results were never collected
        (the caller failed first): without this a child blocked writing a large result
        to its pipe and the parent waiting for it at exit would wait for each other."""
        for handle in self._handles:
            handle.cancel()

    def __enter__(self) -> CheckTimer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _run_on_worker(payload: bytes, name: str):
    """The task of a check sent to a Dask worker by :meth:`CheckTimer.start`: unpickle
    the check, run it; return ``(value, seconds)``. A check that does not unpickle there
    (its module is not installed on the worker) raises :class:`InputError` naming it."""
    t0 = time.perf_counter()
    try:
        fn = pickle.loads(payload)
    except Exception as exc:  # noqa: BLE001  (named for the user)
        raise InputError(
            f"the check {name!r} does not load on the Dask worker ({type(exc).__name__}: "
            f"{exc}): every worker needs dpclaims and the paper's package installed") from exc
    return fn(), round(time.perf_counter() - t0, 1)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RuntimeError naming its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class _Handle:
    """The value of a check started by :meth:`CheckTimer.start`."""

    def __init__(self, value=None, error=None, process=None, receive=None, timer=None,
                 name=None, future=None, timeout: float = MIN_WORKER_TIMEOUT):
        self._value, self._error = value, error
        self._process, self._receive = process, receive
        self._timer, self._name = timer, name
        self._future = future
        self._timeout = float(timeout)

    def _wait(self) -> None:
        """Wait until the check's process has answered or ended; raise
        :class:`WorkerLostError` (and terminate it) once it has been silent and idle for
        the timeout."""
        process = self._process
        progress = CpuProgress.for_timeout(lambda: [process.pid], self._timeout)
        last = time.monotonic()
        while not self._receive.poll(min(1.0, self._timeout)):
            if not process.is_alive():
                return
            now = time.monotonic()
            if progress.advanced():
                last = now
            elif now - last >= self._timeout:
                lost = WorkerLostError(
                    f"a worker was lost: the check {self._name!r}, run in a forked "
                    f"process, neither answered nor used CPU within the worker timeout of "
                    f"{self._timeout:g} s (it stopped answering); it was terminated and no "
                    "report was written. Rerun with --workers 1 to run the checks here")
                self.cancel()
                self._error = lost  # raised again by every later result()
                raise lost

    def result(self):
        """The check's value; its exception (from either process, or from the Dask worker)
        is raised again, and on every later call too."""
        if self._future is not None:
            future, self._future = self._future, None
            try:
                self._value, self._timer.timings[self._name] = future.result()
            except Exception as exc:  # noqa: BLE001  (re-raised below, named)
                if hasattr(exc, "add_note"):
                    exc.add_note(f"in the check {self._name!r}, run on the Dask cluster")
                self._error = exc
        if self._process is not None:
            self._wait()
            try:
                status, value, extra = self._receive.recv()
            except EOFError:
                status, value, extra = "error", RuntimeError(
                    f"the check {self._name!r} died in its process"), ""
            self._process.join()
            self._receive.close()
            self._process = None
            if status == "ok":
                self._value = value
                self._timer.timings[self._name] = extra
            else:
                if hasattr(value, "add_note") and extra:
                    value.add_note(f"in the check {self._name!r}, run in a second process:\n"
                                   + extra)
                self._error = value
        if self._error is not None:
            raise self._error
        return self._value

    def cancel(self) -> None:
        """Terminate the check's process (or cancel its Dask task) if its result was not
        collected."""
        if self._future is not None:
            self._future.cancel()
            self._future = None
            self._error = RuntimeError(f"the check {self._name!r} was cancelled")
        if self._process is not None:
            self._process.terminate()
            self._process.join()
            self._receive.close()
            self._process = None
            self._error = RuntimeError(f"the check {self._name!r} was cancelled")
