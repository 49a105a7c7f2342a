"""Paper audits on a Dask cluster: ``dpclaims audit --scheduler ADDRESS``.

:func:`connect` gives a ``dask.distributed.Client`` of the scheduler at an address, or
:class:`InputError` (exit 2) naming the address; :func:`check_workers` makes sure every
worker can give the results a local run gives. What runs on the cluster is the papers'
decision, through :class:`~dpclaims.claims.paper.RunContext`'s ``client``: the checks
started with :meth:`CheckTimer.start <dpclaims.execution.checks.CheckTimer.start>`, a
paper that runs beside the others, DP-SEP's Thm. 4.1 grid, and the trial blocks of
the audits given ``client=`` (:func:`dpclaims.audits.core.audit`). Every check draws
from its own seed, so ``results.json`` is byte-identical to a local run with the same
seed and budget, given the same versions everywhere (which :func:`check_workers`
checks).

The checks sent to the workers get their data inside the task (the papers load it
here), but write their figures into the run's output folder at the path this process
uses: the output folder (``--out``) must be on a file system every worker shares at
the same path (:func:`check_workers` refuses the run otherwise).

A cluster that fails mid-run (its scheduler gone, workers dying while they run a
task) is neither bad input nor a bug of dpclaims: :func:`lost_cluster` recognises it
and the command exits with :data:`~dpclaims.claims.headline.EXIT_CLUSTER_LOST` (69) and
one line (:class:`ClusterLostError`); no report is written.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import platform
import traceback
from importlib import metadata
from pathlib import Path

from dpclaims.analysis.validation import InputError
from dpclaims.execution.user_code import exception_chain

INSTALL = "pip install 'dpclaims[dask]'"


class ClusterLostError(RuntimeError):
    """The Dask cluster failed while a run used it (the CLI exits
    :data:`~dpclaims.claims.headline.EXIT_CLUSTER_LOST`, 69, with this one line)."""


def connect(address: str, timeout: float | None = None):
    """A ``dask.distributed.Client`` of the scheduler at ``address``, with a worker.

    Parameters
    ----------
    address : str
        The scheduler's address, ``tcp://HOST:PORT`` (``dask scheduler`` listens on
        port 8786), or ``HOST:PORT``.
    timeout : float, optional
        Seconds to wait for the scheduler's answer, and then for a worker; default
        Dask's connection timeout (``distributed.comm.timeouts.connect``, 30 s unless
        configured, e.g. ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``).

    Returns
    -------
    dask.distributed.Client
        Not set as Dask's default client; close it (a context manager) when done.

    Raises
    ------
    InputError
        ``distributed`` is not installed; ``address`` is malformed; nothing answers at
        it within ``timeout``, or what answers is not a Dask scheduler; the scheduler
        has no worker within ``timeout``. One line naming the address.
    """
    try:
        import dask
        from dask.utils import parse_timedelta
        from distributed import Client
        from distributed.comm import get_address_host_port
        from distributed.comm.addressing import normalize_address
    except ImportError as exc:
        raise InputError(f"--scheduler {address}: running on a Dask cluster needs the "
                         f"dask extra ({exc}); {INSTALL}") from exc
    try:
        get_address_host_port(normalize_address(address))
    except ValueError as exc:
        raise InputError(f"--scheduler {address!r} is not a Dask scheduler's address "
                         f"({exc}); give tcp://HOST:8786") from exc
    if timeout is None:
        timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s")
    how = (f"start one with `dask scheduler` and workers with `dask worker {address}` "
           f"({INSTALL} on every machine), or run without --scheduler")
    try:  # a hard deadline: Client() itself can wait forever on a port that is not Dask
        identity = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout + 1))
    except Exception as exc:  # noqa: BLE001  (refused, timed out, not Dask: all the same)
        why = str(exc) or f"no answer within {timeout:g} s"
        raise InputError(f"no Dask scheduler answers at {address} ({why}); {how}") from exc
    if not isinstance(identity, dict) or identity.get("type") != "Scheduler":
        kind = identity.get("type") if isinstance(identity, dict) else type(identity).__name__
        raise InputError(f"--scheduler {address} is a Dask {kind}, not a scheduler; {how}")
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"cannot connect to the Dask scheduler at {address} "
                         f"({type(exc).__name__}: {exc}); {how}") from exc
    try:
        client.wait_for_workers(1, timeout=timeout)
    except Exception as exc:  # noqa: BLE001  (a TimeoutError)
        client.close()
        raise InputError(f"the Dask scheduler at {address} has no worker after {timeout:g} "
                         f"s; start some with `dask worker {address} --nthreads 1` "
                         f"({INSTALL})") from exc
    return client


async def _identity(address: str, timeout: float) -> dict:
    from distributed.core import rpc

    async with rpc(address, timeout=timeout) as scheduler:
        return await asyncio.wait_for(scheduler.identity(), timeout)


def check_workers(client, folder) -> dict:
    """Check that every worker of ``client`` gives the results a local run gives; describe
    the cluster for run_info.json.

    Each worker connected now must run the same Python, the same dpclaims source and the
    same versions of dpclaims' dependencies as this process (otherwise results.json
    would not be byte-identical to a local run's), and must be able to write to
    ``folder`` (the run's staging folder) at the same path: checks run on the workers
    write their figures there.

    Parameters
    ----------
    client : dask.distributed.Client
    folder : path
        The run's output (staging) folder, an absolute path that exists here.

    Returns
    -------
    dict
        ``{"address", "workers", "threads"}``: the scheduler's address, the number of
        workers and their threads in all.

    Raises
    ------
    InputError
        A worker that cannot import dpclaims, differs in a version or the source, or
        cannot write to ``folder``, naming the worker and the difference.
    ClusterLostError
        The cluster failed while its workers were checked (:func:`lost_cluster`).
    """
    folder = str(Path(folder).resolve())
    address = client.scheduler.address
    here = worker_facts(None)
    try:
        there = client.run(worker_facts, folder)
    except Exception as exc:  # noqa: BLE001  (the worker's import or pickling error)
        what = lost_cluster(client, exc)
        if what is not None:
            raise ClusterLostError(f"the Dask cluster at {address} failed while its workers "
                                   f"were checked ({what}); no report was written") from exc
        raise InputError(f"the Dask workers of {address} cannot run "
                         f"dpclaims ({type(exc).__name__}: {exc}); install it with the same "
                         f"versions on every worker ({INSTALL})") from exc
    for worker, facts in sorted(there.items()):
        if not facts.pop("writes the output folder"):
            raise InputError(
                f"the Dask worker {worker} cannot write to this run's output folder {folder}: "
                "checks run on the workers write their figures there, so --out must be on "
                "a file system every worker shares at the same path")
        for key in sorted(set(here) | set(facts)):
            if here.get(key) != facts.get(key):
                raise InputError(
                    f"the Dask worker {worker} has {key} {facts.get(key)}, this machine "
                    f"{here.get(key)}: results.json would not be byte-identical to a local "
                    "run's; install the same versions on every worker (requirements.lock)")
    info = client.scheduler_info()
    workers = info.get("workers", {})
    return {"address": client.scheduler.address, "workers": len(workers),
            "threads": sum(int(w.get("nthreads", 0)) for w in workers.values())}


def lost_cluster(client, exc: BaseException) -> str | None:
    """Whether ``exc``, raised by a run that used ``client``, means the cluster failed.

    Parameters
    ----------
    client : dask.distributed.Client
        The run's client (:func:`connect`).
    exc : BaseException
        What the run raised.

    Returns
    -------
    str or None
        One line saying what failed (the exception's type and message, and for a
        ``KilledWorker`` that the task itself may be the cause) when ``exc`` or an
        exception it was raised from or during is Dask's sign of a failed cluster: a
        closed connection (``CommClosedError``) or client (``ClosedClientError``),
        futures the scheduler cancelled (``FutureCancelledError``,
        ``FuturesCancelledError``: Dask cancels every pending future the moment the
        connection to the scheduler drops), a task whose workers kept dying
        (``KilledWorker``: ``distributed.scheduler.allowed-failures`` of them died
        running it); or when the client has closed (it gives up reconnecting after
        ``distributed.comm.timeouts.connect``) and the exception was raised inside
        Dask's own code (a call on the closed client). None otherwise, and always
        for :class:`InputError`: an exception of dpclaims or of the user's code, here
        or raised on a worker (Dask raises it again with the worker's traceback),
        keeps its meaning (a bug, exit 70, or bad input, exit 2), also after the
        client has closed.
    """
    from distributed.client import (
        ClosedClientError,
        FutureCancelledError,
        FuturesCancelledError,
    )
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    if isinstance(exc, InputError):
        return None
    chain = exception_chain(exc)
    dask_failures = (CommClosedError, ClosedClientError, FutureCancelledError,
                     FuturesCancelledError, KilledWorker)
    failed = next((e for e in chain if isinstance(e, dask_failures)), None)
    if failed is None and getattr(client, "status", "running") in ("closing", "closed"):
        failed = next((e for e in chain if _raised_in_dask(e)), None)
    if failed is None:
        return None
    what = " ".join(f"{type(failed).__name__}: {failed}".split())
    if isinstance(failed, KilledWorker):
        what += ("; the task itself may be the cause (memory, a crash in native code): see "
                 "the workers' logs")
    return what


def _raised_in_dask(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc``'s traceback is in the ``distributed``
    package (an exception re-raised from a worker carries the worker's frames)."""
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    module = frames[-1].f_globals.get("__name__", "") if frames else ""
    return module == "distributed" or module.startswith("distributed.")


def worker_facts(folder: str | None) -> dict:
    """What a worker's results depend on: the Python version, a SHA-256 of dpclaims' own
    source files and the versions of its installed dependencies; with ``folder``, also
    whether this process can write to it (key ``"writes the output folder"``). Run on
    every worker by :func:`check_workers`."""
    import dpclaims

    root = Path(dpclaims.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    facts = {"Python": platform.python_version(), "dpclaims": dpclaims.__version__,
             "dpclaims source (SHA-256)": digest.hexdigest()[:16]}
    for name in _dependencies():
        try:
            facts[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            facts[name] = "not installed"
    if folder is not None:
        facts["writes the output folder"] = os.path.isdir(folder) and os.access(folder,
                                                                                os.W_OK)
    return facts


def _dependencies() -> list[str]:
    """The names of dpclaims' runtime dependencies (its metadata; none when dpclaims is
    not installed, only on the path)."""
    try:
        requires = metadata.requires("dpclaims") or []
    except metadata.PackageNotFoundError:
        return []
    names = []
    for req in requires:
        if "extra ==" in req:
            continue
        name = req.split(";")[0].strip()
        for stop in "<>=!~[ (":
            name = name.split(stop)[0]
        names.append(name.strip())
    return sorted(set(names))
