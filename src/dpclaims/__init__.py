"""dpclaims: verify the privacy and accuracy claims of DP Bayesian inference algorithms.

Layers (imports flow downwards only; see docs/architecture.md):
``analysis`` -> ``algorithms`` -> ``property_tests`` / ``audits`` -> ``claims`` -> ``reports``
-> ``cli``; checked by ``python -m dpclaims.devtools.layers``.
"""

__version__ = "0.1.0"
