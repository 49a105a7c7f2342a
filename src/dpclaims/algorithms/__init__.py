"""The algorithm families: each a reference implementation (vectorised over a leading
trial axis), its one-step mechanisms (the audit engine's Mechanism protocol), its
whole runs (the algorithm protocol of :mod:`dpclaims.audits.whole_run`) and its
hypothesis strategies, in one package per family. Papers use them; the framework does
not import them.
"""
