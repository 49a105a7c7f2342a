"""Paper audits on a Dask cluster (``dpclaims audit --scheduler``): checks sent to the
workers and back, DPVIm's audit blocks, the workers checked before any work, and bad
input (a scheduler that does not answer, no ``distributed``) as one line and exit 2.

The cluster is the ``dask_client`` fixture (tests/conftest.py: a ``LocalCluster`` of two
single-threaded worker processes); the tests that need it skip when ``distributed`` is
not installed. The end-to-end test (DP-SEP's smoke audit on the cluster gives the local
run's results.json byte for byte) is in tests/test_cli.py, beside the local smoke run it
compares with.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

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
    from dpclaims.claims.cluster import check_workers

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
