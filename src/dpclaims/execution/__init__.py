"""Where and how a run's code executes: the checks' runner, the Dask cluster and the
user's code.

:mod:`~dpclaims.execution.checks` (:class:`CheckTimer`) runs a report's checks in this
process, in forked worker processes or on a Dask cluster;
:mod:`~dpclaims.execution.cluster` connects to the cluster of ``--scheduler``, checks
its workers and recognises a cluster that failed mid-run;
:mod:`~dpclaims.execution.user_code` loads the user's code (a variant, a claims file's
module, a paper plugin) and tells the user's errors from dpclaims' own. The package
knows no claim and no verdict: it sits below :mod:`dpclaims.claims`, whose registry and
checks use it (docs/architecture.md).
"""

from dpclaims.execution.checks import CheckTimer

__all__ = ["CheckTimer"]
