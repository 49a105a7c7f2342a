"""dpclaims' own papers, each a :class:`dpclaims.claims.paper.Paper` plugin registered
through the entry point group ``dpclaims.papers`` in ``pyproject.toml``, exactly as a
user's paper package registers its own (docs/architecture.md). Nothing in the framework
imports this package.
"""
