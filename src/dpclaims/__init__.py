"""dpclaims: verify the privacy and accuracy claims of DP Bayesian inference algorithms.

Layers (imports flow downwards only; see docs/architecture.md):
``analysis`` -> ``data`` -> ``property_tests`` / ``audits`` -> ``families`` -> ``claims``
-> ``papers`` (plugins, found by entry point) -> ``reports`` -> ``cli``; checked by
``python -m dpclaims.devtools.layers``.
"""

__version__ = "0.1.0"

#: The entry point group of the papers (``dpclaims.claims.registry``); here, with
#: :func:`paper_ids`, so that the command line's help lists the papers without importing
#: the framework (numpy and the rest).
ENTRY_POINT_GROUP = "dpclaims.papers"


def paper_ids() -> list[str]:
    """The ids of the registered papers (entry point names), sorted, without loading any
    of them (for help texts)."""
    from importlib.metadata import entry_points

    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
