"""Algorithms and whole-run audits: a privacy claim about T steps, audited end to end.

A mechanism (:mod:`dpclaims.audits.mechanism`) is one release. An **algorithm** is a
whole run: T noisy steps, the sampling of each step's records, and what is finally
released. Its claim is about the run, e.g. ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
GaussianDpEvent(sigma)), T)`` for DP-SGD-style algorithms (Abadi et al. 2016).

The algorithm protocol
----------------------
Required:

``name`` : str
    The variant's name, used in the report.
``claim`` : :class:`~dpclaims.audits.mechanism.PrivacyClaim`
    With the DpEvent of the whole run.
``threat_model`` : {"final-iterate", "full-trace"}
    What ``run`` returns and the adversary sees: the final output only, or every
    released statistic of every step.
``run(data, rng, n_runs) -> ndarray``
    ``n_runs`` independent runs on ``data`` in one call, vectorised over the run axis
    (a Python loop over the steps only, never over the runs). Shape ``(n_runs, P)``
    (final iterate) or ``(n_runs, S, k)`` (full trace: S released statistics of length
    k each, in release order).

Optional:

``data``
    The dataset the canaries are added to (a dataset of
    :mod:`dpclaims.analysis.records`).
``input_canary``
    An input-space canary: a record (add-remove: D against D + canary) or a pair of
    records ``(a, b)`` (replace-one: record 0 of D set to a, resp. b).
``gradient_canary(sign) -> record``
    The gradient-canary hook: a record whose clipped per-example contribution to
    every step's released statistic is ``sign * clip * canary_direction`` whatever the
    state (the "Dirac gradient canary" of Nasr et al. 2023). DP-SGD's guarantee holds
    for every per-example gradient of norm <= C, so the adversary may choose it.
``canary_direction`` : array (k,)
    Unit vector u in the space of a step's released statistic.
``clip`` : float
    C, the norm of the canary's contribution.
``updates(releases) -> (n_runs, S, k)``
    The per-step contribution a record makes, read off a full trace by
    post-processing (default: the releases themselves), e.g. DP-SEP's residual
    theta~_new - (weight theta_f + theta_0), where theta_f is a function of the
    previous release.
``trace_reduction`` : {"sum", "max-per-epoch"} and ``epoch_length`` : int
    How the projections <update_s, u> / C are combined (default "sum").
``max_runs_per_call`` : int
    The runs of one underlying call (a compiled chunk of :mod:`dpclaims.adapters.jax`):
    :func:`audit_whole_run` makes its default blocks whole multiples of it.
``sampling`` : :class:`~dpclaims.analysis.sampling.Sampling`
    The sampler the run performs (its per-step rate for the likelihood-ratio trace
    statistic, its batch size for the batch-boundary datasets of the search).
``starting_points`` and ``with_start(point) -> algorithm``
    Starting parameters the dataset search tries (:mod:`dpclaims.audits.adversarial`).
``step(state, batch, rng) -> (n, k)``, ``step_sensitivity``, ``random_states(rng, n) -> (n, P)``
    One noisy release from given states (n, P) on a given batch, for the property test
    of the update's sensitivity from random states
    (:func:`dpclaims.claims.checks.whole_run.check_step_sensitivity`). With the same ``rng``
    seed on neighbouring batches the noise is the same, so the distance of two
    releases is the distance of the noiseless updates.

An object with ``run`` and ``release`` is both an algorithm and a mechanism: an error
(:func:`object_kind`).

The whole-run audit (Nasr, Song, Thakurta, Papernot, Carlini 2021; Nasr et al. 2023;
Steinke, Nasr, Jagielski 2023)
-------------------------------------------------------------------------------------
The releases of whole runs are outputs of a mechanism whose release is a run
(:class:`RunMechanism`), audited by :func:`dpclaims.audits.core.audit`: the
Clopper-Pearson certificate on a held-out split, the threshold (and any fitted score)
on the training split. The neighbouring pair is built from a canary:

* **gradient canary** (white box): add-remove, D against D + g(+1); replace-one,
  record 0 set to g(-1), resp. g(+1).
* **input-space canary** (black box on the inputs): the ``input_canary`` record(s).

The observed statistic (the threat model is recorded in the evidence):

* **final-iterate**: the final output (n, P), scored by Fisher's linear discriminant
  fitted on the training split (optimal for Gaussian outputs).
* **full-trace**, gradient canary: sum_s <update_s, u> / C (Nasr et al. 2023, Sec. 4):
  the log-likelihood-ratio statistic when every step holds the canary (q = 1); under
  Poisson(q) steps the likelihood ratio is sum_s log(1 - q + q exp((z_s - 1/2) / sigma^2)),
  which this sum tracks (the same certificates to seed noise on the planted DPVI bug);
  "max-per-epoch" sums the per-epoch maxima instead (a shuffled pass
  that holds the canary exactly once per epoch at a hidden position).
* **full-trace**, input canary: the updates summed over steps (n, k), Fisher.
* **full-trace**, gradient canary, ``trace_statistic="choose"`` (what ``check-variant``
  uses): the declared statistic, the max over steps and the per-step likelihood-ratio
  combination, one chosen on the training split
  (:mod:`dpclaims.audits.trace_statistics`: a leak confined to a few steps is not
  diluted by the sum).

The datasets: :func:`canary_pair` around ``data`` (the "quiet" dataset), or a ``pair``
given to :func:`audit_whole_run`: :func:`dpclaims.audits.adversarial.
audit_whole_run_searched` passes the one its pilot audits chose among adversarial
candidates (aligned against, aligned with, duplicated canary, batch-boundary sizes).

The statistic is computed inside each block of runs (so a block holds only
``block_size`` traces), the block size is chosen so that a block's releases hold at most
:data:`BLOCK_FLOATS` floats.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_finite_array,
    check_probability,
)
from dpclaims.audits.capabilities import (  # noqa: F401  (WholeRunAlgorithm re-exported)
    AlgorithmCapabilities,
    WholeRunAlgorithm,
    has_release,
    has_run,
    object_name,
    read_algorithm,
)
from dpclaims.audits.core import AuditResult, audit
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    NeighbouringPair,
    PrivacyClaim,
    add_one,
    real_array,
    replace_one,
)
from dpclaims.audits.trace_statistics import (
    TraceChoiceScore,
    candidate_statistics,
    likelihood_ratio_parameters,
    step_projections,
    trace_columns,
)


class ThreatModel(str, Enum):
    """What a whole run releases to the adversary: only the final iterate, or every
    iterate (the full trace)."""

    FINAL_ITERATE = "final-iterate"
    FULL_TRACE = "full-trace"


#: The threat models' values.
THREAT_MODELS = tuple(t.value for t in ThreatModel)
CANARIES = ("gradient", "input")
TRACE_REDUCTIONS = ("sum", "max-per-epoch")
#: How the full-trace gradient-canary statistic is fixed: the algorithm's
#: ``trace_reduction``, or chosen on the training split (:mod:`.trace_statistics`).
TRACE_STATISTIC_MODES = ("declared", "choose")
#: Largest number of floats a block of runs' releases may hold (32 MB).
BLOCK_FLOATS = 4_000_000

THREAT_MODEL_TEXT = {
    "final-iterate": "final iterate: the adversary sees only the run's final output and "
                     "knows the neighbouring pair",
    "full-trace": "full trace: the adversary sees every released statistic of every step "
                  "(not the batches nor the noise) and knows the neighbouring pair",
}


@runtime_checkable
class Algorithm(Protocol):
    """The algorithm protocol (module docstring): ``name``, ``claim``, ``threat_model``
    and the vectorised ``run(data, rng, n_runs) -> (n_runs, ...)``."""

    name: str
    claim: PrivacyClaim
    threat_model: str

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray: ...


def object_kind(obj) -> str:
    """"mechanism" or "algorithm", detected by attributes (callable ``release`` / ``run``).

    Raises
    ------
    InvalidMechanismError
        The object has both (the conflict is named) or neither.
    """
    release, run = has_release(obj), has_run(obj)
    name = object_name(obj, type(obj).__name__)
    if release and run:
        raise InvalidMechanismError(
            f"{name!r} has both `release` (the mechanism protocol: one release) and `run` "
            "(the algorithm protocol: a whole run): it must be one or the other; rename one")
    if run:
        return "algorithm"
    if release:
        return "mechanism"
    raise InvalidMechanismError(f"{name!r} has neither `release(data, rng, n)` (a mechanism) "
                                "nor `run(data, rng, n_runs)` (an algorithm)")


def is_algorithm(obj) -> bool:
    """True when ``obj`` has a callable ``run`` and no ``release`` (no error raised)."""
    return has_run(obj) and not has_release(obj)


def validate_algorithm(obj) -> AlgorithmCapabilities:
    """``obj``'s members read once (:func:`~dpclaims.audits.capabilities.read_algorithm`)
    and checked against the algorithm protocol (module docstring).

    Returns
    -------
    AlgorithmCapabilities
        Itself an algorithm (``name``, ``claim``, ``threat_model``, ``run``); a value
        already validated is returned as it is.

    Raises
    ------
    InvalidMechanismError
        Naming the missing or wrong attribute: no string ``name``, no
        :class:`PrivacyClaim` ``claim``, no callable ``run``, an unknown
        ``threat_model``, a ``release`` as well as a ``run``, a ``gradient_canary``
        without ``canary_direction`` and a positive ``clip``, an unknown
        ``trace_reduction``, a ``step`` without ``step_sensitivity`` or
        ``random_states``.
    """
    if isinstance(obj, AlgorithmCapabilities) and obj.validated:
        return obj
    name = object_name(obj)
    if not isinstance(name, str) or not name:
        raise InvalidMechanismError(f"{type(obj).__name__} object is not an algorithm: it "
                                    f"needs a non-empty str attribute `name`, got {name!r}")
    object_kind(obj)
    caps = read_algorithm(obj)
    if not callable(caps.run):
        raise InvalidMechanismError(f"algorithm {name!r} has no callable "
                                    "`run(data, rng, n_runs)`")
    if not isinstance(caps.claim, PrivacyClaim):
        raise InvalidMechanismError(f"algorithm {name!r}: `claim` must be a PrivacyClaim, got "
                                    f"{type(caps.claim).__name__}")
    if caps.threat_model not in THREAT_MODELS:
        raise InvalidMechanismError(f"algorithm {name!r}: `threat_model` must be one of "
                                    f"{THREAT_MODELS}, got {caps.threat_model!r}")
    if caps.gradient_canary is not None:
        if not callable(caps.gradient_canary):
            raise InvalidMechanismError(f"algorithm {name!r}: `gradient_canary` must be "
                                        "callable (sign -> record)")
        canary_direction(caps)
        clip = caps.clip
        if not isinstance(clip, (int, float)) or not (math.isfinite(clip) and clip > 0):
            raise InvalidMechanismError(f"algorithm {name!r}: a gradient canary needs `clip`, "
                                        f"a finite number > 0, got {clip!r}")
    red = caps.trace_reduction
    if red not in TRACE_REDUCTIONS:
        raise InvalidMechanismError(f"algorithm {name!r}: `trace_reduction` must be one of "
                                    f"{TRACE_REDUCTIONS}, got {red!r}")
    if red == "max-per-epoch":
        check_count(caps.epoch_length, "epoch_length")
    if caps.max_runs_per_call is not None:
        check_count(caps.max_runs_per_call, "max_runs_per_call")
    if caps.step is not None:
        for attr, value in (("step_sensitivity", caps.step_sensitivity),
                            ("random_states", caps.random_states)):
            if value is None:
                raise InvalidMechanismError(f"algorithm {name!r} has `step` but no `{attr}`: "
                                            "the property test of the update needs both")
    return replace(caps, validated=True)


def canary_direction(algorithm) -> np.ndarray:
    """The algorithm's ``canary_direction`` as a unit vector (k,).

    Raises InvalidMechanismError when it is missing, not finite, or zero.
    """
    algorithm = read_algorithm(algorithm)
    u = algorithm.canary_direction
    if u is None:
        raise InvalidMechanismError(f"algorithm {algorithm.name!r}: a gradient canary needs "
                                    "`canary_direction` (a unit vector in the released space)")
    u = real_array(u, f"algorithm {algorithm.name!r}: `canary_direction`").ravel()
    norm = float(np.linalg.norm(u)) if np.all(np.isfinite(u)) else math.nan
    if not (math.isfinite(norm) and norm > 0):
        raise InvalidMechanismError(f"algorithm {algorithm.name!r}: `canary_direction` must be "
                                    f"a finite non-zero vector, got {u!r}")
    return u / norm


# --------------------------------------------------------------------------- canaries


def canary_pair(algorithm, canary: str = "gradient") -> NeighbouringPair:
    """The neighbouring pair of a whole-run audit, built around ``algorithm.data``.

    Parameters
    ----------
    algorithm : Algorithm
        With ``data``, and ``gradient_canary`` (``canary="gradient"``) or
        ``input_canary`` (``canary="input"``).
    canary : {"gradient", "input"}

    Returns
    -------
    NeighbouringPair
        Under the claim's relation: add-remove, (D, D + canary); replace-one, record 0
        of D set to the canary g(-1) / a, resp. g(+1) / b.

    Raises
    ------
    ValueError
        An unknown canary kind, an algorithm without ``data`` or without the canary, an
        input canary of the wrong form for the relation.
    """
    if canary not in CANARIES:
        raise ValueError(f"canary must be one of {CANARIES}, got {canary!r}")
    algorithm = read_algorithm(algorithm)
    data = algorithm.data
    if data is None:
        raise InvalidMechanismError(
            f"algorithm {algorithm.name!r} has no `data` to add a canary to")
    relation = algorithm.claim.relation
    if canary == "gradient":
        hook = algorithm.gradient_canary
        if hook is None:
            raise InvalidMechanismError(
                f"algorithm {algorithm.name!r} has no `gradient_canary` hook")
        if relation == "add-remove":
            pair = add_one(data, hook(+1.0))
            how = "D against D + a gradient canary (+u)"
        else:
            pair = replace_one(data, 0, hook(+1.0), baseline_record=hook(-1.0))
            how = "record 0 set to a gradient canary -u, resp. +u"
    else:
        rec = algorithm.input_canary
        if rec is None:
            raise InvalidMechanismError(f"algorithm {algorithm.name!r} has no `input_canary`")
        if relation == "add-remove":
            pair = add_one(data, rec)
            how = "D against D + an input-space canary record"
        else:
            if not (isinstance(rec, tuple) and len(rec) == 2):
                raise InvalidMechanismError(
                    "under replace-one `input_canary` must be a pair of records "
                    f"(a, b), got {rec!r:.80}")
            pair = replace_one(data, 0, rec[1], baseline_record=rec[0])
            how = "record 0 set to input-space canary a, resp. b"
    return NeighbouringPair(pair.d0, pair.d1, pair.relation, f"{canary} canary: {how}")


# --------------------------------------------------------------------------- statistics


def trace_projection(updates, direction, clip: float, reduction: str = "sum",
                     epoch_length: int | None = None) -> np.ndarray:
    """The full-trace canary statistic: projections <update_s, u> / C combined over steps.

    Parameters
    ----------
    updates : array (n, S, k)
        Per-step contributions read off n traces.
    direction : array (k,)
        u, unit vector (normalised here).
    clip : float
        C > 0 (the canary's contribution has norm C per step).
    reduction : {"sum", "max-per-epoch"}
        "sum": sum over the S steps (the log-likelihood-ratio statistic when every step's
        update holds the canary's C u; with Poisson(q) steps a close stand-in for it;
        Nasr et al. 2023).
        "max-per-epoch": the S steps are cut into epochs of ``epoch_length`` and the
        per-epoch maxima summed (a pass holding the canary once per epoch at a hidden
        position).
    epoch_length : int, optional
        Needed for "max-per-epoch"; must divide S.

    Returns
    -------
    ndarray (n,)

    Raises
    ------
    ValueError
        Not 3-d updates, a direction of the wrong length or zero, clip <= 0, an unknown
        reduction, an epoch length that does not divide S, non-finite values.
    """
    proj = step_projections(updates, direction, clip)                    # (n, S), checked
    if reduction == "sum":
        return proj.sum(axis=1)
    if reduction == "max-per-epoch":
        e = check_count(epoch_length, "epoch_length")
        if proj.shape[1] % e:
            raise ValueError(f"epoch_length {e} does not divide the {proj.shape[1]} steps")
        return proj.reshape(proj.shape[0], -1, e).max(axis=2).sum(axis=1)
    raise ValueError(f"reduction must be one of {TRACE_REDUCTIONS}, got {reduction!r}")


def first_column(outputs) -> np.ndarray:
    """outputs (n, k) -> outputs[:, 0] (n,): the score of a statistic computed in the run."""
    return np.asarray(outputs)[:, 0]


@dataclass(frozen=True, eq=False)
class RunMechanism:
    """An algorithm's whole run as a mechanism: ``release`` = the statistic of ``run``.

    ``release(data, rng, n)`` calls ``algorithm.run(data, rng, n)`` and reduces each run's
    releases to the audit's statistic (:func:`statistic_of`), so the audit engine
    (:func:`~dpclaims.audits.core.audit`) sees a vector per run. Its ``claim`` is the
    algorithm's.
    """

    algorithm: Any
    canary: str
    statistic: str
    columns: tuple = ()
    lr_q: float | None = None
    lr_sigma: float | None = None

    @property
    def name(self) -> str:
        return self.algorithm.name

    @property
    def claim(self) -> PrivacyClaim:
        return self.algorithm.claim

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        out = real_array(self.algorithm.run(data, rng, n),
                         f"algorithm {self.name!r}: run(data, rng, n_runs={n})")
        if out.ndim == 0 or out.shape[0] != n:
            raise InvalidMechanismError(f"algorithm {self.name!r}: run(data, rng, n_runs={n}) "
                                        f"must return shape (n_runs, ...), got {out.shape}")
        return reduce_releases(self.algorithm, out, self.statistic, self.columns,
                               q=self.lr_q, sigma=self.lr_sigma)


STATISTICS = {
    "final-output": "the final output, Fisher's linear discriminant fitted on the training "
                    "split",
    "trace-projection": "sum over steps of <update_s, u> / C, the projection of each step's "
                        "update on the canary direction (the log-likelihood-ratio statistic "
                        "for Gaussian updates that all hold the canary)",
    "trace-max-per-epoch": "sum over epochs of the largest <update_s, u> / C in the epoch "
                           "(the canary is in one step per epoch, at a hidden position)",
    "trace-sum-fisher": "the updates summed over steps, Fisher's linear discriminant "
                        "fitted on the training split",
    "trace-choice": "one of the per-step projections' statistics (sum, max over steps, "
                    "per-epoch maxima, per-step likelihood-ratio combination) chosen on the "
                    "training split (dpclaims.audits.trace_statistics)",
}


def statistic_of(algorithm, canary: str, trace_statistic: str = "declared") -> str:
    """The statistic of a whole-run audit (a key of :data:`STATISTICS`).

    ``trace_statistic="choose"``: a gradient canary on a full trace gets "trace-choice"
    (the statistic chosen on the training split); "declared": the algorithm's
    ``trace_reduction``.
    """
    algorithm = read_algorithm(algorithm)
    if trace_statistic not in TRACE_STATISTIC_MODES:
        raise ValueError(f"trace_statistic must be one of {TRACE_STATISTIC_MODES}, got "
                         f"{trace_statistic!r}")
    if algorithm.threat_model == "final-iterate":
        return "final-output"
    if canary == "gradient":
        if trace_statistic == "choose":
            return "trace-choice"
        red = algorithm.trace_reduction
        return "trace-projection" if red == "sum" else "trace-max-per-epoch"
    return "trace-sum-fisher"


def reduce_releases(algorithm, releases: np.ndarray, statistic: str, columns: tuple = (),
                    *, q: float | None = None, sigma: float | None = None) -> np.ndarray:
    """Releases of n runs -> the audit's outputs (n, k'): the statistic of each run.

    "trace-choice": one column per name in ``columns`` (keys of
    :data:`~dpclaims.audits.trace_statistics.TRACE_STATISTICS`; q and sigma for the
    likelihood-ratio one).

    Raises InvalidMechanismError on a full trace that is not (n, S, k).
    """
    algorithm = read_algorithm(algorithm)
    n = releases.shape[0]
    if statistic == "final-output":
        return releases.reshape(n, -1)
    if releases.ndim != 3:
        raise InvalidMechanismError(f"algorithm {algorithm.name!r} declares a full trace: "
                                    f"run must return (n_runs, S, k), got {releases.shape}")
    up = algorithm.updates
    updates = releases if up is None else real_array(
        up(releases), f"algorithm {algorithm.name!r}: updates(releases)")
    if statistic == "trace-sum-fisher":
        return updates.sum(axis=1)
    if statistic == "trace-choice":
        z = step_projections(updates, canary_direction(algorithm), float(algorithm.clip))
        return trace_columns(z, columns, q=q, sigma=sigma, epoch_length=algorithm.epoch_length)
    reduction = "sum" if statistic == "trace-projection" else "max-per-epoch"
    return trace_projection(updates, canary_direction(algorithm), float(algorithm.clip),
                            reduction, algorithm.epoch_length)[:, None]


# --------------------------------------------------------------------------- the audit


@dataclass(frozen=True)
class WholeRunAudit:
    """The outcome of :func:`audit_whole_run`.

    Attributes
    ----------
    result : AuditResult
        The audit engine's result (certificate, estimates, counts).
    threat_model : str
        "final-iterate" or "full-trace".
    canary : str
        "gradient" or "input".
    statistic : str
        A key of :data:`STATISTICS`.
    n_runs : int
        Runs per dataset.
    seconds : float
        Wall time of the audit (not determined by the seed; not in ``to_dict``).
    block_size : int
        Runs per block.
    trace_choice : dict or None
        The trace statistic chosen on the training split (``chosen``), the candidates and
        their projected certificates (:class:`~dpclaims.audits.trace_statistics.
        TraceChoiceScore`); None when the statistic was not chosen.
    search : dict or None
        The dataset search's record (:meth:`dpclaims.audits.adversarial.DatasetSelection.
        to_dict`: the dataset that decided and every pilot); None without a search.
    """

    result: AuditResult
    threat_model: str
    canary: str
    statistic: str
    n_runs: int
    block_size: int
    seconds: float = field(default=0.0, compare=False)
    trace_choice: dict | None = None
    search: dict | None = None

    @property
    def trace_statistic(self) -> str | None:
        """The trace statistic chosen on the training split (None: not chosen)."""
        return None if self.trace_choice is None else self.trace_choice.get("chosen")

    @property
    def dataset(self) -> str:
        """The name of the neighbouring datasets audited ("quiet" without a search)."""
        return "quiet" if self.search is None else self.search["selected"]

    @property
    def epsilon_lower_bound(self) -> float:
        return self.result.epsilon_lower_bound

    @property
    def refutes_claim(self) -> bool:
        return self.result.refutes_claim

    def to_dict(self) -> dict:
        out = {"threat_model": self.threat_model,
               "threat_model_text": THREAT_MODEL_TEXT[self.threat_model],
               "canary": self.canary, "statistic": self.statistic,
               "statistic_text": STATISTICS[self.statistic], "n_runs": self.n_runs,
               "block_size": self.block_size, "audit": self.result.to_dict()}
        if self.trace_choice is not None:
            out["trace_statistic"] = dict(self.trace_choice)
        if self.search is not None:
            out["dataset_search"] = self.search
        return out


def default_canary(algorithm) -> str:
    """"gradient" when the algorithm has the hook, else "input"; ValueError with neither."""
    algorithm = read_algorithm(algorithm)
    if algorithm.gradient_canary is not None:
        return "gradient"
    if algorithm.input_canary is not None:
        return "input"
    raise ValueError(f"algorithm {algorithm.name!r} has neither a `gradient_canary` hook nor "
                     "an `input_canary`: no canary to audit with")


def whole_run_mechanism(algorithm, canary: str, alpha: float,
                        trace_statistic: str = "declared") -> tuple[RunMechanism, Any]:
    """The run as a mechanism and the audit's score: (RunMechanism, score).

    Parameters
    ----------
    algorithm : Algorithm
    canary : {"gradient", "input"}
    alpha : float
        The audit's significance (the trace choice projects certificates at it).
    trace_statistic : {"declared", "choose"}
        As in :func:`audit_whole_run`.

    Returns
    -------
    (RunMechanism, score)
        The score: the first column for a trace statistic computed in the run, Fisher's
        discriminant for vectors, a :class:`~dpclaims.audits.trace_statistics.
        TraceChoiceScore` (a fresh one, whose ``record`` names the choice) for
        "trace-choice" (candidates from :func:`~dpclaims.audits.trace_statistics.
        candidate_statistics`: the likelihood ratio needs the declared ``sampling`` or a
        sampled dp_event, and the claim's Gaussian sigma).

    Raises
    ------
    ValueError
        An unknown ``trace_statistic``.
    """
    algorithm = read_algorithm(algorithm)
    statistic = statistic_of(algorithm, canary, trace_statistic)
    if statistic == "trace-choice":
        dp_event = algorithm.claim.dp_event
        sampling = algorithm.sampling
        names, note = candidate_statistics(algorithm.trace_reduction, sampling, dp_event)
        q, sigma, _ = likelihood_ratio_parameters(sampling, dp_event)
        mech = RunMechanism(algorithm, canary, statistic, names, q, sigma)
        return mech, TraceChoiceScore(names, float(algorithm.claim.delta), alpha, note)
    mech = RunMechanism(algorithm, canary, statistic)
    score = first_column if statistic.startswith("trace-") and statistic != "trace-sum-fisher" \
        else "fisher"
    return mech, score


def audit_whole_run(algorithm, n_runs: int, *, canary: str | None = None,
                    alpha: float = 0.05, seed: int = 0, workers: int = 1,
                    block_size: int | None = None, pair: NeighbouringPair | None = None,
                    trace_statistic: str = "declared",
                    search: dict | None = None) -> WholeRunAudit:
    """Audit an algorithm's whole-run claim with a canary (module docstring).

    Parameters
    ----------
    algorithm : Algorithm
        With ``data`` and a canary; its ``threat_model`` says what ``run`` returns.
    n_runs : int
        Whole runs per dataset (>= 2): 20 % train the threshold (and a fitted score),
        80 % are held out for the certificate.
    canary : {"gradient", "input"}, optional
        Default: :func:`default_canary`.
    alpha : float
        Significance of the certificate, in (0, 1): it holds with probability >= 1 - alpha
        (a correct algorithm is falsely refuted with probability <= alpha).
    seed : int
        Seeds every block (:func:`~dpclaims.audits.core.audit`): same seed, same result.
    workers : int
        Processes.
    block_size : int, optional
        Runs per block; default: as many as keep a block's releases under
        :data:`BLOCK_FLOATS` floats (measured on a probe of two runs), at most 65,536,
        rounded down to a multiple of the algorithm's ``max_runs_per_call`` when it
        declares one (at least one such call).
    pair : NeighbouringPair, optional
        The datasets to audit on; default: :func:`canary_pair` (the quiet dataset).
        :func:`dpclaims.audits.adversarial.audit_whole_run_searched` passes the pair its
        search chose (on pilot runs of their own).
    trace_statistic : {"declared", "choose"}
        Full trace with the gradient canary: the algorithm's ``trace_reduction``, or
        the statistic chosen on the training split
        (:mod:`dpclaims.audits.trace_statistics`).
    search : dict, optional
        The dataset search's record, kept in the result's evidence.

    Returns
    -------
    WholeRunAudit

    Raises
    ------
    InvalidMechanismError
        Not an algorithm; a run of the wrong shape or with non-finite values.
    ValueError
        n_runs < 2, alpha outside (0, 1), no data or no canary.
    """
    algorithm = validate_algorithm(algorithm)
    n_runs = check_count(n_runs, "n_runs", minimum=2)
    alpha = check_probability(alpha, "alpha")
    canary = canary or default_canary(algorithm)
    pair = pair or canary_pair(algorithm, canary)
    mech, score = whole_run_mechanism(algorithm, canary, alpha, trace_statistic)
    statistic = mech.statistic
    if block_size is None:
        probe = real_array(algorithm.run(pair.d0, np.random.default_rng(
            np.random.SeedSequence(seed, spawn_key=(5,))), 2),
            f"algorithm {algorithm.name!r}: run(data, rng, n_runs=2)")
        per_run = max(1, probe[0].size)
        block_size = int(min(65_536, max(256, BLOCK_FLOATS // per_run)))
        chunk = algorithm.max_runs_per_call
        if chunk:  # whole chunks of the algorithm's own calls (e.g. a compiled shape)
            block_size = max(chunk, block_size // chunk * chunk)
    t0 = time.perf_counter()
    res = audit(mech, pair, n_runs, alpha=alpha, score=score, seed=seed, workers=workers,
                block_size=block_size)
    choice = dict(score.record) if isinstance(score, TraceChoiceScore) else None
    return WholeRunAudit(res, algorithm.threat_model, canary, statistic, n_runs, block_size,
                         time.perf_counter() - t0, choice, search)


def loop_runs(algorithm, data, seeds) -> np.ndarray:
    """Runs one at a time: ``algorithm.run(data, default_rng(s), 1)[0]`` for each seed.

    The Python loop over runs that :meth:`run`'s vectorisation replaces; for tests (the
    same seed gives the same run) and benchmarks (runs per second). Shape (len(seeds), ...).
    """
    return np.stack([np.asarray(algorithm.run(data, np.random.default_rng(s), 1))[0]
                     for s in seeds])


# ------------------------------------------------ argument checks shared by the families
def check_threat_model(tm: str) -> str:
    """``tm`` if it is one of :data:`THREAT_MODELS`; ValueError otherwise."""
    if tm not in THREAT_MODELS:
        raise ValueError(f"threat_model must be one of {THREAT_MODELS}, got {tm!r}")
    return tm


def check_gaussian_delta(delta: float) -> float:
    """``delta`` in (0, 1) (a Gaussian mechanism has no pure DP); ValueError otherwise."""
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must lie in (0, 1) for a Gaussian mechanism, got 0")
    return delta


def check_flagged(data, name: str, n_cols: int | None):
    """(x (N, d), y (N,), flag (N,)) checked: finite, one length, flags in {-1, 0, 1}."""
    if not isinstance(data, tuple) or len(data) != 3:
        raise ValueError(f"data must be a tuple (x (N, d), y (N,), {name} (N,))")
    x = check_finite_array(data[0], "x", ndim=2)
    y = check_finite_array(data[1], "y", ndim=1)
    c = check_finite_array(data[2], name, ndim=1)
    if y.shape[0] != x.shape[0] or c.shape[0] != x.shape[0]:
        raise ValueError(f"x, y, {name} must have the same number of rows, got "
                         f"{x.shape[0]}, {y.shape[0]}, {c.shape[0]}")
    if n_cols is not None and x.shape[1] != n_cols:
        raise ValueError(f"x must have d = {n_cols} columns, got {x.shape[1]}")
    if not np.isin(c, (-1.0, 0.0, 1.0)).all():
        raise ValueError(f"{name} must hold 0 (ordinary), 1 (canary +u) or -1 (canary -u)")
    return x, y, c


def check_canary_signs(signs, relation: str | None = None) -> np.ndarray:
    """The one-run audit's canary signs (R, m) checked, as a float array.

    Values in {-1, 0, +1} (:class:`~dpclaims.audits.capabilities.HasGradientCanaries`;
    0: the canary is absent). With ``relation`` "replace-one" every canary is in the data
    and its sign is its inclusion, so 0 is refused (for a run whose slots hold the
    canaries; None: 0 allowed). Raises ValueError naming the first bad value (or a
    non-finite or not 2-d ``signs``).
    """
    signs = check_finite_array(signs, "signs", ndim=2)
    one = relation == "replace-one"
    bad = ~np.isin(signs, (-1.0, 1.0) if one else (-1.0, 0.0, 1.0))
    if bad.any():
        what = ("-1 or +1 under replace-one (every canary is in the data)" if one
                else "-1, 0 or +1")
        raise ValueError(f"signs must hold {what}, got {float(signs[bad][0])!r}")
    return signs


def check_sampling_rate(q) -> float:
    """A Poisson sampling rate in (0, 1) (q = 1 is no sampling); ValueError otherwise."""
    q = float(q)
    if not (math.isfinite(q) and 0 < q < 1):  # DPVIConfig's Poisson rate: q = 1 is no sampling
        raise ValueError(f"sampling_rate must lie in (0, 1), got {q!r}")
    return q
