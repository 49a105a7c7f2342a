"""Argument checks shared by every layer: a clear error that names the bad value.

Nothing is silently clipped, dropped or overwritten: every check raises
:class:`ValueError` (or :class:`TypeError`) with the parameter's name and value.
"""

from __future__ import annotations

import math

import numpy as np


class InputError(ValueError):
    """Bad user input (budget, data folder or file, a variant that is not a mechanism):
    the CLI exits 2 on it, with the message. Defined here, the lowest layer, so that
    experiment runners can raise it; :mod:`dpclaims.claims` re-exports it."""


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float; raise ValueError unless it is finite and > 0."""
    value = _as_float(epsilon, name)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {epsilon!r}")
    return value


def check_delta(delta: float, name: str = "delta") -> float:
    """Return ``delta`` as a float; raise ValueError unless 0 <= delta < 1."""
    value = _as_float(delta, name)
    if not (0.0 <= value < 1.0):
        raise ValueError(f"{name} must lie in [0, 1), got {delta!r}")
    return value


def check_positive(value: float, name: str) -> float:
    """Return ``value`` as a float; raise ValueError unless finite and > 0 (sigma, C, gamma)."""
    out = _as_float(value, name)
    if not (math.isfinite(out) and out > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return out


def check_probability(value: float, name: str, *, open_interval: bool = True) -> float:
    """Return ``value``; raise ValueError unless it lies in (0, 1) (or [0, 1] if not open)."""
    out = _as_float(value, name)
    ok = (0.0 < out < 1.0) if open_interval else (0.0 <= out <= 1.0)
    if not ok:
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return out


def check_count(value: int, name: str, minimum: int = 1) -> int:
    """Return ``value`` as int; raise ValueError unless it is an integer >= ``minimum``."""
    try:
        integral = not isinstance(value, bool) and float(value).is_integer()
    except (TypeError, ValueError):
        integral = False
    if not integral:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    out = int(value)
    if out < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return out


def physical_memory() -> int | None:
    """The machine's physical memory in bytes (``SC_PHYS_PAGES * SC_PAGE_SIZE``), or None
    where the system does not say."""
    import os

    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def check_fits_in_memory(count: int, bytes_each: int, name: str, what: str) -> int:
    """Return ``count``; raise ValueError when ``count * bytes_each`` bytes (the least the
    work needs) exceed the machine's physical memory, naming ``name``, the estimated bytes
    and the memory. ``what`` says what is counted ("trials per dataset, 2 datasets x 8
    bytes of score each")."""
    memory = physical_memory()
    need = count * bytes_each
    if memory is not None and need > memory:
        raise ValueError(f"{name} {count:,} needs at least {need:,} bytes ({what}), more than "
                         f"this machine's physical memory, {memory:,} bytes")
    return count


def check_finite_array(array, name: str, ndim: int | None = None) -> np.ndarray:
    """Return ``array`` as a float ndarray; raise ValueError on NaN/inf or a wrong ndim."""
    out = np.asarray(array, dtype=float)
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {out.shape}")
    bad = ~np.isfinite(out)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} contains {int(bad.sum())} non-finite value(s); first at index {first}: "
            f"{out[first]!r}"
        )
    return out


def steps_for_epochs(epochs: float, dataset_size: int, batch_size: float) -> tuple[int, str]:
    """Noisy steps of ``epochs`` passes at (expected) batch size B over N records.

    ``ceil(epochs * N / B)``: a fractional last step is still a release, so the count
    is rounded up (never down, which would under-count the privacy cost). Returns
    (steps, note); the note says how a non-integer count was rounded ("" otherwise).

    Raises
    ------
    ValueError
        epochs, N or B not finite and > 0.
    """
    epochs = check_positive(epochs, "epochs")
    n = check_count(dataset_size, "dataset_size")
    b = check_positive(batch_size, "batch_size")
    exact = epochs * n / b
    steps = math.ceil(exact - 1e-9)
    note = "" if steps == exact else (f"{epochs:g} epochs of N = {n} at batch {b:g} is "
                                      f"{exact:.6g} steps: rounded up to {steps}")
    return steps, note


def _as_float(value, name: str) -> float:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number, got {value!r}") from exc
