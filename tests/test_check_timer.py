"""CheckTimer.start: checks in forked processes give the values, errors and timings of
a sequential run, and an error first leaves no process behind (no hang at exit)."""

from __future__ import annotations

import multiprocessing
import time

import numpy as np
import pytest

from dpclaims.claims import CheckTimer, InputError

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="needs the fork start method")


@pytest.fixture(autouse=True)
def _fork_is_safe_here():
    """CheckTimer forks only where that is safe (dpclaims.execution.start_method): not in
    a test process that has imported JAX (tests/needs_jax, in a venv that has it)."""
    from dpclaims.execution import start_method

    method = start_method()
    if method.method != "fork":
        pytest.skip(f"checks run in this process here: {method.reason}")


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}/{b}")


def boom():
    raise InputError("missing data file x.csv")


@pytest.mark.parametrize("workers", [1, 2])
def test_values_errors_and_timings_as_sequential(workers):
    timer = CheckTimer(workers=workers)
    big = timer.start("big", lambda: np.arange(200_000.0))   # far above a pipe's buffer
    bad = timer.start("bad", boom)
    odd = timer.start("odd", lambda: (_ for _ in ()).throw(TwoArgError("x", "y")))
    assert np.array_equal(big.result(), np.arange(200_000.0))
    for _ in range(2):                   # raised again on every call, as the same type
        with pytest.raises(InputError, match="missing data file"):
            bad.result()
    with pytest.raises((TwoArgError, RuntimeError), match="x/y"):
        odd.result()
    assert list(timer.timings)[0] == "big" and timer.timings["big"] is not None


def test_an_error_first_cancels_the_other_checks():
    """The parent fails before collecting a large result: close() ends the child at once
    (without it parent and child wait for each other at exit)."""
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="first"), CheckTimer(workers=2) as timer:
        handle = timer.start("large", lambda: np.zeros(1_000_000))
        raise RuntimeError("first")
    assert time.perf_counter() - t0 < 30
    with pytest.raises(RuntimeError, match="cancelled"):
        handle.result()
