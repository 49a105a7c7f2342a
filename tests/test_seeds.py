"""Seed streams from stable names (issue 22: "Power" and "Naval" drew the same numbers
when a stream was keyed on the name's length)."""

from __future__ import annotations

import numpy as np
import pytest

from dpclaims.analysis.seeds import key_words, rng_for, seed_sequence


def test_names_of_equal_length_draw_different_numbers():
    assert len("Power") == len("Naval")
    a, b = rng_for(0, 62, "Power").random(4), rng_for(0, 62, "Naval").random(4)
    assert not np.allclose(a, b)


def test_a_stream_is_the_same_in_every_run_and_process():
    # fixed: BLAKE2b, not Python's per-process salted hash()
    assert key_words("Wine") == key_words("Wine") == [2861558166, 2075200053]
    assert rng_for(3, "x", 1).integers(1 << 30) == rng_for(3, "x", 1).integers(1 << 30)
    assert seed_sequence(3, 7).entropy == np.random.SeedSequence([3, 7]).entropy


@pytest.mark.parametrize("bad, err", [(-1, ValueError), (1.5, TypeError), (True, TypeError),
                                      (None, TypeError)])
def test_a_bad_key_is_refused(bad, err):
    with pytest.raises(err):
        key_words(bad)
