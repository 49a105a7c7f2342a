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
from typing import NamedTuple

from dpclaims import ENTRY_POINT_GROUP, paper_ids  # noqa: F401  (defined with the package)
from dpclaims.claims.core import InputError, Verdict, to_jsonable
from dpclaims.claims.kernel import not_checkable
from dpclaims.claims.paper import Paper, PaperResult, RunContext, Section, claim_selected
from dpclaims.execution.checks import CheckTimer
from dpclaims.execution.user_code import load_object, register_source


class Registry(NamedTuple):
    """The installed paper plugins: ``papers`` that load, in run order (``Paper.order``,
    then id), and ``broken``, ``{entry point name: why it does not load}`` (one line
    each), so that one broken third-party plugin does not block the others."""

    papers: list[Paper]
    broken: dict[str, str]


def load_registry() -> Registry:
    """Load every registered paper (entry point group :data:`ENTRY_POINT_GROUP`).

    A third-party plugin that does not import, does not give a Paper, whose id is not
    its entry point's name, or whose id another plugin has too, is set aside in
    ``broken`` with the reason (naming its entry point and distribution).

    Raises
    ------
    Exception
        Whatever one of dpclaims' own papers raises while loading: a bug of dpclaims
        (exit 70), never set aside.
    """
    papers: dict[str, Paper] = {}
    broken: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name!r} = {ep.value!r}" + (
            f" of {ep.dist.name}" if getattr(ep, "dist", None) else "")
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001  (a plugin that fails to import)
            if _ours(ep.module):
                raise  # dpclaims' own paper: a bug (exit 70), not the user's input
            broken[ep.name] = (f"the paper plugin {where} does not load: "
                               f"{type(exc).__name__}: {' '.join(str(exc).split())}")
            continue
        try:
            paper = _as_paper(obj, where)
            register_source(sys.modules.get(ep.module), package=True)
            if paper.id != ep.name:
                raise InputError(f"the paper plugin {where} has id {paper.id!r}; the entry "
                                 "point's name must be the paper's id")
        except InputError as exc:
            if _ours(ep.module):
                raise RuntimeError(str(exc)) from exc
            broken[ep.name] = str(exc)
            continue
        if paper.id in papers or paper.id in broken:
            broken[paper.id] = f"two paper plugins have the id {paper.id!r}"
            papers.pop(paper.id, None)
            continue
        papers[paper.id] = paper
    return Registry(sorted(papers.values(), key=lambda p: (p.order, p.id)), broken)


def registered_papers() -> list[Paper]:
    """Every registered paper that loads, in run order (``Paper.order``, then id); the
    ones that do not load are in :func:`load_registry`'s ``broken``."""
    return load_registry().papers


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


def resolve(spec: str, on_skipped: Callable[[str], None] | None = None) -> list[Paper]:
    """The papers ``--paper`` names: ``all`` (every registered paper that loads), a
    registered id, or a ``file.py:obj`` / ``module:obj`` spec.

    A registered plugin that does not load (:func:`load_registry`) is an error when it is
    the paper named; ``all`` skips it, with one line to ``on_skipped`` (default: none).

    Raises
    ------
    InputError
        An unknown id (naming the known ones), the named plugin does not load (why), or
        ``all`` when no paper loads.
    """
    if ":" in spec:
        return [load_paper(spec)]
    registry = load_registry()
    if spec in registry.broken:
        raise InputError(registry.broken[spec])
    papers = registry.papers
    if spec == "all":
        for why in registry.broken.values():
            if on_skipped is not None:
                on_skipped(f"skipped: {why}")
        if not papers:
            raise InputError("no paper is registered (entry point group "
                             f"{ENTRY_POINT_GROUP!r})"
                             + (" that loads" if registry.broken else ""))
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
    """``paper.run(ctx)``, checked against the interface: a PaperResult-shaped tuple of
    Verdicts of claims ``paper`` declares, sections (Section values, turned into their
    dicts, or dicts) with a title, and JSON-able ``meta`` and evidence. Each verdict is
    stamped (:meth:`Verdict.stamped <dpclaims.claims.core.Verdict.stamped>`) with ctx's
    budget name when it names none and ctx's root seed when its check named no seed (a
    child seed, or None from a check that draws nothing at random, is kept). A
    ``SystemExit`` raised by ``run`` (a plugin calling ``sys.exit``) is an error of the
    paper, not a way to end dpclaims.

    Raises
    ------
    InputError
        A plugin's result that breaks the interface, or a plugin that exits (naming the
        paper and what is wrong).
    RuntimeError
        The same for one of dpclaims' own papers (an internal error).
    """
    # a broken interface is the plugin author's input error, or a bug of dpclaims' own
    error = RuntimeError if _ours(getattr(paper.run, "__module__", "")) else InputError
    try:
        with ctx.timer:  # no check a paper started is left behind
            result = paper.run(ctx)
    except SystemExit as exc:
        raise error(f"paper {paper.id!r}: run() called sys.exit({exc.code!r}); a paper "
                    "reports through its verdicts and must not end the process") from None
    try:
        verdicts, sections, meta, timings = result
    except (TypeError, ValueError):
        raise error(f"paper {paper.id!r}: run must return (verdicts, sections, meta, "
                         f"timings), got {type(result).__name__}") from None
    if isinstance(sections, (list, tuple)):  # Section values as the report reads them
        sections = [s.to_dict() if isinstance(s, Section) else s for s in sections]
    problem = interface_problem(paper, verdicts, sections, meta, timings)
    if problem:
        raise error(f"paper {paper.id!r}: {problem}")
    verdicts = [v.stamped(seed=ctx.seed, budget=ctx.budget.name) for v in verdicts]
    return PaperResult(verdicts, list(sections), dict(meta), dict(timings))


def interface_problem(paper: Paper, verdicts, sections, meta, timings) -> str | None:
    """What in a paper's ``run`` result breaks the interface (:class:`PaperResult`), in
    one phrase naming the item, or None when nothing does."""
    for name, value, kind in (("verdicts", verdicts, list), ("sections", sections, list),
                              ("meta", meta, dict), ("timings", timings, dict)):
        if not isinstance(value, (kind, tuple) if kind is list else kind):
            return (f"run's {name} must be a {kind.__name__}, got "
                    f"{type(value).__name__}: {value!r:.60}")
    declared = paper.claim_ids
    for i, v in enumerate(verdicts):
        if not isinstance(v, Verdict):
            return (f"verdict {i} of run's result is a {type(v).__name__} ({v!r:.60}), not "
                    "a Verdict: verdicts come from the kernel (dpclaims.claims.kernel)")
        if v.claim.id not in declared:
            return (f"returned a verdict for the claim {v.claim.id!r}, which it does not "
                    "declare in Paper.claims")
        bad = _not_json(v.evidence, "evidence")
        if bad:
            return f"the verdict of {v.claim.id!r} under {str(v.reading)!r}: {bad}"
    for i, sec in enumerate(sections):
        where = f"section {i} of run's result"
        if not isinstance(sec, dict):
            return f"{where} must be a dict, got {type(sec).__name__}: {sec!r:.60}"
        title = sec.get("title")
        if not isinstance(title, str) or not title.strip():
            return f"{where} needs a non-empty str 'title', got {title!r:.60}"
        for key, kinds in (("text", str), ("figures", (list, tuple)), ("table", dict)):
            if sec.get(key) is not None and not isinstance(sec[key], kinds):
                return (f"section {title!r}: {key!r} must be a "
                        f"{getattr(kinds, '__name__', 'list')}, got {type(sec[key]).__name__}")
        table = sec.get("table")
        if table is not None and not (isinstance(table.get("columns"), (list, tuple))
                                      and isinstance(table.get("rows"), (list, tuple))):
            return f"section {title!r}: 'table' needs lists 'columns' and 'rows'"
        bad = _not_json(sec, "section")
        if bad:
            return f"section {title!r}: {bad}"
    bad = _not_json(meta, "meta")
    if bad:
        return bad
    for k, t in timings.items():
        if t is not None and not isinstance(t, (int, float)):
            return f"timings[{k!r}] must be seconds (a number), got {type(t).__name__}"
    return None


def _not_json(value, path: str) -> str | None:
    """Where in ``value`` something is that results.json cannot hold (what the report's
    :func:`~dpclaims.claims.core.to_jsonable` does not turn into JSON), or None."""
    value = to_jsonable(value)
    stack = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, dict):
            stack += [(f"{where}[{k!r}]", x) for k, x in v.items()]
        elif isinstance(v, list):
            stack += [(f"{where}[{i}]", x) for i, x in enumerate(v)]
        elif not isinstance(v, (str, int, float, bool)) and v is not None:
            return (f"{where} is a {type(v).__name__} ({v!r:.60}), which results.json "
                    "cannot hold (use numbers, strings, lists and dicts)")
    return None


def select_claims(papers: Sequence[Paper], patterns: Sequence[str]) -> list[str]:
    """The ids of the claims of ``papers`` that ``patterns`` (``--claim``, shell-style,
    :func:`~dpclaims.claims.paper.claim_selected`) select, in declaration order.

    Raises
    ------
    InputError
        A pattern that selects no claim (naming it and some of the ids).
    """
    ids = list(dict.fromkeys(c.id for p in papers for c in p.claims))
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise InputError(f"--claim needs a claim id or a pattern, got {pattern!r}")
        if not [i for i in ids if claim_selected(i, [pattern])]:
            shown = ", ".join(ids[:8]) + (f", ... ({len(ids)} in all)" if len(ids) > 8 else "")
            raise InputError(f"--claim {pattern!r} selects no claim of "
                             f"{', '.join(p.id for p in papers)}; its claims: {shown} "
                             "(`dpclaims audit --help`; patterns are shell-style: *, ?)")
    return [i for i in ids if claim_selected(i, patterns)] if patterns else ids


def run_papers(papers: Sequence[Paper], budget_name: str, seed: int, out_dir: Path,
               data_dir: Path | None = None, progress: Callable[[str], None] | None = None,
               workers: int = 1, client=None, selection: Sequence[str] = ()) -> PaperResult:
    """Run ``papers`` at ``budget_name`` and merge their results.

    One paper: its result as it is. Several: verdicts in the order of ``papers``, each
    section's title prefixed with its paper's id, ``meta`` and ``timings`` keyed by id;
    a paper with ``runs_beside_others`` runs in a second process (``workers`` > 1), or
    as a task on the Dask cluster of ``client`` (a ``dask.distributed.Client``; there
    with one worker and no client), while the others run in turn. Every paper's
    :class:`RunContext` carries ``client``. The result is the same whatever ``workers``
    and ``client`` are.

    ``selection``: ``--claim`` patterns (:func:`select_claims`); only the claims they
    select are reported (every one of them), each paper's context carries them (a paper
    that asks :meth:`RunContext.wants` skips the other checks), and ``meta`` gains
    ``"selected claims"``. Each check's value depends only on its own seed, so a
    selected claim's verdicts are those of the whole run.

    Raises
    ------
    InputError
        An unknown budget name, a pattern that selects no claim, or a plugin's result
        that breaks the interface.
    """
    progress = progress or (lambda name: None)
    ids = frozenset(p.id for p in papers)
    selection = tuple(selection)
    chosen = select_claims(papers, selection)

    def context(p, tick, w, c):
        return RunContext(budget=p.budget(budget_name), seed=seed, out_dir=Path(out_dir),
                          data_dir=data_dir, progress=tick, workers=w, client=c,
                          companions=ids - {p.id}, selection=selection)

    def selected(result: PaperResult, verdicts: list) -> PaperResult:
        if not selection:
            return result._replace(verdicts=verdicts)
        keep = set(chosen)
        return result._replace(verdicts=[v for v in verdicts if v.claim.id in keep],
                               meta={**result.meta, "selected claims": {
                                   "patterns": list(selection), "claims": chosen}})

    if len(papers) == 1:
        result = run_paper(papers[0], context(papers[0], progress, workers, client))
        return selected(result, with_every_declared_claim(
            papers, [result.verdicts], budget_name, only=set(chosen)))
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
    sections, meta, timings = [], {}, {}
    verdicts = with_every_declared_claim(papers, [results[p.id].verdicts for p in papers],
                                         budget_name, only=set(chosen))
    for p in papers:
        _, s, m, t = results[p.id]
        sections += [{**sec, "title": f"{p.id}: {sec['title']}"} for sec in s]
        meta[p.id], timings[p.id] = m, t
    return selected(PaperResult([], sections, meta, timings), verdicts)


#: The reading of the verdict the runner gives a declared claim that has none.
NO_VERDICT_READING = "no verdict returned"


def with_every_declared_claim(papers: Sequence[Paper], verdicts_of: Sequence[list],
                              budget: str | None = None, only: set | None = None) -> list:
    """The verdicts of ``papers`` (``verdicts_of[i]`` is what ``papers[i]`` returned) in
    order, each paper's followed by a ``not-checkable`` verdict (from the kernel) for
    every claim it declares and no verdict of the run is of: the reason says that the
    paper's ``run()`` returned no verdict for it, a bug in the paper. A claim two papers
    declare needs a verdict from either. Nothing else changes.

    A paper that does not run a claim at a budget, or without some data, says so with
    its own ``not_checkable`` verdict, whose reason names what is missing. ``only``: the
    claims to complete (a ``--claim`` selection; None: all).
    """
    have = {v.claim.id for vs in verdicts_of for v in vs}
    out = []
    for p, vs in zip(papers, verdicts_of, strict=True):
        out += vs
        for c in p.claims:
            if c.id not in have and (only is None or c.id in only):
                have.add(c.id)
                out.append(not_checkable(
                    c, NO_VERDICT_READING,
                    f"a verdict: paper {p.id!r} declares this claim but its run() returned "
                    "no verdict for it (a bug in the paper)", seed=None, budget=budget))
    return out


def data_line(paper: Paper, data_dir, origin: str) -> str:
    """One line naming the data ``paper`` reads in this run and where it comes from,
    said before the checks run (issue 41: data never changes a verdict unannounced).

    Each data set of ``paper.data`` is read from ``data_dir`` when that folder holds
    it (:func:`dpclaims.data.datasets.holds_datasets`), else the paper's embedded
    default stands in for it; the verdicts then say which they ran on
    (``Verdict.data``).

    Parameters
    ----------
    paper : Paper
    data_dir : path or None
        The data folder of the run (``--data-dir``, the verified cache, or None).
    origin : str
        Where ``data_dir`` comes from, in words ("--data-dir", "the data cache").

    Raises
    ------
    FileNotFoundError
        ``data_dir`` given but not a folder.
    """
    from dpclaims.data.datasets import holds_datasets

    if paper.data is None:
        return (f"{paper.id}: its data sets are not declared (Paper.data); each verdict "
                "names the data it ran on")
    if not paper.data:
        return f"{paper.id}: no data set"
    present = [f for f in paper.data if holds_datasets(data_dir, f)]
    parts = [f"{', '.join(present)} from {origin} {data_dir}"] if present else []
    fallbacks: dict[str, list[str]] = {}
    for f, default in paper.data.items():
        if f not in present:
            fallbacks.setdefault(default, []).append(f)
    where = f"in {data_dir}" if data_dir is not None else "(no data folder)"
    parts += [f"{', '.join(fs)} not found {where}: embedded {default} instead, not the "
              "paper's data" for default, fs in fallbacks.items()]
    return f"{paper.id}: " + "; ".join(parts)
