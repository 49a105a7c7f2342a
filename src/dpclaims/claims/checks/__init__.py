"""Checks: functions that take claims (from :mod:`dpclaims.claims.catalogues`) and a
budget and return :class:`dpclaims.claims.Verdict` records. The only layer that
computes verdicts; :mod:`dpclaims.reports` only renders them.
"""
