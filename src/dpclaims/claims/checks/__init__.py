"""The generic checks: functions that take claims and a budget and return
:class:`dpclaims.claims.Verdict` records through the verdict kernel (the adapters of
:mod:`~dpclaims.claims.checks.bounds`, a reported privacy number, a user's variant or
algorithm, a claims file). A paper's own checks live in its package
(``dpclaims.papers.<id>``); :mod:`dpclaims.reports` only renders verdicts.
"""
