"""Adversarial neighbouring datasets for whole-run audits, chosen by pilot audits.

The whole-run audit (:mod:`dpclaims.audits.whole_run`) adds a canary to the algorithm's
own ``data`` (the "quiet" dataset: the other records' contributions are small along the
canary direction). Some flaws leave no trace there. A DP-SGD that draws fixed-size
batches of exactly B of N records but accounts Poisson subsampling under add/remove
(d3p 0.2.0's ``DPSVI``, issue 40) is such a flaw: on the quiet dataset an added record
moves a batch sum by at most C, as Poisson accounting assumes; on a dataset whose other
records all contribute -C u (saturated at the clip norm, aligned against the canary) an
added +C u record pushes one of them out of its batch and the batch sum moves by 2C.

Candidates (:func:`candidate_datasets`), each with a short name and a description,
from the algorithm's hooks (``gradient_canary`` with ``data``, else ``input_canary``):

``quiet``
    ``data`` as given (the audit's pair before this module).
``aligned against``
    Every other record replaced by the canary with sign -1 (gradient canary: clipped
    contribution -C u, saturated); under add-remove the added record is g(+1).
``aligned with``
    Every other record replaced by the canary's own record g(+1): the differing record
    duplicates all the others.
``duplicated canary``
    ``data`` with one record (record 0 under add-remove, record 1 under replace-one) set
    to g(+1): the differing record has one duplicate.
``... N = kB`` / ``N = kB - 1``
    When the algorithm declares a batch size (``sampling.batch_size`` of a declared
    non-Poisson ``sampling``, else its ``batch_size``) and the relation is add-remove:
    the quiet and aligned-against datasets trimmed or repeated to kB and kB - 1
    records, so that the added record fills a batch or crosses a batch boundary.
    Under replace-one N is public and fixed: sizes are not searched.
starting parameters
    When the algorithm offers ``starting_points`` (a sequence, or a mapping name ->
    point) and ``with_start(point) -> algorithm``, every dataset is tried from every
    start (the default start first). Without them the evidence says the start was not
    searched.

Under replace-one the pairs are the same datasets with record 0 set to g(-1), resp.
g(+1) (or a, b for an input canary).

Selection (:func:`select_dataset`), the scheme of the pair search
(:func:`~dpclaims.audits.search.select_pair`): candidate j gets a pilot whole-run audit
of ``pilot_runs`` runs per dataset with the seed ``derived_seed(seed, 6, j)``, independent
of the streams of the final audit (seeded by ``seed``); the largest pilot certificate
wins (ties: the larger credible bound, then the earlier candidate). The final audit runs
on fresh runs on the chosen datasets, so its certificate needs no union bound over the
candidates. The evidence names the dataset that decided and lists every pilot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.analysis.records import n_records, replace_record
from dpclaims.analysis.validation import check_count, check_probability
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    NeighbouringPair,
    add_one,
    replace_one,
)
from dpclaims.audits.search import _key, derived_seed
from dpclaims.audits.whole_run import (
    WholeRunAudit,
    audit_whole_run,
    default_canary,
    validate_algorithm,
)

#: The dataset names, in the order they are proposed.
DATASET_KINDS = ("quiet", "aligned against", "aligned with", "duplicated canary")

DESCRIPTIONS = {
    "quiet": "the algorithm's data as given (the other records quiet along the canary)",
    "aligned against": "every other record replaced by the canary with sign -1: their "
                       "clipped contributions -C u, saturated at the clip norm",
    "aligned with": "every other record replaced by the canary's own record: the "
                    "differing record duplicates all the others",
    "duplicated canary": "the data as given with one record set to the canary's own "
                         "record: the differing record has one duplicate",
}


@dataclass(frozen=True, eq=False)
class DatasetCandidate:
    """One candidate of the dataset search.

    Attributes
    ----------
    name : str
        Short name, e.g. "aligned against" or "quiet, N = 19 = kB - 1".
    description : str
    pair : NeighbouringPair
        Under the claim's relation.
    algorithm : AlgorithmCapabilities
        The algorithm run on the pair (another start than the given one, when searched).
    start : str
        "as given", or the name of the starting point.
    """

    name: str
    description: str
    pair: NeighbouringPair
    algorithm: Any
    start: str = "as given"

    @property
    def label(self) -> str:
        return self.name if self.start == "as given" else f"{self.name}; start {self.start}"


def _uniform(record, n: int):
    """A dataset of n copies of ``record`` (array or tuple record)."""
    if isinstance(record, tuple):
        return tuple(np.repeat(np.asarray(c)[None], n, axis=0) for c in record)
    return np.repeat(np.asarray(record)[None], n, axis=0)


def _resized(data, size: int):
    """``data`` trimmed or repeated cyclically to ``size`` records."""
    idx = np.arange(size) % n_records(data)
    if isinstance(data, tuple):
        return tuple(np.asarray(c)[idx] for c in data)
    return np.asarray(data)[idx]


def _like(data, dataset):
    """``dataset`` cast to the dtypes of ``data``'s components."""
    if isinstance(data, tuple):
        return tuple(np.asarray(d, dtype=np.asarray(c).dtype) for c, d in
                     zip(data, dataset, strict=True))
    return np.asarray(dataset, dtype=np.asarray(data).dtype)


def _records(alg, canary: str):
    """(record in D1 / added, record in D0 or None, opposite record or None)."""
    if canary == "gradient":
        return alg.gradient_canary(+1.0), alg.gradient_canary(-1.0), alg.gradient_canary(-1.0)
    rec = alg.input_canary
    if alg.claim.relation == "replace-one":
        if not (isinstance(rec, tuple) and len(rec) == 2):
            raise InvalidMechanismError("under replace-one `input_canary` must be a pair of "
                                        f"records (a, b), got {rec!r:.80}")
        return rec[1], rec[0], rec[0]
    return rec, None, None


def _pair(base, relation: str, plus, minus, how: str) -> NeighbouringPair:
    if relation == "add-remove":
        p = add_one(base, plus)
    else:
        p = replace_one(base, 0, plus, baseline_record=minus)
    return NeighbouringPair(p.d0, p.d1, p.relation, how)


def _declared_batch_size(alg) -> tuple[int | None, str]:
    s = alg.sampling
    if s is not None and s.kind == "poisson":
        return None, "Poisson sampling declared: batch boundaries do not exist"
    b = s.batch_size if s is not None else None
    b = b if b is not None else alg.batch_size
    if b is None:
        return None, "no batch size declared (`sampling.batch_size` or `batch_size`)"
    b = int(round(float(b)))
    return (b, "") if b >= 1 else (None, f"declared batch size {b} < 1")


def _starts(alg) -> tuple[list, str]:
    pts, hook = alg.starting_points, alg.with_start
    if pts is None or hook is None:
        return [], ("the starting parameters were not searched: the algorithm offers no "
                    "`starting_points` with `with_start(point)`")
    items = list(pts.items()) if isinstance(pts, Mapping) else \
        [(f"{i}", p) for i, p in enumerate(pts)]
    out = []
    for name, point in items:
        out.append((str(name), validate_algorithm(hook(point))))
    return out, f"starting parameters searched: as given and {len(out)} offered"


def candidate_datasets(algorithm, canary: str | None = None) -> tuple[list, list]:
    """The candidate neighbouring datasets of a whole-run audit (module docstring).

    Parameters
    ----------
    algorithm : Algorithm
        With ``data`` and a canary hook; optional ``sampling`` / ``batch_size``,
        ``starting_points`` and ``with_start``.
    canary : {"gradient", "input"}, optional
        Default: :func:`~dpclaims.audits.whole_run.default_canary`.

    Returns
    -------
    (candidates, notes)
        A list of :class:`DatasetCandidate` ("quiet" first, duplicates removed) and a
        list of sentences saying what was not searched and why.

    Raises
    ------
    InvalidMechanismError
        No ``data``, no canary, an input canary of the wrong form for the relation.
    """
    alg = validate_algorithm(algorithm)
    canary = canary or default_canary(alg)
    data = alg.data
    if data is None:
        raise InvalidMechanismError(f"algorithm {alg.name!r} has no `data` to search around")
    relation = alg.claim.relation
    plus, minus, against = _records(alg, canary)
    n = n_records(data)
    notes = []
    bases = [("quiet", DESCRIPTIONS["quiet"], data)]
    if against is not None:
        bases.append(("aligned against", DESCRIPTIONS["aligned against"],
                      _like(data, _uniform(against, n))))
    else:
        notes.append("'aligned against' not built: an add-remove input canary has no "
                     "opposite record")
    bases.append(("aligned with", DESCRIPTIONS["aligned with"], _like(data, _uniform(plus, n))))
    dup_index = 0 if relation == "add-remove" else 1
    if n > dup_index:
        bases.append(("duplicated canary", DESCRIPTIONS["duplicated canary"],
                      replace_record(data, dup_index, plus)))
    b, why = _declared_batch_size(alg)
    if relation != "add-remove":
        notes.append("batch-boundary sizes not searched: N is public under replace-one")
    elif b is None:
        notes.append(f"batch-boundary sizes not searched: {why}")
    else:
        k = max(1, round(n / b))
        for size, what in ((k * b, "kB"), (k * b - 1, "kB - 1")):
            if size < 1 or size == n:
                continue
            for name, desc, base in bases[:2]:
                bases.append((f"{name}, N = {size} = {what}",
                              f"{desc}; trimmed or repeated to {size} records (B = {b}, "
                              f"k = {k}): the added record "
                              + ("starts a new batch" if what == "kB" else "fills the last "
                                 "batch"), _resized(base, size)))
    starts, note = _starts(alg)
    notes.append(note)
    out, seen = [], set()
    for start, a in [("as given", alg)] + starts:
        for name, desc, base in bases:
            how = f"dataset '{name}': {desc}" + ("" if start == "as given"
                                                  else f"; start {start}")
            p = _pair(base, relation, plus, minus, how)
            key = (start, _key(p))
            if key in seen:
                continue
            seen.add(key)
            out.append(DatasetCandidate(name, desc, p, a, start))
    return out, notes


@dataclass(frozen=True)
class DatasetSelection:
    """The outcome of :func:`select_dataset`.

    Attributes
    ----------
    candidate : DatasetCandidate
        The chosen datasets.
    index : int
    n_candidates : int
    pilot_runs : int
        Runs per dataset of each pilot (0: one candidate, no pilot).
    pilots : list of dict
        Per candidate: name, start, description, pilot certificate, credible bound,
        AUROC, trace statistic chosen (if any).
    notes : list of str
        What was not searched and why.
    """

    candidate: DatasetCandidate
    index: int
    n_candidates: int
    pilot_runs: int
    pilots: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def describe(self) -> str:
        if self.n_candidates == 1:
            return "one candidate dataset: no selection"
        return (f"selected among {self.n_candidates} candidate datasets by pilot whole-run "
                f"audits of {self.pilot_runs} runs per dataset each, on runs of their own "
                "(seeds derived from the root seed); the certificate is computed on fresh "
                "runs, so no union bound over the candidates is needed")

    def to_dict(self) -> dict:
        c = self.candidate
        return {"selected": c.label, "description": c.description, "start": c.start,
                "index": self.index, "n_candidates": self.n_candidates,
                "pilot_runs": self.pilot_runs, "rule": self.describe(),
                "pilots": list(self.pilots), "notes": list(self.notes)}


def select_dataset(candidates, pilot_runs: int, *, canary: str, alpha: float = 0.05,
                   seed: int = 0, workers: int = 1, trace_statistic: str = "choose",
                   notes=()) -> DatasetSelection:
    """Choose the datasets to audit among ``candidates`` by pilot audits on their own runs.

    Parameters
    ----------
    candidates : sequence of DatasetCandidate
        At least one (:func:`candidate_datasets`).
    pilot_runs : int
        Runs per dataset of each pilot (>= 2).
    canary : {"gradient", "input"}
    alpha : float
        The pilots' nominal level (it only ranks them; no pilot certificate is reported
        as a result).
    seed : int
        Candidate j's pilot uses ``derived_seed(seed, 6, j)``.
    workers : int
    trace_statistic : {"declared", "choose"}
        As in :func:`~dpclaims.audits.whole_run.audit_whole_run`.
    notes : sequence of str
        Kept in the selection's record.

    Returns
    -------
    DatasetSelection
        A candidate other than the first whose run raises ValueError (e.g. an algorithm
        that refuses a dataset of canaries only) is listed with ``pilot_certificate``
        None and the error under ``not_run``, and is never chosen.

    Raises
    ------
    ValueError
        No candidates, pilot_runs < 2, alpha outside (0, 1); the first candidate's
        (the quiet dataset's) pilot failing.
    """
    candidates = list(candidates)
    if not candidates:
        raise ValueError("select_dataset needs at least one candidate")
    alpha = check_probability(alpha, "alpha")
    if len(candidates) == 1:
        return DatasetSelection(candidates[0], 0, 1, 0, [], list(notes))
    pilot_runs = check_count(pilot_runs, "pilot_runs", minimum=2)
    pilots, keys = [], []
    for j, c in enumerate(candidates):
        try:
            w = audit_whole_run(c.algorithm, pilot_runs, canary=canary, alpha=alpha,
                                seed=derived_seed(seed, 6, j), workers=workers, pair=c.pair,
                                trace_statistic=trace_statistic)
        except ValueError as exc:       # InvalidMechanismError included
            if j == 0:                  # the quiet dataset: the audit's own pair
                raise
            pilots.append({"dataset": c.name, "start": c.start, "description": c.description,
                           "pilot_certificate": None,
                           "not_run": f"{type(exc).__name__}: {str(exc)[:200]}"})
            keys.append((-math.inf, -math.inf, -j))
            continue
        r = w.result
        pilots.append({"dataset": c.name, "start": c.start, "description": c.description,
                       "pilot_certificate": round(r.epsilon_lower_bound, 6),
                       "pilot_credible_bound": round(r.epsilon_credible_lower, 6),
                       "pilot_auroc": round(r.auroc, 6),
                       "trace_statistic": w.trace_statistic})
        keys.append((r.epsilon_lower_bound, r.epsilon_credible_lower, -j))
    best = max(range(len(candidates)), key=lambda j: keys[j])
    return DatasetSelection(candidates[best], best, len(candidates), pilot_runs, pilots,
                            list(notes))


def audit_whole_run_searched(algorithm, n_runs: int, pilot_runs: int, *,
                             canary: str | None = None, alpha: float = 0.05, seed: int = 0,
                             workers: int = 1,
                             trace_statistic: str = "choose") -> WholeRunAudit:
    """A whole-run audit on the candidate datasets chosen by pilot audits.

    :func:`candidate_datasets`, then :func:`select_dataset` (pilots of ``pilot_runs``
    runs per dataset on seeds of their own), then
    :func:`~dpclaims.audits.whole_run.audit_whole_run` with ``n_runs`` fresh runs per
    dataset on the chosen pair, seeded by ``seed``. With ``trace_statistic="choose"``
    every audit (pilot and final) chooses its full-trace statistic on its own training
    split (:mod:`dpclaims.audits.trace_statistics`).

    Parameters
    ----------
    algorithm : Algorithm
    n_runs : int
        Runs per dataset of the final audit (>= 2).
    pilot_runs : int
        Runs per dataset of each pilot (>= 2), e.g.
        :attr:`~dpclaims.claims.budgets.VariantBudget.pilot_trials`.
    canary, alpha, seed, workers
        As in :func:`~dpclaims.audits.whole_run.audit_whole_run`.
    trace_statistic : {"declared", "choose"}

    Returns
    -------
    WholeRunAudit
        Its ``search`` (:meth:`DatasetSelection.to_dict`) names the dataset that decided
        and lists every pilot; ``dataset`` is the chosen name.

    Raises
    ------
    InvalidMechanismError, ValueError
        As :func:`~dpclaims.audits.whole_run.audit_whole_run` and
        :func:`candidate_datasets`.
    """
    alg = validate_algorithm(algorithm)
    canary = canary or default_canary(alg)
    candidates, notes = candidate_datasets(alg, canary)
    sel = select_dataset(candidates, pilot_runs, canary=canary, alpha=alpha, seed=seed,
                         workers=workers, trace_statistic=trace_statistic, notes=notes)
    c = sel.candidate
    return audit_whole_run(c.algorithm, n_runs, canary=canary, alpha=alpha, seed=seed,
                           workers=workers, pair=c.pair, trace_statistic=trace_statistic,
                           search=sel.to_dict())


def dataset_summary(w: WholeRunAudit) -> str:
    """One sentence: the dataset that decided and the pilots' certificates."""
    if w.search is None:
        return "Dataset: the algorithm's data as given (no search)."
    s = w.search
    rows = "; ".join(f"{p['dataset']}" + ("" if p["start"] == "as given" else
                                          f" (start {p['start']})")
                     + (" not run" if p["pilot_certificate"] is None
                        else f" {p['pilot_certificate']:.3g}") for p in s["pilots"])
    return (f"Dataset: '{s['selected']}' ({s['description']}), "
            + (f"chosen by pilot audits of {s['pilot_runs']} runs per dataset (pilot "
               f"certificates: {rows})." if s["pilots"] else "the only candidate.")
            + "".join(f" {n[0].upper()}{n[1:].rstrip('.')}." for n in s["notes"]))


__all__ = ["DATASET_KINDS", "DatasetCandidate", "DatasetSelection", "audit_whole_run_searched",
           "candidate_datasets", "dataset_summary", "select_dataset"]
