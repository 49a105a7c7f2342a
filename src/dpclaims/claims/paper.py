"""The Paper interface: what a paper plugin declares, and what the runner gives it.

A paper is a value (:class:`Paper`): an id, its title and text versions, its claims
(:class:`~dpclaims.claims.core.Claim`, each quoted with its location), its budgets
(one :class:`Budget` subclass per paper, with the four instances of
:data:`BUDGET_NAMES`), and ``run``, the function that turns the claims into verdicts
through the verdict kernel (:mod:`dpclaims.claims.kernel`) given a
:class:`RunContext`. The framework (registry, runner, CLI, reports) reads only this
interface: it knows no paper by name. The three seed papers and a user's own paper
implement it the same way; a user's paper registers through the entry point group
``dpclaims.papers`` (:mod:`dpclaims.claims.registry`).

How to write one: docs/architecture.md, "Adding a paper".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

from dpclaims.claims.core import Claim, InputError, Verdict
from dpclaims.execution.checks import CheckTimer

#: The budgets every paper defines, in increasing effort. ``smoke`` exists for tests
#: (every check runs, small); ``quick`` takes minutes on 2 cores; ``standard`` and
#: ``full`` come closer to the paper's own sizes.
BUDGET_NAMES = ("smoke", "quick", "standard", "full")

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


@dataclass(frozen=True)
class Budget:
    """How hard a paper's checks work: the base of each paper's own budget type.

    A paper subclasses it with typed fields (trials, examples, sizes) and declares one
    instance per name of :data:`BUDGET_NAMES`. Attribute ``name`` is that name.
    """

    name: str

    def values(self) -> dict[str, Any]:
        """The fields other than ``name``, as they are (for checks that read a dict)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "name"}

    def to_dict(self) -> dict[str, Any]:
        """The budget's fields as JSON-able values (tuples as lists), for results.json."""
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in {"name": self.name, **self.values()}.items()}


@dataclass(frozen=True)
class Section:
    """A report section a paper adds beside its verdicts (a frozen value).

    Attributes
    ----------
    title : str
        Non-empty; in a run of several papers the runner prefixes the paper's id.
    text : str, optional
        Markdown-ish paragraphs.
    table : dict, optional
        ``{"columns": [...], "rows": [[...], ...]}``.
    figures : sequence of str, optional
        File names of figures in the run's output folder.

    :meth:`to_dict` is the section as report and results.json read it: the keys in the
    order title, text, table, figures, each only when given. The runner takes a plain
    dict of that shape as well.
    """

    title: str
    text: str | None = None
    table: Mapping[str, Any] | None = None
    figures: Sequence[str] | None = None

    __hash__ = None  # a table is a dict: compared, never hashed

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"title": self.title}
        for key in ("text", "table", "figures"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if key == "figures" else value
        return out


class PaperResult(NamedTuple):
    """What a paper's ``run`` returns.

    verdicts : list of Verdict
        Every verdict, each of a claim declared in ``Paper.claims``.
    sections : list of Section or dict
        Report sections (:class:`Section`, or its :meth:`~Section.to_dict` shape
        ``{"title", "text", "figures"?, "table"?}``), see :mod:`dpclaims.reports.render`.
    meta : dict
        JSON-able facts of the run that the seed determines (sizes, data used).
    timings : dict
        Seconds per check (not determined by the seed: run_info.json only).
    """

    verdicts: list[Verdict]
    sections: list[Section | dict]
    meta: dict
    timings: dict


@dataclass(frozen=True)
class RunContext:
    """What the runner gives a paper's ``run``.

    Attributes
    ----------
    budget : Budget
        The paper's own budget instance for the requested budget name.
    seed : int
        Root seed (>= 0): the same seed gives the same verdicts.
    out_dir : Path
        Folder for figures (exists).
    data_dir : Path or None
        The papers' data sets (``--data-dir``), or None for the embedded defaults.
    progress : callable
        ``progress(step_name)`` before each check (the CLI's progress line).
    workers : int
        Processes the paper may use for independent checks.
    client : dask.distributed.Client or None
        The Dask cluster of ``dpclaims audit --scheduler`` (None: run locally). A paper
        passes it to :func:`~dpclaims.audits.core.audit` (its trial blocks run there);
        checks must give the same values either way. Never pass it into a check that
        itself runs on the cluster.
    companions : frozenset of str
        The ids of the other papers in the same run (``--paper all``): a paper whose
        claims another paper of the run also checks may leave them to it.
    selection : tuple of str
        ``--claim`` patterns (shell-style, :func:`claim_selected`): the run reports only
        the claims they select. Empty: every claim. A paper skips the checks of claims
        not selected by asking :meth:`wants`; one that does not ask still runs them all,
        and the runner drops the verdicts not selected.
    timer : CheckTimer
        The check runner (:class:`~dpclaims.claims.core.CheckTimer`) with ``progress``,
        ``workers`` and ``client``: ``ctx.timer(name, fn)`` runs a check here, announced
        and timed; ``ctx.timer.start(name, fn)`` beside the others (a second process, or
        the Dask cluster). ``ctx.timer.timings`` is the result's ``timings``. Built from
        the fields above when not given; the runner closes it after ``run``.
    """

    budget: Budget
    seed: int
    out_dir: Path
    data_dir: Path | None = None
    progress: Callable[[str], None] = field(default=lambda name: None)
    workers: int = 1
    client: object = None
    companions: frozenset = frozenset()
    selection: tuple[str, ...] = ()
    timer: CheckTimer = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.timer is None:
            object.__setattr__(self, "timer",
                               CheckTimer(self.progress, self.workers, self.client))

    def wants(self, *claim_ids: str) -> bool:
        """Whether a check that gives verdicts of ``claim_ids`` is needed: True without a
        selection, else when one of them is selected (so ``wants()`` says whether there
        is no selection)."""
        return not self.selection or any(claim_selected(c, self.selection)
                                         for c in claim_ids)


@dataclass(frozen=True)
class Paper:
    """A paper plugin.

    Attributes
    ----------
    id : str
        Short id used on the command line (``--paper <id>``): lower case letters,
        digits, ``-`` and ``_``.
    title : str
        Authors, title, venue.
    texts : tuple of str
        The versions of the text the claims quote (file names or citations).
    claims : tuple of Claim
        Every claim the paper's checks give verdicts for (ids unique).
    budgets : mapping of str to Budget
        One instance per name of :data:`BUDGET_NAMES`, each with that ``name``.
    run : callable
        ``run(ctx: RunContext) -> PaperResult``.
    summary : str
        One line for ``dpclaims papers`` and ``--help``.
    order : int
        Position in a run of several papers (``--paper all``; ties by id).
    runs_beside_others : bool
        In a run of several papers, run this one in a second process beside the others
        (for a light, single-process paper, e.g. an accounting catalogue).
    captions : mapping of str to str
        Shell-style pattern of a figure's file name -> its caption, shown under the
        figure in the report.
    data : mapping of str to str, optional
        The data sets the paper's checks read: each data set's folder in a data folder
        (``--data-dir`` or the cache of ``dpclaims data fetch``; "adult",
        "uci/wine-quality-red") -> the embedded default its checks use when the folder
        is absent. An audit says at its start, per paper, which it will read and from
        where (:func:`dpclaims.claims.registry.data_line`). ``{}``: no data set; None
        (the default): not declared, and the audit says so.

    Raises
    ------
    ValueError
        A malformed id, a missing or misnamed budget, or duplicate claim ids.
    """

    id: str
    title: str
    texts: tuple[str, ...]
    claims: tuple[Claim, ...]
    budgets: Mapping[str, Budget]
    run: Callable[[RunContext], PaperResult]
    summary: str = ""
    order: int = 100
    runs_beside_others: bool = False
    captions: Mapping[str, str] = field(default_factory=dict)
    data: Mapping[str, str] | None = None

    def __post_init__(self):
        if not isinstance(self.id, str) or not _ID.match(self.id) or self.id == "all":
            raise ValueError(f"a paper id must match {_ID.pattern} and not be 'all', got "
                             f"{self.id!r}")
        object.__setattr__(self, "texts", tuple(self.texts))
        object.__setattr__(self, "claims", tuple(self.claims))
        missing = [n for n in BUDGET_NAMES if n not in self.budgets]
        if missing:
            raise ValueError(f"paper {self.id!r}: budgets {missing} missing (every paper "
                             f"defines {BUDGET_NAMES})")
        for name, b in self.budgets.items():
            if not isinstance(b, Budget) or b.name != name:
                raise ValueError(f"paper {self.id!r}: budget {name!r} must be a Budget whose "
                                 f"name is {name!r}, got {b!r}")
        seen = set()
        for c in self.claims:
            if not isinstance(c, Claim):
                raise ValueError(f"paper {self.id!r}: claims must be Claim values, got {c!r}")
            if c.id in seen:
                raise ValueError(f"paper {self.id!r}: claim id {c.id!r} declared twice")
            seen.add(c.id)
        if not callable(self.run):
            raise ValueError(f"paper {self.id!r}: run must be callable, got {self.run!r}")

    def budget(self, name: str) -> Budget:
        """The budget called ``name``; InputError naming the known ones otherwise."""
        if name not in self.budgets:
            raise InputError(f"paper {self.id!r}: budget must be one of "
                             f"{tuple(self.budgets)}, got {name!r}")
        return self.budgets[name]

    @property
    def claim_ids(self) -> frozenset:
        return frozenset(c.id for c in self.claims)


def claim_selected(claim_id: str, patterns: Sequence[str]) -> bool:
    """Whether ``claim_id`` ("dpsep/prop1-sensitivity") matches one of the shell-style
    ``patterns`` (:func:`fnmatch.fnmatchcase`), as a whole or without its paper's prefix
    ("prop1-*", "dpsep/prop*", "*table*")."""
    from fnmatch import fnmatchcase

    short = claim_id.split("/", 1)[-1]
    return any(fnmatchcase(claim_id, p) or fnmatchcase(short, p) for p in patterns)


def claims_of(*groups: Mapping[str, Claim] | Sequence[Claim]) -> tuple[Claim, ...]:
    """The claims of several catalogues (dicts of claims or sequences) as one tuple, in
    order, each once (the same Claim value in two groups is kept once)."""
    out, seen = [], set()
    for g in groups:
        for c in (g.values() if isinstance(g, Mapping) else g):
            if c.id not in seen:
                seen.add(c.id)
                out.append(c)
    return tuple(out)
