"""dpclaims: verify the privacy and accuracy claims of DP Bayesian inference algorithms.

Layers (imports flow downwards only; see DESIGN.md):
``analysis`` -> ``algorithms`` -> ``property_tests`` / ``audits`` -> ``reports`` -> ``cli``.
"""

__version__ = "0.1.0"
