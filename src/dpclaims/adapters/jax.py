"""A JAX or NumPyro training function as a whole-run algorithm (the ``dpclaims[jax]`` extra).

The algorithm protocol of :mod:`dpclaims.audits.whole_run` asks for
``run(data, rng, n_runs)``: many independent runs in one call, vectorised over the runs,
drawn from a numpy :class:`~numpy.random.Generator`. Code written for JAX is a function of
one run, ``train(data, n_valid, key)``, that JAX can ``jit`` and ``vmap``.
:class:`JaxAlgorithm` joins the two:

* **keys from the stream.** ``run`` draws the key data of all its runs in one draw of
  ``n_runs x 2`` uint32 from ``rng`` (``rng.integers(0, 2**32, (n_runs, 2))``), one raw
  threefry key (as :func:`jax.random.PRNGKey` makes) per run: the same generator state
  gives the same runs, so the audit's check that a release follows its rng
  (:func:`~dpclaims.audits.mechanism.check_follows_rng`) passes and the same seed gives
  the same audit.
* **one shape for every dataset.** Every dataset is padded with zero rows to ``pad_to``
  records (default: the base data's size + 1, room for the one record an add-remove
  audit adds); ``n_valid``, the number of real records, is passed as a traced int32
  scalar. D and D + canary then have one shape and one compile serves both (JAX
  compiles once per shape and dtype). The training function must ignore the rows
  ``>= n_valid`` (e.g. a mask ``jnp.arange(pad_to) < n_valid`` multiplied into the
  per-example terms). A dataset larger than ``pad_to`` is refused.
* **one compile, fixed chunks.** ``jax.jit(jax.vmap(train, in_axes=(None, None, 0)))``
  is built once per object (lazily, on the first ``run``) and called on chunks of
  exactly ``chunk`` keys: ``n_runs`` runs are ``ceil(n_runs / chunk)`` calls (a loop
  over chunks, never over runs), the last chunk padded with zero keys and its extra
  runs dropped. ``max_runs_per_call`` declares the chunk, and
  :func:`~dpclaims.audits.whole_run.audit_whole_run` makes its blocks multiples of it.
* **worker processes.** The object pickles without its compiled function, which is
  rebuilt in the worker on its first ``run`` (one compile per worker process). The
  training function is pickled by reference: it must be importable (defined at module
  level in a module the worker can import; not a lambda or a closure).

The gradient canary (Nasr et al. 2023; :mod:`dpclaims.audits.whole_run`) is the
training function's business: a record the function recognises (e.g. a flag column)
whose clipped per-example contribution it replaces by ``sign * clip *
canary_direction``; the adapter passes ``gradient_canary``, ``canary_direction`` and
``clip`` on to the audit. docs/jax.md has a worked example.

**m gradient canaries in one run** (the one-run audit, :mod:`dpclaims.audits.one_run`;
the capability :class:`~dpclaims.audits.capabilities.HasGradientCanaries`). Given
``train_canaries(data, n_valid, key, signs)``, ``gradient_canary_slots = t`` and
``canary_coordinates`` (t distinct coordinates of a step's released statistic), the
object offers ``run_gradient_canaries(data, rng, signs)``: ``signs`` (R, m) in {-1, 0,
+1} is padded with zeros to (R, t) (float32; 0: the canary is absent) and
``jax.jit(jax.vmap(train_canaries, in_axes=(None, None, 0, 0)))``, built once, runs the R
runs in chunks of exactly ``canary_chunk`` runs (the last padded with zero keys and zero
signs, its extra runs dropped): one shape for every m <= t, one compile. The run's keys
are one draw of (R, ``key_words``) uint32 from ``rng``, as in ``run``. How canary i
enters the run is the training function's business, and what a one-run certificate
certifies rests on it: canary i must be a record whose clipped per-example contribution
to each step that samples it is ``signs[i] * clip * e_j(i)``, j(i) =
``canary_coordinates[i]``, sampled with the probability the claim's sampler gives any
one record; docs/guide/one-run.md, "JAX and d3p", says what that means for a fixed-size
batch sampler.

JAX is imported on first use only: this module imports without it, and building the
compiled function without JAX raises an ImportError that names the extra to install.
"""

from __future__ import annotations

import functools
import math
import pickle
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpclaims.analysis.records import n_records
from dpclaims.analysis.sampling import Sampling
from dpclaims.analysis.validation import check_count
from dpclaims.audits.mechanism import InvalidMechanismError, PrivacyClaim
from dpclaims.audits.whole_run import (
    WholeRunAlgorithm,
    check_canary_signs,
    check_threat_model,
)

__all__ = ["JaxAlgorithm", "import_jax", "pad_dataset"]

#: What to install when JAX is missing.
INSTALL_HINT = "pip install 'dpclaims[jax]'"


def import_jax():
    """The ``jax`` module, imported now.

    Raises
    ------
    ImportError
        JAX is not installed; the message names ``pip install 'dpclaims[jax]'``.
    """
    try:
        import jax
    except ImportError as exc:
        raise ImportError(
            f"dpclaims.adapters.jax needs JAX, which is not installed ({exc}): "
            f"{INSTALL_HINT} (jax and jaxlib >= 0.4.30)") from exc
    return jax


def _components(data) -> tuple[str, list]:
    """The kind of a dataset ("array", "tuple", "dict") and its component arrays."""
    if isinstance(data, dict):
        return "dict", [np.asarray(c) for c in data.values()]
    if isinstance(data, tuple):
        return "tuple", [np.asarray(c) for c in data]
    return "array", [np.asarray(data)]


def pad_dataset(data, pad_to: int):
    """``data`` with zero rows appended to every component up to ``pad_to`` records.

    Parameters
    ----------
    data : array (N, ...), tuple or dict of arrays (N, ...)
        A dataset of :mod:`dpclaims.analysis.records` (one leading record axis).
    pad_to : int
        Records after padding, >= N.

    Returns
    -------
    (padded, n_valid)
        The padded dataset (same kind, keys and dtypes; components (pad_to, ...)) and N.

    Raises
    ------
    ValueError
        N > ``pad_to`` (naming both), or components without a common leading axis.
    """
    n = n_records(data)
    pad_to = check_count(pad_to, "pad_to")
    if n > pad_to:
        raise ValueError(f"the dataset has {n} records, more than pad_to = {pad_to}: the "
                         f"adapter pads every dataset to pad_to rows (one shape, one compile); "
                         f"give pad_to >= {n}")
    kind, comps = _components(data)
    padded = [np.concatenate([c, np.zeros((pad_to - n, *c.shape[1:]), dtype=c.dtype)])
              for c in comps]
    if kind == "dict":
        return dict(zip(data, padded, strict=True)), n
    if kind == "tuple":
        return tuple(padded), n
    return padded[0], n


def _check_importable(obj, what: str, name: str) -> None:
    try:
        pickle.dumps(obj)
    except Exception as exc:  # PicklingError, AttributeError, TypeError: all mean "not by name"
        raise pickle.PicklingError(
            f"JaxAlgorithm {name!r}: its {what} {obj!r} cannot be pickled ({exc}). Worker "
            "processes receive the algorithm pickled and import its functions by name: define "
            f"the {what} at module level in an importable module (not a lambda, a closure or "
            "a function defined inside another function)") from exc


class JaxAlgorithm(WholeRunAlgorithm):
    """A JAX training function of one run as a whole-run algorithm (module docstring).

    Parameters
    ----------
    name : str
        The variant's name.
    claim : PrivacyClaim
        The whole run's claim.
    threat_model : {"final-iterate", "full-trace"}
        What ``train`` returns: the final iterate, shape (P,), or the trace of the S
        released statistics, shape (S, k).
    train : callable
        ``train(data, n_valid, key) -> array``: one run (for the final iterate, a pytree
        of arrays such as a parameter dict is flattened into (P,) by
        ``jax.flatten_util.ravel_pytree``, leaves in key order). ``data`` is the dataset as JAX
        arrays padded to ``pad_to`` rows, ``n_valid`` an int32 scalar (rows >= n_valid
        are padding the function must ignore), ``key`` a raw threefry PRNG key (uint32
        (2,), as :func:`jax.random.PRNGKey` makes; ``make_key`` changes it). Must be
        traceable by ``jax.jit`` and ``jax.vmap`` and importable by name (for workers).
    data : array, tuple or dict of numpy arrays
        The base dataset D (leading record axis), which the audit adds its canary to.
    pad_to : int, optional
        Rows every dataset is padded to; default N + 1.
    chunk : int
        Runs per compiled call (one compile per shape); default 4096.
    gradient_canary, canary_direction, clip, updates, input_canary
        The hooks of the algorithm protocol (:mod:`dpclaims.audits.whole_run`), passed on
        as given.
    sampling : Sampling, optional
        The sampler the code performs (:class:`dpclaims.analysis.sampling.Sampling`).
    library_accounting : mapping, optional
        The library's own accountant's reading, e.g. ``{"name": "d3p's
        DPSVI.get_epsilon", "epsilon": 2.52, "delta": 1e-5, "relation": "add-remove",
        "assumes": "poisson"}``.
    candidates, trace_reduction, epoch_length
        Optional hooks of the protocol, as given.
    make_key : callable, optional
        ``make_key(key_data) -> key``, applied inside the compiled function to each run's
        uint32 key data (shape (``key_words``,)), for code that wants another key type
        (a typed key, ``jax.random.wrap_key_data``, or another library's PRNG).
        Must be importable by name, like ``train``.
    key_words : int
        uint32 words of key data per run (default 2, a threefry key); ``run`` draws
        ``(n_runs, key_words)`` of them.
    train_canaries : callable, optional
        ``train_canaries(data, n_valid, key, signs) -> array``: one run with the one-run
        audit's t Dirac gradient canaries, ``signs`` float32 (t,) in {-1, 0, +1} (module
        docstring); its output as ``train``'s (the statistic may have more coordinates,
        e.g. the canaries' own). Importable by name, like ``train``. Given with
        ``gradient_canary_slots`` and ``canary_coordinates`` (all three or none).
    gradient_canary_slots : int, optional
        t >= 1, the canaries ``train_canaries`` takes.
    canary_coordinates : sequence of int, optional
        (t,) distinct coordinates j(i) >= 0 of a step's released statistic (after
        ``updates``; of the final output for a final-iterate run).
    canary_chunk : int
        Runs per compiled call of ``train_canaries`` (default 10: a one-run audit runs
        few).

    Raises
    ------
    ValueError
        An empty name, an unknown threat model, ``pad_to`` smaller than the data,
        ``chunk``, ``key_words`` or ``canary_chunk`` < 1; only some of the three canary
        arguments; ``gradient_canary_slots`` < 1; ``canary_coordinates`` not t distinct
        non-negative integers.
    TypeError
        ``train`` or ``train_canaries`` not callable, ``claim`` not a PrivacyClaim,
        ``sampling`` not a Sampling, ``library_accounting`` not a mapping.
    """

    def __init__(self, *, name: str, claim: PrivacyClaim, threat_model: str,
                 train: Callable, data, pad_to: int | None = None, chunk: int = 4096,
                 gradient_canary: Callable | None = None, canary_direction=None,
                 clip: float | None = None, updates: Callable | None = None,
                 sampling: Sampling | None = None,
                 library_accounting: Mapping[str, Any] | None = None, input_canary=None,
                 candidates=None, trace_reduction: str = "sum",
                 epoch_length: int | None = None, make_key: Callable | None = None,
                 key_words: int = 2, train_canaries: Callable | None = None,
                 gradient_canary_slots: int | None = None, canary_coordinates=None,
                 canary_chunk: int = 10):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        if not isinstance(claim, PrivacyClaim):
            raise TypeError(f"claim must be a PrivacyClaim, got {type(claim).__name__}")
        if not callable(train):
            raise TypeError(f"train must be callable (data, n_valid, key) -> array, got "
                            f"{train!r}")
        if sampling is not None and not isinstance(sampling, Sampling):
            raise TypeError("sampling must be a dpclaims.analysis.sampling.Sampling, got "
                            f"{type(sampling).__name__}")
        if library_accounting is not None and not isinstance(library_accounting, Mapping):
            raise TypeError("library_accounting must be a mapping (name, epsilon, delta, "
                            f"relation, assumes), got {type(library_accounting).__name__}")
        if make_key is not None and not callable(make_key):
            raise TypeError(f"make_key must be callable (key_data) -> key, got {make_key!r}")
        self.name = name
        self.claim = claim
        self.threat_model = check_threat_model(threat_model)
        self.train = train
        self.data = data
        n = n_records(data)
        self.pad_to = n + 1 if pad_to is None else check_count(pad_to, "pad_to")
        if self.pad_to < n:
            raise ValueError(f"pad_to = {self.pad_to} is smaller than the data's {n} records")
        self.chunk = check_count(chunk, "chunk")
        self.gradient_canary = gradient_canary
        self.canary_direction = canary_direction
        self.clip = clip
        self.updates = updates
        self.sampling = sampling
        self.library_accounting = None if library_accounting is None \
            else dict(library_accounting)
        self.input_canary = input_canary
        self.candidates = candidates
        self.trace_reduction = trace_reduction
        self.epoch_length = epoch_length
        self.make_key = make_key
        self.key_words = check_count(key_words, "key_words")
        self._fn = None
        given = [v is not None for v in (train_canaries, gradient_canary_slots,
                                         canary_coordinates)]
        if any(given) and not all(given):
            raise ValueError(f"JaxAlgorithm {name!r}: train_canaries, gradient_canary_slots "
                             "and canary_coordinates go together (the one-run audit's "
                             f"canaries); got only {given.count(True)} of them")
        if all(given):
            if not callable(train_canaries):
                raise TypeError("train_canaries must be callable (data, n_valid, key, "
                                f"signs) -> array, got {train_canaries!r}")
            slots = check_count(gradient_canary_slots, "gradient_canary_slots")
            coords = np.asarray(canary_coordinates)
            if (coords.shape != (slots,) or not np.issubdtype(coords.dtype, np.integer)
                    or (coords < 0).any() or np.unique(coords).size != slots):
                raise ValueError(f"canary_coordinates must be {slots} distinct non-negative "
                                 f"integers (one per slot), got {canary_coordinates!r:.80}")
            # instance members: an object without them keeps the class's None (no slots,
            # no capability), and its to_dict and pickled state are as before
            self.train_canaries = train_canaries
            self.gradient_canary_slots = slots
            self.canary_coordinates = coords.astype(np.int64)
            self.canary_chunk = check_count(canary_chunk, "canary_chunk")

    #: The one-run canaries' members (module docstring); None until given.
    train_canaries = None
    canary_coordinates = None
    canary_chunk = None
    _canary_fn = None

    # ------------------------------------------------------------------ description

    @property
    def max_runs_per_call(self) -> int:
        """Runs per compiled call (``chunk``): the audit sizes its blocks in multiples."""
        return self.chunk

    def __repr__(self) -> str:
        return (f"JaxAlgorithm(name={self.name!r}, threat_model={self.threat_model!r}, "
                f"train={_qualname(self.train)}, pad_to={self.pad_to}, chunk={self.chunk})")

    def to_dict(self) -> dict:
        out = {"adapter": "jax", "train": _qualname(self.train), "pad_to": self.pad_to,
               "chunk": self.chunk, "threat_model": self.threat_model,
               "n_records": n_records(self.data)}
        if self.sampling is not None:
            out["sampling"] = self.sampling.to_dict()
        if self.library_accounting is not None:
            out["library_accounting"] = dict(self.library_accounting)
        if self.train_canaries is not None:
            out["train_canaries"] = _qualname(self.train_canaries)
            out["gradient_canary_slots"] = self.gradient_canary_slots
        return out

    # ------------------------------------------------------------------ pickling

    def __getstate__(self) -> dict:
        """The state without the compiled function (rebuilt lazily after unpickling).

        Raises pickle.PicklingError naming the function when ``train`` (or another hook)
        cannot be pickled by reference."""
        for what in ("train", "make_key", "gradient_canary", "updates", "train_canaries"):
            value = self.__dict__.get(what)
            if value is not None:
                _check_importable(value, f"{what} function", self.name)
        state = self.__dict__.copy()
        state["_fn"] = None
        state.pop("_canary_fn", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ running

    def compiled(self):
        """``jax.jit(jax.vmap(train, in_axes=(None, None, 0)))``, built on first use.

        Raises ImportError (naming ``pip install 'dpclaims[jax]'``) without JAX."""
        if self._fn is None:
            self._fn = self._vectorised(self.train)
        return self._fn

    def _vectorised(self, train, per_run_args: int = 0):
        """``jax.jit(jax.vmap(one))`` of one run ``train(data, n_valid, key, *args)``: the
        data and ``n_valid`` shared, the key data and ``per_run_args`` more arguments one
        row per run; a final-iterate pytree output raveled to one vector."""
        jax = import_jax()
        from jax.flatten_util import ravel_pytree

        make_key = self.make_key
        final = self.threat_model == "final-iterate"

        def one(data, n_valid, key_data, *args):
            out = train(data, n_valid, key_data if make_key is None else make_key(key_data),
                        *args)
            if final and not isinstance(out, jax.Array):
                out = ravel_pytree(out)[0]      # e.g. a NumPyro / d3p parameter dict
            return out
        return jax.jit(jax.vmap(one, in_axes=(None, None, 0) + (0,) * per_run_args))

    def key_data(self, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """The runs' key data: one draw of (n_runs, key_words) uint32 from ``rng``."""
        return rng.integers(0, 2**32, size=(n_runs, self.key_words), dtype=np.uint32)

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        """``n_runs`` runs of ``train`` on ``data`` (module docstring).

        Parameters
        ----------
        data : array, tuple or dict of arrays
            A dataset of at most ``pad_to`` records (D, or D with a canary).
        rng : numpy.random.Generator
            One draw of (n_runs, key_words) uint32 key data is taken from it.
        n_runs : int
            >= 1.

        Returns
        -------
        ndarray, float64
            (n_runs, P) final iterates, or (n_runs, S, k) traces.

        Raises
        ------
        ValueError
            n_runs < 1; a dataset larger than ``pad_to``.
        InvalidMechanismError
            ``train``'s output is not (P,) (final iterate) or (S, k) (full trace).
        ImportError
            JAX is not installed.
        """
        n = check_count(n_runs, "n_runs")
        padded, n_valid = pad_dataset(data, self.pad_to)
        keys = self.key_data(rng, n)
        return self._chunked(self.compiled(), padded, n_valid, [keys], self.chunk, n)

    def _chunked(self, fn, padded, n_valid: int, per_run: list, chunk: int,
                 n: int) -> np.ndarray:
        """``fn(data, n_valid, *per_run chunk)`` over chunks of exactly ``chunk`` runs (the
        last padded with zeros, its extra runs dropped); the output checked and float64."""
        jax = import_jax()
        device_data = jax.device_put(padded)
        valid = np.int32(n_valid)
        n_chunks = math.ceil(n / chunk)
        if n_chunks * chunk > n:
            per_run = [np.concatenate([a, np.zeros((n_chunks * chunk - n, *a.shape[1:]),
                                                   dtype=a.dtype)]) for a in per_run]
        # dispatch every chunk first (JAX runs them asynchronously), then read them back
        outs = [fn(device_data, valid, *(a[c * chunk:(c + 1) * chunk] for a in per_run))
                for c in range(n_chunks)]
        if not isinstance(outs[0], jax.Array):
            raise InvalidMechanismError(
                f"algorithm {self.name!r}: its train function must return one array per run "
                f"((S, k) for the full trace), got {type(outs[0]).__name__}: stack the steps' "
                "releases into one array")
        out = np.concatenate([np.asarray(o, dtype=np.float64) for o in outs])[:n]
        want = 2 if self.threat_model == "final-iterate" else 3
        if out.ndim != want:
            shape = "(P,) (the final iterate)" if want == 2 else "(S, k) (the full trace)"
            raise InvalidMechanismError(
                f"algorithm {self.name!r} declares threat_model={self.threat_model!r}: its "
                f"train function must return one run's output of shape {shape}, got "
                f"{out.shape[1:]}")
        return out

    # ------------------------------------------------------------------ one-run canaries

    def _require_canaries(self) -> None:
        if self.train_canaries is None:
            raise InvalidMechanismError(
                f"algorithm {self.name!r} takes no Dirac gradient canaries: give the "
                "JaxAlgorithm train_canaries, gradient_canary_slots and canary_coordinates")

    def gradient_canary_coordinates(self, m: int) -> np.ndarray:
        """j(i) for the first m slots: ``canary_coordinates[:m]`` (int64 (m,)).

        Raises
        ------
        ValueError
            m < 1 or m > ``gradient_canary_slots`` (naming both).
        InvalidMechanismError
            The object has no canary slots.
        """
        self._require_canaries()
        m = check_count(m, "m")
        if m > self.gradient_canary_slots:
            raise ValueError(f"{self.name}: room for {self.gradient_canary_slots} gradient "
                             f"canaries, asked for m = {m}")
        return self.canary_coordinates[:m].copy()

    def compiled_canaries(self):
        """``jax.jit(jax.vmap(train_canaries, in_axes=(None, None, 0, 0)))``, built on
        first use (as :meth:`compiled`)."""
        self._require_canaries()
        if self._canary_fn is None:
            self._canary_fn = self._vectorised(self.train_canaries, per_run_args=1)
        return self._canary_fn

    def run_gradient_canaries(self, data, rng: np.random.Generator, signs) -> np.ndarray:
        """R runs of ``train_canaries`` on ``data`` with m Dirac gradient canaries (the
        one-run audit's capability, :class:`~dpclaims.audits.capabilities.
        HasGradientCanaries`; module docstring).

        Parameters
        ----------
        data : array, tuple or dict of arrays
            At most ``pad_to`` records.
        rng : numpy.random.Generator
            One draw of (R, key_words) uint32 key data is taken from it.
        signs : array (R, m)
            In {-1, 0, +1}, m <= ``gradient_canary_slots``: canary i of run r contributes
            ``signs[r, i] * clip * e_j(i)`` to each step that samples it; 0: absent.
            Padded with zeros to (R, t).

        Returns
        -------
        ndarray, float64
            (R, P) or (R, S, k), as ``train_canaries`` returns.

        Raises
        ------
        ValueError
            signs not a finite (R, m) array of -1, 0, +1; m above the slots; a dataset
            larger than ``pad_to``.
        InvalidMechanismError
            No canary slots; an output of the wrong shape.
        """
        self._require_canaries()
        s = check_canary_signs(signs)
        n, m = s.shape
        n = check_count(n, "R (the rows of signs)")
        if m > self.gradient_canary_slots:
            raise ValueError(f"{self.name}: room for {self.gradient_canary_slots} gradient "
                             f"canaries, got signs for m = {m}")
        full = np.zeros((n, self.gradient_canary_slots), dtype=np.float32)
        full[:, :m] = s
        padded, n_valid = pad_dataset(data, self.pad_to)
        keys = self.key_data(rng, n)
        return self._chunked(self.compiled_canaries(), padded, n_valid, [keys, full],
                             self.canary_chunk, n)


def _qualname(fn) -> str:
    """``module.qualname`` of a function (of the function a partial wraps), else its repr."""
    inner = fn.func if isinstance(fn, functools.partial) else fn
    try:
        return f"{inner.__module__}.{inner.__qualname__}"
    except AttributeError:
        return repr(fn)
