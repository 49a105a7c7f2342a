"""Experiment runners: the papers' experiments run at a stated size (layer 3).

They run algorithms and return numbers (JSON-able dicts) and figures; they never
build a Claim or a Verdict. The checks in :mod:`dpclaims.claims.checks` turn
their numbers into verdicts.
"""
