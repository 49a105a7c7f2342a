"""The paper registry and the runner: find the installed papers, run any of them.

Papers register through the entry point group :data:`ENTRY_POINT_GROUP`
(``dpclaims.papers``): the entry point's name is the paper's id and its object a
:class:`~dpclaims.claims.paper.Paper` (or a function of no arguments returning one).
dpclaims' own papers register the same way, in its ``pyproject.toml``. A paper that
is not installed is named as ``path/to/file.py:obj`` or ``package.module:obj``.

:func:`run_papers` runs one or several papers and merges their results; it checks
that every verdict is of a claim the paper declares.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path

from dpclaims import ENTRY_POINT_GROUP, paper_ids  # noqa: F401  (defined with the package)
from dpclaims.claims.core import CheckTimer, InputError
from dpclaims.claims.paper import Paper, PaperResult, RunContext
from dpclaims.claims.user_code import load_object, register_source


def registered_papers() -> list[Paper]:
    """Every registered paper, loaded, in run order (``Paper.order``, then id).

    Raises
    ------
    InputError
        An entry point that does not load or does not give a Paper (naming it and its
        distribution), or two papers with the same id.
    """
    papers: dict[str, Paper] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name!r} = {ep.value!r}" + (
            f" of {ep.dist.name}" if getattr(ep, "dist", None) else "")
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001  (a plugin that fails to import)
            if _ours(ep.module):
                raise  # dpclaims' own paper: a bug (exit 70), not the user's input
            raise InputError(f"the paper plugin {where} does not load: "
                             f"{type(exc).__name__}: {exc}") from exc
        paper = _as_paper(obj, where)
        register_source(sys.modules.get(ep.module), package=True)  # a bug there: exit 2
        if paper.id != ep.name:
            raise InputError(f"the paper plugin {where} has id {paper.id!r}; the entry "
                             f"point's name must be the paper's id")
        if paper.id in papers:
            raise InputError(f"two paper plugins have the id {paper.id!r}")
        papers[paper.id] = paper
    return sorted(papers.values(), key=lambda p: (p.order, p.id))


def load_paper(spec: str) -> Paper:
    """The paper named by ``spec``: ``path/to/file.py:obj`` or ``package.module:obj``.

    Raises
    ------
    InputError
        No ``:obj`` part, a file or module that does not exist or does not import, or an
        object that is not a Paper.
    """
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise InputError(f"a paper outside the registry is named as path/to/file.py:obj or "
                         f"module:obj, got {spec!r}")
    return _as_paper(load_object(spec, "paper", package=True), spec)


def resolve(spec: str) -> list[Paper]:
    """The papers ``--paper`` names: ``all`` (every registered paper), a registered id, or
    a ``file.py:obj`` / ``module:obj`` spec. InputError names the known ids otherwise."""
    if ":" in spec:
        return [load_paper(spec)]
    papers = registered_papers()
    if spec == "all":
        if not papers:
            raise InputError("no paper is registered (entry point group "
                             f"{ENTRY_POINT_GROUP!r})")
        return papers
    for p in papers:
        if p.id == spec:
            return [p]
    raise InputError(f"unknown paper {spec!r}; registered: "
                     f"{', '.join(p.id for p in papers) or 'none'}, or 'all', or "
                     "path/to/file.py:obj")


def _ours(module: str | None) -> bool:
    """Whether ``module`` is part of dpclaims itself (its own papers are not user input)."""
    return bool(module) and (module == "dpclaims" or module.startswith("dpclaims."))


def _as_paper(obj, where: str) -> Paper:
    if not isinstance(obj, Paper) and callable(obj) and not isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001  (the plugin's own factory)
            raise InputError(f"the paper plugin {where} failed to build its Paper: "
                             f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, Paper):
        raise InputError(f"the paper plugin {where} is not a dpclaims Paper "
                         f"(got {type(obj).__name__})")
    return obj


def run_paper(paper: Paper, ctx: RunContext) -> PaperResult:
    """``paper.run(ctx)``, checked: the result is a PaperResult-shaped tuple and every
    verdict is of a claim ``paper`` declares; verdicts without a budget get ctx's.

    Raises
    ------
    InputError
        A plugin's result that breaks the interface (naming the paper and the claim).
    RuntimeError
        The same for one of dpclaims' own papers (an internal error).
    """
    # a broken interface is the plugin author's input error, or a bug of dpclaims' own
    error = RuntimeError if _ours(getattr(paper.run, "__module__", "")) else InputError
    result = paper.run(ctx)
    try:
        verdicts, sections, meta, timings = result
    except (TypeError, ValueError):
        raise error(f"paper {paper.id!r}: run must return (verdicts, sections, meta, "
                         f"timings), got {type(result).__name__}") from None
    declared = paper.claim_ids
    for v in verdicts:
        if v.claim.id not in declared:
            raise error(f"paper {paper.id!r} returned a verdict for the claim "
                             f"{v.claim.id!r}, which it does not declare in Paper.claims")
        if v.budget is None:
            v.budget = ctx.budget.name
    return PaperResult(list(verdicts), list(sections), dict(meta), dict(timings))


def run_papers(papers: Sequence[Paper], budget_name: str, seed: int, out_dir: Path,
               data_dir: Path | None = None, progress: Callable[[str], None] | None = None,
               workers: int = 1, client=None) -> PaperResult:
    """Run ``papers`` at ``budget_name`` and merge their results.

    One paper: its result as it is. Several: verdicts in the order of ``papers``, each
    section's title prefixed with its paper's id, ``meta`` and ``timings`` keyed by id;
    a paper with ``runs_beside_others`` runs in a second process (``workers`` > 1), or
    as a task on the Dask cluster of ``client`` (a ``dask.distributed.Client``; there
    with one worker and no client), while the others run in turn. Every paper's
    :class:`RunContext` carries ``client``. The result is the same whatever ``workers``
    and ``client`` are.

    Raises
    ------
    InputError
        An unknown budget name, or a plugin's result that breaks the interface.
    """
    progress = progress or (lambda name: None)
    ids = frozenset(p.id for p in papers)

    def context(p, tick, w, c):
        return RunContext(budget=p.budget(budget_name), seed=seed, out_dir=Path(out_dir),
                          data_dir=data_dir, progress=tick, workers=w, client=c,
                          companions=ids - {p.id})

    if len(papers) == 1:
        return run_paper(papers[0], context(papers[0], progress, workers, client))
    # budgets checked first
    contexts = {p.id: context(p, progress, workers, client) for p in papers}
    results = {}
    # no process (or Dask task) is left behind on an error
    with CheckTimer(progress, workers, client) as timer:
        background = {p.id: timer.start(p.id, lambda p=p: run_paper(
            p, context(p, lambda name: None, 1, None)))
            for p in papers if p.runs_beside_others}
        for p in papers:
            if p.id not in background:
                results[p.id] = run_paper(p, contexts[p.id])
        for pid, handle in background.items():
            results[pid] = handle.result()
    verdicts, sections, meta, timings = [], [], {}, {}
    for p in papers:
        v, s, m, t = results[p.id]
        verdicts += v
        sections += [{**sec, "title": f"{p.id}: {sec['title']}"} for sec in s]
        meta[p.id], timings[p.id] = m, t
    return PaperResult(verdicts, sections, meta, timings)
