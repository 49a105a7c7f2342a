"""dpclaims: verify the privacy and accuracy claims of DP Bayesian inference algorithms.

Layers (imports flow downwards only; see docs/architecture.md):
``analysis`` -> ``data`` -> ``property_tests`` / ``audits`` -> ``families`` -> ``claims``
-> ``papers`` (plugins, found by entry point) -> ``reports`` -> ``cli``; checked by
``python -m dpclaims.devtools.layers``.
"""

__version__ = "0.1.0"
