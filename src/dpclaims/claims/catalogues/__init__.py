"""Each paper's claims as data: frozen :class:`dpclaims.claims.Claim` values, the
budgets and the paper's stated settings. Importing a catalogue never runs a check.
"""
