"""Paper audits on a Dask cluster (``dpclaims audit --scheduler``): checks sent to the
workers and back, DPVIm's audit blocks, the workers checked before any work, and bad
input (a scheduler that does not answer, no ``distributed``) as one line and exit 2.

The cluster is the ``dask_client`` fixture (tests/conftest.py: a ``LocalCluster`` of two
single-threaded worker processes); the tests that need it skip when ``distributed`` is
not installed. The end-to-end test (DP-SEP's claims whose checks run on the cluster, a
smoke audit of them on the cluster, give the local smoke run's claim records and sections
JSON for JSON) is in tests/test_cli.py, beside the local smoke run it compares with.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from dpclaims.claims import CheckTimer, InputError
from dpclaims.cli import main


def _fails():
    raise InputError("missing data file x.csv")


def test_check_timer_sends_checks_to_the_cluster(dask_client):
    offset = 3                                   # a closure: pickled with cloudpickle
    with CheckTimer(workers=1, client=dask_client) as timer:
        where = timer.start("where", lambda: (os.getpid(), offset + 1))
        bad = timer.start("bad", _fails)
        (pid, value) = where.result()
        for _ in range(2):                       # raised again, as its own type
            with pytest.raises(InputError, match="missing data file"):
                bad.result()
    assert value == 4 and pid != os.getpid()     # it ran in a worker process
    assert list(timer.timings) == ["where", "bad"] and timer.timings["where"] is not None


def test_a_check_that_does_not_pickle_is_named(dask_client):
    lock = threading.Lock()
    with pytest.raises(InputError, match=r"the check 'locked' cannot be sent to the Dask "
                                         r"cluster.*without --scheduler"):
        CheckTimer(client=dask_client).start("locked", lambda: lock.locked())


def test_the_audit_on_the_cluster_gives_the_local_result(dask_client):
    """``audit(..., client=)``: the trial blocks run as the cluster's tasks and give the
    local result, held-out scores included, with the split and the rank threshold (in
    tests/test_audit_core.py until 2026-11-28, with a LocalCluster of its own: a second
    cluster's start and stop in the suite)."""
    import numpy as np

    from dpclaims.audits import GaussianMechanism, audit, replace_one

    m = GaussianMechanism(lambda d: np.sum(d), 1.0, 1.0, 1e-5)
    pair = replace_one(np.zeros(5), 0, 1.0)
    local = audit(m, pair, 20_000, seed=4, block_size=4000)
    remote = audit(m, pair, 20_000, seed=4, block_size=4000, client=dask_client)
    remote_rank = audit(m, pair, 20_000, seed=4, block_size=4000, client=dask_client,
                        threshold="rank")
    assert remote == local
    assert remote_rank == audit(m, pair, 20_000, seed=4, block_size=4000, threshold="rank")
    np.testing.assert_array_equal(local.held_out_scores[0], remote.held_out_scores[0])


def test_dpvim_audit_blocks_on_the_cluster_give_the_local_verdicts(dask_client):
    from dpclaims.papers.dpvim.checks_audit import check_empirical_audit

    local = check_empirical_audit(4000, seed=5)
    remote = check_empirical_audit(4000, seed=5, client=dask_client)
    assert json.dumps([v.to_dict() for v in remote]) == json.dumps(
        [v.to_dict() for v in local])


def test_vips_step_audits_on_the_cluster_give_the_local_verdicts(dask_client):
    from dpclaims.papers.vips.checks import check_audits

    local = check_audits(2000, seed=5)
    remote = check_audits(2000, seed=5, client=dask_client)
    assert len(local) == 2
    assert json.dumps([v.to_dict() for v in remote]) == json.dumps(
        [v.to_dict() for v in local])


def test_a_worker_that_cannot_write_the_output_folder_is_refused(dask_client, tmp_path):
    from dpclaims.execution.cluster import check_workers

    assert check_workers(dask_client, tmp_path)["workers"] == 2
    with pytest.raises(InputError, match=r"Dask worker tcp://.* cannot write to this run's "
                                         r"output folder .*shares at the same path"):
        check_workers(dask_client, tmp_path / "not-on-the-workers")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(args, extra_env=None, code="from dpclaims.cli import main; main()"):
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s", **(extra_env or {})}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_scheduler_that_does_not_answer_exits_2_with_one_line(how, tmp_path):
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    args = ["audit", "--budget", "smoke", "--out", str(tmp_path / "o")]
    if how == "option":    # the option wins over the environment
        proc = _cli([*args, "--scheduler", address], {"DPCLAIMS_SCHEDULER": "tcp://x:1"})
    else:
        proc = _cli(args, {"DPCLAIMS_SCHEDULER": address})
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert address in proc.stderr and "no Dask scheduler answers" in proc.stderr
    assert "pip install 'dpclaims[dask]'" in proc.stderr
    assert not (tmp_path / "o").exists() and not list(tmp_path.iterdir())  # no staging left


def test_without_distributed_a_scheduler_exits_2_saying_how_to_install(tmp_path):
    code = "import sys; sys.modules['distributed'] = None\nfrom dpclaims.cli import main; main()"
    proc = _cli(["audit", "--scheduler", "tcp://10.0.0.1:8786", "--out", str(tmp_path / "o")],
                code=code)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "tcp://10.0.0.1:8786" in proc.stderr and "pip install 'dpclaims[dask]'" in proc.stderr


def test_a_malformed_address_exits_2_naming_it(tmp_path):
    pytest.importorskip("distributed")
    result = CliRunner().invoke(main, ["audit", "--scheduler", "http://host:8786", "--out",
                                       str(tmp_path / "o")])
    assert result.exit_code == 2 and "http://host:8786" in result.output


# --------------------------------------------------------------------------- lost mid-run

_WAITS_ON_THE_CLUSTER = '''
import functools
import time
from dataclasses import dataclass
from pathlib import Path
from dpclaims.claims import CheckTimer, Claim
from dpclaims.claims.paper import BUDGET_NAMES, Budget, Paper

CLAIM = Claim("wait/x", "Waiting paper", "Eq. 1", "x", "none")

@dataclass(frozen=True)
class WaitBudget(Budget):
    n: int = 1

def run(ctx):
    check = CheckTimer(client=ctx.client).start("wait", functools.partial(time.sleep, 120))
    Path({marker!r}).write_text("submitted")
    check.result()  # dpclaims waits on the cluster, as a paper's checks do

PAPER = Paper(id="wait", title="Wait", texts=("wait.txt",), claims=(CLAIM,),
              budgets={{n: WaitBudget(n) for n in BUDGET_NAMES}}, run=run)
'''


@pytest.mark.skipif(os.name != "posix", reason="kills a scheduler process")
def test_a_scheduler_lost_mid_run_exits_69_with_one_line_and_no_report(tmp_path):
    """A real ``dask scheduler`` and ``dask worker``; the scheduler is killed while the
    audit waits on a task: exit 69 (not 70, "a bug", nor 2, "your code", where the
    plugin's run() waited), one line naming the address and Dask's error, no report and
    no staging folder left."""
    distributed = pytest.importorskip("distributed")
    marker = tmp_path / "submitted"
    paper = tmp_path / "wait_paper.py"
    paper.write_text(_WAITS_ON_THE_CLUSTER.format(marker=str(marker)))
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "30s"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    scheduler_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                               "--port", "0", "--no-dashboard", "--scheduler-file",
                               str(scheduler_file)], **quiet)]
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                       "--scheduler-file", str(scheduler_file), "--nthreads",
                                       "1", "--no-dashboard"], **quiet))
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=60,
                                set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)
            address = client.scheduler.address
        out = tmp_path / "o"
        run = subprocess.Popen([sys.executable, "-c", "from dpclaims.cli import main; main()",
                                "audit", "--paper", f"{paper}:PAPER", "--budget", "smoke",
                                "--scheduler", address, "--out", str(out)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(run)
        deadline = time.monotonic() + 90
        while not marker.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if not marker.exists():
            run.kill()
            pytest.fail(f"the audit did not reach the cluster: {run.communicate()}")
        procs[0].kill()  # the scheduler
        _, err = run.communicate(timeout=120)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert run.returncode == 69, err
    lines = [line for line in err.splitlines() if line.startswith("dpclaims:")
             and not line.startswith("dpclaims: data:")]  # the data line comes first
    assert err.startswith("dpclaims: data: "), err
    assert len(lines) == 1 and "Traceback" not in err and "ERROR" not in err, err
    assert f"the Dask cluster at {address} failed mid-run" in lines[0], err
    assert "CancelledError" in lines[0] and "no report was written" in lines[0], err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "scheduler.json", "submitted", "wait_paper.py"]


_RAISES = _WAITS_ON_THE_CLUSTER.replace(
    "    check.result()  # dpclaims waits on the cluster, as a paper's checks do\n",
    "    check.cancel()\n"
    "    raise ValueError('a bug in the plugin')\n")


def test_an_error_of_the_users_code_on_a_live_cluster_stays_bad_input(dask_client, tmp_path):
    """The other direction: under --scheduler, with the cluster up, an exception raised
    by the plugin's own code is still bad input (exit 2) naming its file, not 69."""
    paper = tmp_path / "raises_paper.py"
    paper.write_text(_RAISES.format(marker=str(tmp_path / "submitted")))
    result = CliRunner().invoke(main, ["audit", "--paper", f"{paper}:PAPER", "--budget",
                                       "smoke", "--scheduler", dask_client.scheduler.address,
                                       "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "an exception in your code" in result.output and "raises_paper.py" in result.output
    assert "a bug in the plugin" in result.output and "Dask cluster" not in result.output


def test_lost_cluster_tells_dasks_failures_from_errors_raised_on_a_worker():
    """The classification behind exit 69: Dask's failures (also as the cause or context
    of another exception), and an exception raised inside Dask's own code once the
    client has closed; an exception of the run's own code keeps its meaning, on a
    running cluster or a closed one, and bad input always does."""
    pytest.importorskip("distributed")
    from distributed.client import ClosedClientError, FutureCancelledError
    from distributed.comm import get_address_host_port
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    from dpclaims.execution.cluster import lost_cluster

    class Client:
        status = "running"

    def raised(exc, cause=None, context=None):
        try:
            try:
                if context is not None:
                    raise context
            finally:
                raise exc from cause
        except BaseException as e:  # noqa: BLE001
            return e

    running = Client()
    assert lost_cluster(running, CommClosedError("ConnectionPool closing.")) == (
        "CommClosedError: ConnectionPool closing.")
    cancelled = FutureCancelledError("k", "scheduler-connection-lost")
    assert lost_cluster(running, raised(RuntimeError("gathering"), cause=cancelled)
                        ).startswith("FutureCancelledError:")
    assert lost_cluster(running, raised(RuntimeError("cleanup"), context=ClosedClientError(
        "Client is closed"))).startswith("ClosedClientError:")
    last = type("WorkerState", (), {"address": "tcp://10.0.0.2:4000"})()
    what = lost_cluster(running, KilledWorker("x", last, 3))
    assert what.startswith("KilledWorker: Attempted to run task 'x' on 4 different workers")
    assert what.endswith("the task itself may be the cause (memory, a crash in native code): "
                         "see the workers' logs")
    assert lost_cluster(running, raised(ValueError("a bug"))) is None
    assert lost_cluster(running, InputError("missing data file x.csv")) is None

    closed = Client()
    closed.status = "closed"
    assert lost_cluster(closed, raised(ValueError("a bug after the loss"))) is None
    assert lost_cluster(closed, InputError("missing data file x.csv")) is None
    in_dask = None
    try:
        get_address_host_port("tcp://")  # raises inside distributed
    except ValueError as exc:
        in_dask = exc
    assert in_dask is not None and lost_cluster(closed, in_dask).startswith("ValueError:")
    assert lost_cluster(running, in_dask) is None


def test_a_scheduler_lost_while_the_workers_are_checked_is_a_lost_cluster(tmp_path):
    """check_workers: Dask's failure during the check is 69 (ClusterLostError), any other
    failure of the workers' import or pickling stays bad input."""
    pytest.importorskip("distributed")
    from distributed.comm.core import CommClosedError

    from dpclaims.execution.cluster import ClusterLostError, check_workers

    class Client:
        status = "running"
        scheduler = type("Rpc", (), {"address": "tcp://10.0.0.1:8786"})()

        def __init__(self, exc):
            self.exc = exc

        def run(self, *args):
            raise self.exc

    with pytest.raises(ClusterLostError, match=r"tcp://10.0.0.1:8786 failed while its "
                                               r"workers were checked \(CommClosedError"):
        check_workers(Client(CommClosedError("in <TCP>: Stream is closed")), tmp_path)
    with pytest.raises(InputError, match="cannot run dpclaims"):
        check_workers(Client(ImportError("No module named 'dpclaims'")), tmp_path)
