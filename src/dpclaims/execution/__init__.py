"""Where and how a run's code executes: the checks' runner, worker processes, the Dask
cluster and the user's code.

:mod:`~dpclaims.execution.checks` (:class:`CheckTimer`) runs a report's checks in this
process, in forked worker processes or on a Dask cluster;
:mod:`~dpclaims.execution.processes` decides how worker processes start
(:func:`start_method`: fork, or spawn once a threaded runtime such as JAX is loaded) and
reports a worker that stops answering (:class:`WorkerLostError`);
:mod:`~dpclaims.execution.cluster` connects to the cluster of ``--scheduler``, checks
its workers and recognises a cluster that failed mid-run;
:mod:`~dpclaims.execution.user_code` loads the user's code (a variant, a claims file's
module, a paper plugin) and tells the user's errors from dpclaims' own. The package
knows no claim and no verdict: it sits below :mod:`dpclaims.claims`, whose registry and
checks use it (docs/architecture.md); :mod:`~dpclaims.execution.processes` sits lower
still, below the audit engine, whose process pools use it.
"""

from dpclaims.execution.checks import CheckTimer
from dpclaims.execution.processes import StartMethod, WorkerLostError, start_method

__all__ = ["CheckTimer", "StartMethod", "WorkerLostError", "start_method"]
