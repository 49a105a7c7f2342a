"""dpclaims: verify the privacy and accuracy claims of DP Bayesian inference algorithms.

Layers (imports flow downwards only; see docs/architecture.md):
``analysis`` -> ``data`` -> ``property_tests`` / ``audits`` -> ``algorithms`` ->
``execution`` -> ``claims`` -> ``papers`` (plugins, found by entry point) -> ``reports``
-> ``cli``; checked by ``python -m dpclaims.devtools.layers``.
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


def fingerprint(sources: tuple[str, ...], packages: tuple[str, ...]) -> str:
    """A SHA-256 (hex) of this installation's ``sources`` (paths relative to the
    ``dpclaims`` package, e.g. "analysis/accounting.py") and the installed versions of
    ``packages`` (distribution names; None for one that is not installed), without
    importing any of them: the key salt of a cached computation, so that a changed
    source file or library never serves an old answer.

    Raises
    ------
    FileNotFoundError
        A source that is not in the package.
    """
    import hashlib
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    h = hashlib.sha256()
    for rel in sources:
        h.update(rel.encode() + b"\0" + (Path(__file__).parent / rel).read_bytes())
    for name in packages:
        try:
            v = version(name)
        except PackageNotFoundError:
            v = None
        h.update(f"\0{name}={v}".encode())
    return h.hexdigest()

