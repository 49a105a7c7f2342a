"""The audit engine: certified epsilon lower bounds for any mechanism, and estimates.

The certificate (Kairouz, Oh, Viswanath 2015; Jagielski, Ullman, Oprea 2020;
Nasr et al. 2021)
----------------------------------------------------------------------------
A mechanism M is (epsilon, delta)-DP only if every test of H0: "the output came
from D0" against H1: "from D1" has false-positive rate FPR and false-negative
rate FNR with

    FPR + e^epsilon FNR >= 1 - delta   and   FNR + e^epsilon FPR >= 1 - delta.

Given one-sided Clopper-Pearson upper bounds FPR_u, FNR_u, each at level a/2
(Bonferroni: both hold together with probability >= 1 - a), the certificate is

    epsilon_lb = max(0, log((1 - delta - FNR_u) / FPR_u), log((1 - delta - FPR_u) / FNR_u)),

which is <= the true epsilon with probability >= 1 - a whatever the mechanism,
provided the test (score and threshold) was fixed without looking at the counts
it is evaluated on. One significance budget ``alpha`` per audit: a = alpha for
one threshold, a = alpha / k for each of k thresholds (Bonferroni).

Threshold strategies (explicit types, as in jax_privacy's auditing module)
--------------------------------------------------------------------------
Each in :mod:`dpclaims.audits.thresholds` (the rank threshold in
:mod:`dpclaims.audits.thresholds_rank`), re-exported here; :func:`audit` calls their
hooks, and computes every number from the :class:`~dpclaims.audits.certificate.Certificate`
the strategy gives.
:class:`SplitThreshold`: a training split of the trials fits the score (when
none is given) and chooses the threshold; the held-out rest gives the counts.
:class:`BonferroniThresholds`: k thresholds stated before the held-out counts
are seen (given, or chosen on the training split), alpha / k each.
:class:`ExplicitThreshold`: one threshold given by the user.
:class:`RankThreshold` (claims with delta > 0): a small training split fits the score
and chooses a rank k among ranks anchored at the claim; the threshold is the order
statistic of D0's held-out scores with k of them above it, whose false-positive rate
is Beta(k + 1, m - k) distributed (Wilks 1941), so the Clopper-Pearson bound of k
errors in m bounds it exactly as it bounds a binomial count.

Estimates (can be wrong in either direction; never refute)
----------------------------------------------------------
``epsilon_gdp_estimate``: a Gaussian-DP mu fitted to the held-out trade-off
curve (Dong, Roth, Su 2022: a mu-GDP test has FNR = Phi(Phi^-1(1 - FPR) - mu)),
converted to epsilon at the claim's delta with the exact GDP conversion
(dp_accounting's ``get_epsilon_gaussian(1/mu, delta)``).
``epsilon_credible_lower``: a Bayesian one-sided credible bound at level 1 - alpha
(Zanella-Beguelin et al., "Bayesian estimation of differential privacy", ICML
2023): independent Jeffreys Beta posteriors for FPR and FNR at the certificate's
threshold, pushed through the epsilon formula above by Monte Carlo.
"""

from __future__ import annotations

import logging
import mmap
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.analysis.intervals import clopper_pearson_upper  # noqa: F401  (re-exported)
from dpclaims.analysis.validation import check_count, check_probability
from dpclaims.audits.certificate import (  # noqa: F401  (re-exported)
    Certificate,
    _sort_pair,
    auroc,
    credible_lower_bound,
    epsilon_from_gdp,
    epsilon_from_rates,
    epsilon_lower_bound,
    error_counts,
    gdp_mu_estimate,
    tradeoff_curve,
)
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    NeighbouringPair,
    PrivacyClaim,
    check_follows_rng,
    draw_release,
    output_shape,
    twin_generator,
    validate_mechanism,
)
from dpclaims.audits.scores import (
    AttackScore,
    ScoreError,
    TrainedScore,
    as_score,
    randomise_ties,
    score_levels,
    threshold_in_score_units,
)
from dpclaims.audits.thresholds import (  # noqa: F401  (re-exported)
    PROPOSALS,
    PROPOSALS_PURE_DP,
    RANKING_TAILS,
    VALIDATION_TAIL,
    BonferroniThresholds,
    Choice,
    ExplicitThreshold,
    SplitThreshold,
    ThresholdStrategy,
    as_threshold_strategy,
    choose_thresholds,
    discrete_threshold_grid,
)
from dpclaims.audits.thresholds_rank import (  # noqa: F401  (re-exported)
    RANK_MULTIPLIERS,
    RankThreshold,
    choose_rank,
    claim_anchored_ranks,
)
from dpclaims.execution.processes import (
    StartMethod,
    check_worker_timeout,
    collect,
    current_worker_timeout,
    default_worker_timeout,
    limit_worker_threads,
    load_for_worker,
    pickle_for_workers,
    record_start,
    start_method,
    stop_pool,
    worker_signals,
)

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    mechanism : str
        The mechanism's name.
    claim : PrivacyClaim
    pair : dict
        The neighbouring pair's description (:meth:`NeighbouringPair.to_dict`).
    epsilon_lower_bound : float
        The certificate: <= the true epsilon with probability >= 1 - alpha.
    refutes_claim : bool
        True only when the certificate exceeds ``claim.epsilon``.
    epsilon_gdp_estimate, gdp_mu_estimate : float or None
        Estimate: GDP mu fitted to the held-out trade-off, and its epsilon at
        ``claim.delta`` (None where no threshold has enough errors to fit, and the
        epsilon None for a pure-DP claim, delta = 0, where a GDP curve has none).
    epsilon_credible_lower : float
        Estimate: Bayesian credible lower bound at level 1 - alpha.
    auroc : float
        Held-out AUROC of the attack (estimate).
    tradeoff_fpr, tradeoff_fnr : tuple of float
        Empirical trade-off points on the held-out scores.
    threshold_strategy : str
        Its description.
    threshold : float
        The threshold the certificate rests on (the best one under Bonferroni), in
        score units.
    n_thresholds : int
        Thresholds certified (Bonferroni k; 1 otherwise).
    score : str
        Which score was used, described.
    n_trials, n_train, n_held_out : int
        Outputs per dataset: all, spent on training, behind the certificate.
    false_positives, false_negatives : int
        Held-out counts at ``threshold``.
    fpr_upper, fnr_upper : float
        Their Clopper-Pearson upper bounds (alpha / (2k) each). With
        :class:`RankThreshold`, ``fpr_upper`` is the bound of the rank k (Wilks), which
        is at least the count's: fewer than k scores lie above the threshold only when
        scores tie at it.
    alpha : float
    seed : int
    block_size, posterior_samples : int
        Together with ``seed``, they determine every number above.
    score_name : str
        The score's name ("fisher", "likelihood-ratio", "logistic",
        "gradient-boosting", "user score").
    score_choice : str
        Why that score: the rule of ``auto`` with the numbers it saw, or who named it.
    tie_probability : float or None
        For a discrete score: the probability of guessing D1 when the score equals
        ``threshold`` (the randomised threshold); None for a continuous score.
    held_out_scores : (ndarray, ndarray)
        The held-out scores on D0 and D1 (for figures; not in :meth:`to_dict`); for
        a discrete score, after the tie-breaking map v = 2 rank(s) + u.
    """

    mechanism: str
    claim: PrivacyClaim
    pair: dict
    epsilon_lower_bound: float
    refutes_claim: bool
    epsilon_gdp_estimate: float | None
    gdp_mu_estimate: float | None
    epsilon_credible_lower: float
    auroc: float
    tradeoff_fpr: tuple
    tradeoff_fnr: tuple
    threshold_strategy: str
    threshold: float
    n_thresholds: int
    score: str
    n_trials: int
    n_train: int
    n_held_out: int
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    alpha: float
    seed: int
    block_size: int
    posterior_samples: int
    score_name: str = "fisher"
    score_choice: str = ""
    tie_probability: float | None = None
    held_out_scores: tuple = field(default=(), repr=False, compare=False)

    @property
    def claimed_epsilon(self) -> float:
        return self.claim.epsilon

    @property
    def delta(self) -> float:
        return self.claim.delta

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "held_out_scores"}
        out["claim"] = self.claim.to_dict()
        out["tradeoff_fpr"] = [round(float(v), 6) for v in self.tradeoff_fpr]
        out["tradeoff_fnr"] = [round(float(v), 6) for v in self.tradeoff_fnr]
        return out


# --------------------------------------------------------------------------- blocks

_WORKER: dict = {}

#: Spawned workers write the training outputs into a named shared-memory block (True)
#: rather than send them back through the pool's pipe (False; kept for
#: benchmarks/bench_workers.py, which measures both).
_SPAWN_SHARES_TRAINING = True


def _init_worker(mechanism, datasets, limit_openmp: bool = False) -> None:
    # one BLAS thread per worker process: with the default (one per core) two workers
    # on two cores ran four threads and a 32-coordinate Gaussian audit was no faster
    # than one process (issue 23); the audit's parallelism is its processes. OpenMP on
    # one thread when the parent's libgomp pool had started before the fork: a team of
    # one never uses it, a larger team waits for it forever (execution.processes)
    _WORKER.update(mechanism=mechanism, datasets=datasets,
                   limits=limit_worker_threads(openmp=limit_openmp))


def _init_spawned_worker(name: str, payload: bytes, sources: list, shared, ready) -> None:
    """A spawned worker's start: one BLAS thread, then the mechanism and
    datasets unpickled (the files of ``sources`` loaded first) and the shared training
    buffer (``(name, shape)`` or None) attached by name. A mechanism that does not load
    here is reported by every task (:func:`_run_in_worker`), not by a broken pool.
    ``ready`` (a shared counter) counts the workers started: the worker timeout runs
    from the first."""
    try:
        worker_signals()
        limits = limit_worker_threads()
        try:
            mechanism, datasets = load_for_worker(payload, sources)
        except Exception as exc:  # noqa: BLE001  (reported by the tasks, named)
            _WORKER["error"] = (
                f"mechanism {name!r} does not load in a spawned worker process "
                f"({type(exc).__name__}: {exc}): its class and every function it uses must "
                "be importable, defined at module level of a module or file (not in a "
                "function, not in a script run with python -c or in a notebook); or run "
                "with workers=1")
            return
        _WORKER.update(mechanism=mechanism, datasets=datasets, limits=limits)
        if shared is not None:
            from multiprocessing import shared_memory

            shm_name, shape = shared
            memory = shared_memory.SharedMemory(name=shm_name)
            _WORKER.update(shared_memory=memory,
                           shared=np.ndarray(shape, dtype=float, buffer=memory.buf))
    finally:
        with ready.get_lock():
            ready.value += 1


def _run_in_worker(task):
    if "error" in _WORKER:
        raise InvalidMechanismError(_WORKER["error"])
    *args, start = task
    out = _block(_WORKER["mechanism"], _WORKER["datasets"], *args)
    if start is None:
        return out
    # training outputs go to the memory shared with the parent (no pickling through a pipe)
    which = args[0]
    _WORKER["shared"][which, start:start + len(out)] = out
    return None


def _shared_training_buffer(n_train: int, shape: tuple, method: str = "fork"):
    """A (2, n_train, k) float array in shared memory, which the workers write the
    training outputs into (None when there are none). Shipping them back through a pipe
    cost more than drawing them: a 32-coordinate Gaussian's 2 x 200,000 training outputs
    took 0.46 s on 2 workers against 0.19 s drawn in one process (issue 23).

    ``method`` "fork": anonymous shared memory, which worker processes forked after its
    creation inherit; returns the array. "spawn": a named
    ``multiprocessing.shared_memory`` block, which spawned workers attach by name;
    returns ``(array, memory)``, and the caller closes and unlinks ``memory`` on every
    way out (:class:`_Trials`)."""
    k = int(np.prod(shape, dtype=np.int64))
    nbytes = 2 * n_train * k * 8
    if nbytes == 0:
        return None
    if method == "fork":
        return np.frombuffer(mmap.mmap(-1, nbytes), dtype=float).reshape(2, n_train, k)
    from multiprocessing import shared_memory

    memory = shared_memory.SharedMemory(create=True, size=nbytes)
    return np.ndarray((2, n_train, k), dtype=float, buffer=memory.buf), memory


def _block(mechanism, datasets, which: int, n: int, seed: int, key: tuple, scorer, shape):
    """One block: n outputs on dataset ``which`` with seed (seed, spawn_key=key).

    Returns the raw outputs (n, k) when ``scorer`` is None (training a fitted
    score), else their scores (n,). Every output must have the trailing ``shape``
    (None: not checked, the probe that fixes it).

    The first block of the training phase (key ``(which, 0, 0)``) is drawn twice, the
    second time from a twin generator (:func:`~dpclaims.audits.mechanism.check_follows_rng`):
    the probe of :func:`~dpclaims.audits.mechanism.output_shape` checks at n = 2 that the
    release follows its rng, this at the size the audit really draws (a release that
    follows its rng for small n only would otherwise pass). The block's own outputs,
    and so the audit's result, are those of the first draw.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))
    twin = twin_generator(rng) if key[1:] == (0, 0) else None
    out = draw_release(mechanism, datasets[which], rng, n, shape=shape)
    if twin is not None:
        check_follows_rng(mechanism, out, draw_release(mechanism, datasets[which], twin, n,
                                                       shape=shape), n)
    if scorer is None:
        return out
    return _apply_score(out, scorer, mechanism.name)


def _apply_score(outputs, scorer, name):
    try:
        s = np.asarray(scorer(outputs), dtype=float)
    except ScoreError as exc:
        raise InvalidMechanismError(f"mechanism {name!r}: {exc}") from exc
    if s.shape != (outputs.shape[0],) or not np.all(np.isfinite(s)):
        raise InvalidMechanismError(f"score must map outputs (n, ...) of {name!r} to n finite "
                                    f"reals, got shape {s.shape}")
    return s


def _submit_blocks(tasks, mechanism, datasets, seed, client, pool, shared=None,
                   block_size=None, timeout=None, workers=None, hint="",
                   started=None) -> Callable:
    """Start block tasks [(which, n, key, scorer, shape)]; returns ``gather()``, which
    waits for them and returns their results in order. On a process pool or a Dask
    cluster the blocks run while the caller goes on (the audit chooses its thresholds
    meanwhile); in one process they run when gathered. The results do not depend on
    how: every block draws from its own seed. ``shared`` (a pool's training phase,
    :func:`_shared_training_buffer`): the workers write the raw outputs of block b at
    row b x ``block_size`` of it and ``gather()`` returns views of it. On a pool,
    ``gather()`` raises :class:`~dpclaims.execution.WorkerLostError` when no block came
    back within ``timeout`` seconds, or a worker process died (``workers`` is named)."""
    if client is not None:  # mechanism and datasets: futures scattered once by audit()
        futures = [client.submit(_block, mechanism, datasets, which, n, seed, key, scorer,
                                 shape, pure=False)
                   for which, n, key, scorer, shape in tasks]
        return lambda: client.gather(futures)
    if pool is not None:
        # a scorer that is not fork-safe (scikit-learn's OpenMP thread pool deadlocks in a
        # forked child) scores the workers' raw outputs here, in the parent
        parent = [bool(getattr(scorer, "score_in_parent", False)) for *_, scorer, _ in tasks]
        store = [None if shared is None or scorer is not None else key[2] * block_size
                 for (_, _, key, scorer, _) in tasks]
        futures = [pool.submit(_run_in_worker, (which, n, seed, key, None if p else scorer,
                                                shape, start))
                   for (which, n, key, scorer, shape), p, start
                   in zip(tasks, parent, store, strict=True)]

        def result(out, task, p, start):
            if start is not None:
                out = shared[task[0], start:start + task[1]]
            return _apply_score(out, task[3], mechanism.name) if p else out

        def gather():
            return [result(*x) for x in zip(collect(futures, timeout, workers, "block", hint,
                                                     started),
                                             tasks, parent, store, strict=True)]
        return gather
    return lambda: [_block(mechanism, datasets, which, n, seed, key, scorer, shape)
                    for which, n, key, scorer, shape in tasks]


def _block_tasks(which, phase, total, block_size, scorer, shape):
    return [(which, min(block_size, total - start), (which, phase, b), scorer, shape)
            for b, start in enumerate(range(0, total, block_size))]



# --------------------------------------------------------------------------- audit


@dataclass(frozen=True)
class _Plan:
    """An audit's validated arguments, and the sizes and output shape they fix."""

    mechanism: Any
    claim: PrivacyClaim
    pair: NeighbouringPair
    strategy: ThresholdStrategy
    score: AttackScore
    n_trials: int
    n_train: int
    n_held_out: int
    alpha: float
    seed: int
    workers: int
    block_size: int
    posterior_samples: int
    shape: tuple
    probe_seconds_per_output: float = 0.0
    worker_timeout: float | None = None


def _plan(mechanism, pair, n_trials, alpha, threshold, score, seed, workers, block_size,
          posterior_samples, worker_timeout=None) -> _Plan:
    """Validate :func:`audit`'s arguments (in this order: the errors it raises) and fix
    the training and held-out sizes and the output shape."""
    mechanism = validate_mechanism(mechanism)
    claim: PrivacyClaim = mechanism.claim
    if not isinstance(pair, NeighbouringPair):
        raise TypeError(f"pair must be a NeighbouringPair, got {type(pair).__name__}")
    if pair.relation != claim.relation:
        raise ValueError(f"the pair is {pair.relation} but {mechanism.name!r} claims privacy "
                         f"under {claim.relation}: audit it on a {claim.relation} pair")
    n_trials = check_count(n_trials, "n_trials", minimum=2)
    alpha = check_probability(alpha, "alpha")
    strategy = as_threshold_strategy(threshold)
    workers = check_count(workers, "workers")
    block_size = check_count(block_size, "block_size")
    posterior_samples = check_count(posterior_samples, "posterior_samples")
    seed = check_count(seed, "seed", minimum=0)
    worker_timeout = check_worker_timeout(worker_timeout)
    score = as_score(score)
    # no trials train when a given score meets thresholds given in advance
    needs_training = not (score.given_scorer() is not None and strategy.given_thresholds)
    n_train = strategy.training_trials(n_trials, claim) if needs_training else 0
    n_ho = n_trials - n_train
    strategy.check(mechanism.name, claim, n_trials, n_ho)

    # the output shape, fixed by a probe of two outputs per dataset before any trial; the
    # release's use of its rng is checked there at n = 2 and on the first training block
    # at its full size (_block); without a training phase, by the probe at the size of
    # the first held-out block
    sizes = (2,) if n_train else (2, min(block_size, n_ho))
    t0 = time.perf_counter()
    shapes = [output_shape(mechanism, d, np.random.default_rng(
        np.random.SeedSequence(seed, spawn_key=(4, j))), sizes)
        for j, d in enumerate((pair.d0, pair.d1))]
    per_output = (time.perf_counter() - t0) / (2 * 2 * sum(sizes))  # twice per size
    if shapes[0] != shapes[1]:
        raise InvalidMechanismError(
            f"mechanism {mechanism.name!r}: outputs on d0 have shape {shapes[0]}, on d1 "
            f"{shapes[1]}: the two datasets' outputs must have one shape to be compared")
    return _Plan(mechanism, claim, pair, strategy, score, n_trials, n_train, n_ho, alpha,
                 seed, workers, block_size, posterior_samples, shapes[0], per_output,
                 worker_timeout)


class _Trials:
    """Where an audit's blocks run: in this process, on a process pool (the training
    outputs in shared memory) or on a Dask cluster; a context manager that shuts the
    pool down. The results do not depend on where: every block draws from its own seed.

    The pool's processes start by :func:`~dpclaims.execution.start_method`: forked
    (the mechanism and datasets inherited, the training outputs in anonymous shared
    memory) or, once a threaded runtime is loaded, spawned (both pickled to the
    workers, the training outputs in a named shared-memory block, unlinked on every
    way out). A block that does not come back within the worker timeout raises
    :class:`~dpclaims.execution.WorkerLostError`; on any error the workers are
    terminated."""

    def __init__(self, plan: _Plan, client):
        self.plan, self.client, self.pool, self.shared = plan, client, None, None
        self.memory, self.start, self.ready = None, None, None
        mechanism, datasets = plan.mechanism, (plan.pair.d0, plan.pair.d1)
        self.timeout = (plan.worker_timeout or current_worker_timeout()
                        or default_worker_timeout(plan.probe_seconds_per_output,
                                                  plan.block_size))
        if client is None and plan.workers > 1:
            self.start = start_method(one_thread=True)  # _init_worker limits OpenMP
            needs_buffer = plan.score.given_scorer() is None and plan.n_train > 0
            ctx = multiprocessing.get_context(self.start.method)
            if self.start.method == "fork":
                initializer = _init_worker
                initargs = (mechanism, datasets, self.start.limit_openmp)
                if needs_buffer:  # raw training outputs come back: share
                    self.shared = _shared_training_buffer(plan.n_train, plan.shape)
                _WORKER["shared"] = self.shared  # inherited by the forked workers
            else:
                payload, sources = _pickled_for_workers(mechanism, datasets, self.start)
                buffer = (_shared_training_buffer(plan.n_train, plan.shape, "spawn")
                          if needs_buffer and _SPAWN_SHARES_TRAINING else None)
                if buffer is not None:
                    self.shared, self.memory = buffer
                initializer = _init_spawned_worker
                self.ready = ctx.Value("i", 0)
                initargs = (mechanism.name, payload, sources,
                            None if self.memory is None
                            else (self.memory.name, self.shared.shape), self.ready)
            record_start("audit blocks", self.start, plan.workers)
            _LOG.info("audit of %r: %d worker processes, %s; worker timeout %g s",
                      mechanism.name, plan.workers, self.start, self.timeout)
            try:
                self.pool = ProcessPoolExecutor(plan.workers, mp_context=ctx,
                                                initializer=initializer, initargs=initargs)
            except BaseException:
                self._release_memory()
                raise
        self.remote = (mechanism, datasets)
        if client is not None:  # unique keys (hash=False), held until the audit ends
            self.remote = (client.scatter(mechanism, broadcast=True, hash=False),
                           client.scatter(datasets, broadcast=True, hash=False))
        self.threads = plan.workers > 1 and client is None  # the statistics in two threads

    def __enter__(self) -> _Trials:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self.pool is not None:
            try:  # an error (a lost worker, Ctrl-C, SIGTERM): the workers are terminated
                stop_pool(self.pool, wait_for_workers=exc_type is None)
            finally:
                _WORKER.pop("shared", None)
                self._release_memory()

    def _hint(self) -> str:
        if self.start is None or self.start.method == "fork":
            return ""
        return (" (the workers were spawned: each imports your main script again, so a "
                "script that starts an audit must do so under "
                "if __name__ == \"__main__\":)")

    def _release_memory(self) -> None:
        """Unlink the named shared memory of a spawned pool (if any)."""
        if self.memory is not None:
            memory, self.memory, self.shared = self.memory, None, None
            try:
                memory.close()
            except BufferError:  # a view still alive somewhere: unlinked all the same
                pass
            finally:
                memory.unlink()

    def _phase(self, phase: int, total: int, scorer) -> Callable:
        """Start the blocks of both datasets in ``phase``; returns ``gather() -> (D0's,
        D1's)`` outputs (``scorer`` None: raw, through the shared buffer) or scores."""
        p = self.plan
        tasks = (_block_tasks(0, phase, total, p.block_size, scorer, p.shape)
                 + _block_tasks(1, phase, total, p.block_size, scorer, p.shape))
        gather = _submit_blocks(tasks, *self.remote, p.seed, self.client, self.pool,
                                self.shared if scorer is None else None, p.block_size,
                                self.timeout, p.workers, self._hint(),
                                None if self.ready is None else
                                (lambda: self.ready.value > 0))

        def both():
            out = gather()
            nb = len(out) // 2
            return np.concatenate(out[:nb]), np.concatenate(out[nb:])  # copies
        return both

    def training(self, scorer) -> tuple | None:
        """The training outputs (``scorer`` None) or scores; None without training."""
        return self._phase(0, self.plan.n_train, scorer)() if self.plan.n_train else None

    def held_out(self, scorer) -> Callable:
        return self._phase(1, self.plan.n_held_out, scorer)

    def apply(self, outputs: np.ndarray, scorer) -> np.ndarray:
        return _apply_score(outputs, scorer, self.plan.mechanism.name)


def _pickled_for_workers(mechanism, datasets, start: StartMethod) -> tuple[bytes, list]:
    """The mechanism and datasets pickled for spawned workers, and the files they need
    (:func:`~dpclaims.execution.processes.pickle_for_workers`).

    Raises
    ------
    InvalidMechanismError
        The mechanism (or a dataset) does not pickle, naming it and why workers are
        spawned."""
    for what, obj in (("mechanism", mechanism), ("datasets", datasets)):
        try:
            pickle_for_workers(obj)
        except Exception as exc:  # noqa: BLE001  (any pickling failure, named)
            raise InvalidMechanismError(
                f"mechanism {mechanism.name!r}: its {what} cannot be sent to the worker "
                f"processes, which are spawned ({start.reason}): {type(exc).__name__}: "
                f"{exc}. The {what} must pickle: define its class and every function it "
                "uses at module level of an importable module or file (not inside a "
                "function, not a lambda); or run with workers=1") from exc
    return pickle_for_workers((mechanism, datasets))


def audit(mechanism, pair: NeighbouringPair, n_trials: int, alpha: float = 0.05,
          threshold="auto", score=None, seed: int = 0,
          workers: int = 1, *, client=None, block_size: int = 65_536,
          posterior_samples: int = 100_000,
          worker_timeout: float | None = None) -> AuditResult:
    """Audit ``mechanism``'s claim on ``pair``: a certified epsilon lower bound and estimates.

    Parameters
    ----------
    mechanism : Mechanism
        Follows :class:`~dpclaims.audits.mechanism.Mechanism`; its claim gives
        delta (0 for pure epsilon-DP) and the relation.
    pair : NeighbouringPair
        Under the claim's relation.
    n_trials : int
        Outputs drawn per dataset (>= 2), generated in blocks of ``block_size``.
    alpha : float, default 0.05
        The audit's one significance budget, in (0, 1): the certificate holds with
        probability >= 1 - alpha; the credible bound is at level 1 - alpha.
    threshold : str | float | ThresholdStrategy, default "auto"
        A name in :data:`~dpclaims.audits.registry.THRESHOLDS`, a number (an
        :class:`ExplicitThreshold`) or a strategy instance
        (:mod:`dpclaims.audits.thresholds`: :class:`SplitThreshold`,
        :class:`BonferroniThresholds`, :class:`ExplicitThreshold`;
        :class:`RankThreshold`, claims with delta > 0; and the default,
        :class:`~dpclaims.audits.thresholds_auto.AutoThreshold`: the rank design at a
        rank chosen on a small training split for a continuous score and a claim with
        delta > 0, the split's threshold otherwise).
    score : None | str | score instance | callable, default None
        The attack statistic (:mod:`dpclaims.audits.scores`): a name in
        :data:`~dpclaims.audits.registry.SCORES`, an
        :class:`~dpclaims.audits.scores.AttackScore` instance, or a callable
        mapping outputs (n, k) to n reals ("guess D1" when high). None means
        "auto": chosen from the training outputs by
        :func:`~dpclaims.audits.scores.choose_score` (Fisher's discriminant for
        continuous vectors, the counted likelihood ratio for finite output
        spaces, a gradient-boosting classifier for mixed outputs). Fitted scores
        never see the held-out outputs; discrete scores are thresholded with
        randomisation at ties (exact binomial counts; module docstring of
        :mod:`~dpclaims.audits.scores`).
    seed : int
        Block b of dataset j in phase p (0 training, 1 held out) draws from
        ``SeedSequence(seed, spawn_key=(j, p, b))``; the tie-breaking uniforms of
        dataset j in phase p from ``(3, j, p)``; a two-output probe that fixes the
        output shape from ``(4, j)``. The same seed (and block size) gives the same
        result whatever ``workers`` or ``client``.
    workers : int, default 1
        Processes for the blocks, started by
        :func:`~dpclaims.execution.start_method`: forked where the platform has fork and
        no threaded runtime (JAX, PyTorch, TensorFlow, a started OpenMP pool) is loaded;
        otherwise spawned, and the mechanism and datasets must then pickle (their
        classes and functions importable, at module level). Each worker runs one BLAS
        thread; other libraries (XLA, PyTorch) keep this process's thread settings,
        which their results can depend on (:mod:`dpclaims.execution.processes`).
    client : dask.distributed.Client, optional
        Run the blocks on a Dask cluster instead (mechanism and data are scattered
        once); ``workers`` is then ignored.
    block_size : int
        Trials per block (memory is O(block_size x output size) per process).
    posterior_samples : int
        Monte Carlo draws for the credible bound.
    worker_timeout : float, optional
        Seconds (> 0) the audit waits for its worker processes while none of its blocks
        comes back, before it raises :class:`~dpclaims.execution.WorkerLostError`.
        Default: the one set by :func:`dpclaims.execution.processes.worker_timeout` (the
        CLI's ``--worker-timeout``), else ``max(600 s, 20 x the probe's seconds per
        output x block_size)`` (:func:`~dpclaims.execution.processes.default_worker_timeout`).
        Not used with ``workers=1`` or a ``client``.

    Returns
    -------
    AuditResult

    Raises
    ------
    InvalidMechanismError
        ``mechanism`` is not a mechanism; a release of the wrong length, of a shape
        that changes between calls or between the two datasets, or with non-finite
        values; a score of the wrong shape or with non-finite values.
    ScoreError
        An unknown score name (a ValueError).
        With spawned workers: the mechanism or the datasets do not pickle, or do not
        load in a worker.
    ValueError
        n_trials < 2, alpha outside (0, 1), a pair whose relation differs from the
        claim's, an unknown threshold strategy, a strategy's own refusal
        (``"rank"`` for a claim with delta = 0), workers < 1, a worker_timeout that is
        not a positive number.
    WorkerLostError
        ``workers`` > 1: no block came back within the worker timeout, or a worker
        process died; the workers are terminated.

    Notes
    -----
    The audit runs in phases: the training outputs are drawn and the score is fitted
    on them (:meth:`AttackScore.train <dpclaims.audits.scores.AttackScore.train>`);
    the held-out blocks start; the strategy chooses the threshold(s) from the
    training scores alone (:meth:`ThresholdStrategy.choose
    <dpclaims.audits.thresholds.ThresholdStrategy.choose>`); the held-out scores give
    a :class:`~dpclaims.audits.certificate.Certificate` (``certify``), whose methods
    give every number of the result.
    """
    plan = _plan(mechanism, pair, n_trials, alpha, threshold, score, seed, workers,
                 block_size, posterior_samples, worker_timeout)
    with _Trials(plan, client) as trials:
        # phase 1: the training outputs, and the score fitted on them
        trained = plan.score.train(trials.training, plan.seed, trials.apply,
                                   threads=trials.threads)
        # phase 2: the held-out blocks run in the workers (or on the cluster) while the
        # strategy chooses the threshold(s) here from the training scores alone
        held_out = trials.held_out(trained.scorer)
        levels = _levels(trained, plan.strategy)
        choice = plan.strategy.choose(
            _break_ties(trained.train_scores, levels, plan.seed, 0), levels=levels,
            n_held_out=plan.n_held_out, claim=plan.claim, alpha=plan.alpha,
            threads=trials.threads)
        scores = _break_ties(held_out(), levels, plan.seed, 1)
    # phase 3: the certificate on the held-out scores, at the threshold(s) fixed before
    certificate = plan.strategy.certify(choice, _sort_pair(*scores, trials.threads),
                                        plan.alpha, plan.claim.delta)
    return _result(plan, trained, certificate, levels, scores, trials.threads)


def _levels(trained: TrainedScore, strategy: ThresholdStrategy) -> np.ndarray | None:
    """A discrete score's levels, over which its thresholds are randomised (None: a
    continuous score, or thresholds given in advance)."""
    if trained.train_scores is None or strategy.given_thresholds:
        return None
    return score_levels(trained.scorer, np.concatenate(trained.train_scores))


def _break_ties(scores: tuple | None, levels, seed: int, phase: int) -> tuple | None:
    """Discrete scores: v = 2 rank(s) + u (randomised thresholds), with the uniforms of
    dataset j in ``phase`` from ``SeedSequence(seed, spawn_key=(3, j, phase))``."""
    if scores is None or levels is None:
        return scores
    return tuple(randomise_ties(x, levels, np.random.default_rng(
        np.random.SeedSequence(seed, spawn_key=(3, which, phase))).random(len(x)))
        for which, x in enumerate(scores))


def _result(plan: _Plan, trained: TrainedScore, certificate: Certificate, levels,
            scores: tuple, threads: bool) -> AuditResult:
    """The :class:`AuditResult`: every number from the certificate."""
    best, k = certificate.best(), certificate.n_thresholds
    eps_lb = certificate.epsilon_lower_bound()
    mu, eps_gdp, (tr_fpr, tr_fnr), area = certificate.estimates(threads)
    t_best, tie_p = threshold_in_score_units(float(certificate.thresholds[best]), levels)
    fpr_upper, fnr_upper = certificate.rate_upper_bounds()
    post_rng = np.random.default_rng(np.random.SeedSequence(plan.seed, spawn_key=(2,)))
    score_name = trained.description
    if levels is not None:
        score_name += f"; randomised at ties over {len(levels)} levels"
    return AuditResult(
        mechanism=plan.mechanism.name,
        claim=plan.claim,
        pair=plan.pair.to_dict(),
        epsilon_lower_bound=eps_lb,
        refutes_claim=bool(eps_lb > plan.claim.epsilon),
        epsilon_gdp_estimate=eps_gdp,
        gdp_mu_estimate=mu,
        epsilon_credible_lower=certificate.credible_lower(plan.posterior_samples, post_rng),
        auroc=area,
        tradeoff_fpr=tuple(tr_fpr),
        tradeoff_fnr=tuple(tr_fnr),
        threshold_strategy=f"{plan.strategy.describe()}; threshold(s) {certificate.record}",
        threshold=t_best,
        n_thresholds=k,
        score=score_name,
        n_trials=plan.n_trials,
        n_train=plan.n_train,
        n_held_out=plan.n_held_out,
        false_positives=int(certificate.false_positives[best]),
        false_negatives=int(certificate.false_negatives[best]),
        fpr_upper=fpr_upper,
        fnr_upper=fnr_upper,
        alpha=plan.alpha,
        seed=plan.seed,
        block_size=plan.block_size,
        posterior_samples=plan.posterior_samples,
        score_name=trained.score.name,
        score_choice=trained.reason,
        tie_probability=tie_p,
        held_out_scores=scores,
    )


def optimal_cp_limit(fpr_of: Callable, fnr_of: Callable, thresholds, n: int, delta: float,
                     alpha: float) -> float:
    """The statistical limit: the best Clopper-Pearson bound at n trials per dataset.

    Uses the known output distributions (``fpr_of(t)``, ``fnr_of(t)`` vectorised),
    their expected counts n FPR(t), n FNR(t) and the best threshold on the grid
    ``thresholds``; no trials spent on training. Benchmarks compare certificates
    with it.
    """
    t = np.asarray(thresholds, float)
    bounds = epsilon_lower_bound(n * fpr_of(t), n, n * fnr_of(t), n, delta, alpha)
    return float(np.max(bounds))
