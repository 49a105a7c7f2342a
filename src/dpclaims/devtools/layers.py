"""The import structure check: ``python -m dpclaims.devtools.layers``.

The import directions of docs/architecture.md are the only ones allowed. Every
``dpclaims`` module is given a layer by its package:

======  ==============================================================
0       ``dpclaims.analysis``
1       ``dpclaims.data``
1.5     ``dpclaims.execution.processes`` (how worker processes start and how a lost one is
        reported; the audit engine's pools and the checks' runner both use it)
2       ``dpclaims.property_tests``, ``dpclaims.audits``, ``dpclaims.mechanisms``
2.5     ``dpclaims.algorithms`` (the reference implementations, one package per algorithm
        family; ``dpclaims.families`` is its deprecated alias, which imports nothing of
        the project's layers: it loads the modules of ``dpclaims.algorithms`` by name),
        ``dpclaims.adapters`` (a user's JAX training code as an algorithm)
3       ``dpclaims.execution`` (where a run's code executes: the checks' runner in
        processes or on Dask, the cluster, the user's code; it knows no claim, and the
        claims layer's registry and checks use it)
4       ``dpclaims.claims`` (``core``, ``headline``, ``kernel``, ``paper``, ``registry``: the
        vocabulary, the rule, the Paper interface and its runner)
4.2     ``dpclaims.claims.checks`` (the generic checks and adapters -> verdicts),
        ``dpclaims.testing`` (the checks of check-variant for a user's tests: their
        verdicts come from the kernel)
4.3     ``dpclaims.pytest_plugin`` (the pytest plugin), ``dpclaims.plugin`` (the names a
        paper plugin imports, loaded on first use)
4.4     ``dpclaims.papers`` (dpclaims' own paper plugins, one package per paper: its
        catalogue, checks and experiment runners; the framework never imports them:
        they are found through the ``dpclaims.papers`` entry points)
5       ``dpclaims.reports`` (rendering only)
6       ``dpclaims.cli``, ``dpclaims.cli_data`` (the ``data`` commands),
        ``dpclaims.cli_endings`` (signals and closed pipes, for both), ``dpclaims.cli_quiet``
        (other libraries' log lines to the report folder)
======  ==============================================================

A module's layer is that of the longest dotted prefix in :data:`LAYERS`.
(``dpclaims`` itself and ``dpclaims.devtools`` import nothing of the project's layers.)
Every import statement of every module, at module level or inside a function, is
read with :mod:`ast` (nothing is imported or run). The check fails on an import of
a higher layer and on any import cycle between modules (a strongly connected
component of the module graph with more than one module), and on an import of another
package's private name (``from dpclaims.x.y import _z`` outside ``dpclaims.x``). Exit 0
when clean, 1 with one line per violation otherwise.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

LAYERS = {"analysis": 0, "data": 1, "execution.processes": 1.5, "property_tests": 2,
          "audits": 2, "mechanisms": 2,
          "algorithms": 2.5, "families": 2.5, "adapters": 2.5, "execution": 3,
          "testing": 4.2, "pytest_plugin": 4.3, "plugin": 4.3, "claims": 4, "claims.checks": 4.2,
          "papers": 4.4, "reports": 5, "cli": 6, "cli_data": 6,
          "cli_endings": 6, "cli_quiet": 6}
ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> float | None:
    """The layer of a ``dpclaims`` module, or None (the package root, devtools)."""
    parts = module.split(".")[1:]
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in LAYERS:
            return LAYERS[key]
    return None


def imports_of(path: Path, module: str) -> set[str]:
    """The ``dpclaims`` modules ``path`` imports anywhere (resolved to existing modules)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("dpclaims")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.startswith("dpclaims"):
                out.add(base)
                out |= {f"{base}.{a.name}" for a in node.names}
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (only names that are modules)."""
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    return {m: {t for t in imports_of(p, m) if t in paths and t != m}
            for m, p in sorted(paths.items())}


def private_imports() -> list[str]:
    """Imports of a private name (``_x``) of a module in another package, one sentence
    each: a private name is used only inside its own package."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("dpclaims")):
                continue
            source_package = node.module.rsplit(".", 1)[0]
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and source_package != package:
                    out.append(f"private import: {module} imports {node.module}.{alias.name}")
    return out


def violations(g: dict[str, set[str]] | None = None) -> list[str]:
    """Upward imports, import cycles and (for the real tree) private names imported
    across packages, one sentence each (empty when clean)."""
    real = g is None
    g = graph() if g is None else g
    out = []
    for m, targets in g.items():
        lm = layer(m)
        for t in sorted(targets):
            lt = layer(t)
            if lm is not None and lt is not None and lt > lm:
                out.append(f"upward import: {m} (layer {lm}) imports {t} (layer {lt})")
    out += [f"import cycle: {' -> '.join(c)}" for c in _cycles(g)]
    if real:
        out += private_imports()
    return out


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return comps


def main() -> int:
    found = violations()
    for line in found:
        print(line)
    n = len(graph())
    print(f"{n} modules: {'clean' if not found else f'{len(found)} violation(s)'}")
    return 1 if found else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
