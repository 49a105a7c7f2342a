"""Seed streams derived from stable names: the same name gives the same random numbers
whatever else a run contains.

A check's random numbers come from ``SeedSequence([root seed, *keys])``. A key is a
non-negative integer that means the same thing in every run (a split index, a repeat
index, a fixed tag such as 62 for Sec. 6.2) or a name (a data set, a method, a reading),
turned into two 32-bit words by BLAKE2b. Never a position in a list or a length: two
data sets whose names have the same length, or a data set run alone instead of after
another, would otherwise draw the same or different numbers by accident.
"""

from __future__ import annotations

import hashlib

import numpy as np


def key_words(key: int | str) -> list[int]:
    """The entropy words of one key: ``[key]`` for an int >= 0, two 32-bit words of the
    BLAKE2b digest of its UTF-8 text for a str.

    Raises
    ------
    TypeError
        A key that is neither an int nor a str (a bool or a float included).
    ValueError
        A negative int.
    """
    if isinstance(key, bool) or not isinstance(key, int | str | np.integer):
        raise TypeError(f"a seed key is an int >= 0 or a name (str), got {key!r}")
    if isinstance(key, str):
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
        return [int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:], "little")]
    if key < 0:
        raise ValueError(f"a seed key must be >= 0, got {key}")
    return [int(key)]


def seed_sequence(seed: int, *keys: int | str) -> np.random.SeedSequence:
    """``SeedSequence`` of the root ``seed`` and ``keys`` (:func:`key_words` each)."""
    words = [int(seed)]
    for k in keys:
        words += key_words(k)
    return np.random.SeedSequence(words)


def rng_for(seed: int, *keys: int | str) -> np.random.Generator:
    """A generator on the stream :func:`seed_sequence` ``(seed, *keys)``."""
    return np.random.default_rng(seed_sequence(seed, *keys))
