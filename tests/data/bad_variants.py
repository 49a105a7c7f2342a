"""Mechanisms that are wrong in the ways a user's code is wrong, for tests/test_exit_codes.py.

Each is bad input (exit 2), never a verdict: the CLI names the file, line and exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dp_accounting
import numpy as np

from dpclaims.analysis.domains import Box
from dpclaims.audits import PrivacyClaim

SIGMA, DELTA = 2.0, 1e-5


def _data():
    return np.random.default_rng(0).uniform(-1, 1, (20, 2))


@dataclass(frozen=True)
class Mean:
    name: str = "mean"
    data: np.ndarray = field(default_factory=_data, repr=False)

    @property
    def claim(self):
        return PrivacyClaim(2.0, DELTA, "replace-one", dp_accounting.GaussianDpEvent(SIGMA))

    def release(self, data, rng, n):
        q = np.asarray(data).mean(axis=0)
        return q + SIGMA * (2 / len(data)) * rng.standard_normal((n, q.size))


class RaisingRelease(Mean):
    def release(self, data, rng, n):
        raise ZeroDivisionError("my bug in release")


class BadClaimProperty(Mean):
    @property
    def claim(self):
        return PrivacyClaim(2.0, DELTA, "replace-two")  # not a relation


class IgnoresRng(Mean):
    def release(self, data, rng, n):
        q = np.asarray(data).mean(axis=0)
        return q + np.random.standard_normal((n, q.size))  # noqa: NPY002  (the bug)


@dataclass(frozen=True)
class NanData(Mean):
    data: np.ndarray = field(default_factory=lambda: np.array([[0.0, 1.0], [np.nan, 0.0]]),
                             repr=False)


@dataclass(frozen=True)
class OutsideDomain(Mean):
    domain: Box = Box(-0.5, 0.5, (2,))  # the data are uniform on [-1, 1]


@dataclass(frozen=True)
class DomainShape(Mean):
    domain: Box = Box(-1.0, 1.0, (3,))  # records have shape (2,)


class Interrupted(Mean):
    def release(self, data, rng, n):
        raise KeyboardInterrupt


def raising_factory():
    return {}["no such key"]


# issue 37: outputs and data that are not real numbers (bad input, never "a bug in dpclaims")


class ExitingRelease(Mean):
    def release(self, data, rng, n):
        import sys

        sys.exit(0)  # a user's code that ends the process: bad input, never exit 0


class StringRelease(Mean):
    def release(self, data, rng, n):
        return np.full((n, 1), "0.5")  # numeric strings: still not numbers


class RaggedRelease(Mean):
    def release(self, data, rng, n):
        out = np.empty(n, dtype=object)
        out[:] = [rng.standard_normal(1 + i % 2) for i in range(n)]
        return out


class DictRelease(Mean):
    def release(self, data, rng, n):
        return [{"mean": float(x)} for x in rng.standard_normal(n)]


class ComplexRelease(Mean):
    """The imaginary part carries the data: the real part alone is pure noise."""

    def release(self, data, rng, n):
        q = np.asarray(data).mean(axis=0)
        return rng.standard_normal((n, q.size)) + 1j * (q + 0.01 * rng.standard_normal(
            (n, q.size)))


class MaskedRelease(Mean):
    def release(self, data, rng, n):
        out = super().release(data, rng, n)
        return np.ma.masked_array(out, mask=out > 0)


@dataclass(frozen=True)
class ComplexData(Mean):
    data: np.ndarray = field(default_factory=lambda: _data() * 1j, repr=False)


@dataclass(frozen=True)
class StringCandidates(Mean):
    candidates: tuple = (("a", "b"), ("c", "d"))


class RngBelowThreshold(Mean):
    """Follows ``rng`` for n <= 100 and numpy's global state above (issue 37, D8)."""

    def release(self, data, rng, n):
        q = np.asarray(data).mean(axis=0)
        gen = rng if n <= 100 else np.random  # noqa: NPY002  (the bug)
        return q + SIGMA * (2 / len(data)) * gen.standard_normal((n, q.size))
