"""An audit of a JAX mechanism on two worker processes (issue 40, item 2): forked after
JAX had started its threads, the workers hung silently; now they are spawned, each on
one compute thread, and give the one-process result."""

from __future__ import annotations

import json
import multiprocessing

import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from dpclaims.audits.core import audit  # noqa: E402
from dpclaims.audits.mechanism import PrivacyClaim, replace_one  # noqa: E402
from dpclaims.execution import start_method  # noqa: E402
from dpclaims.execution.processes import starts_used  # noqa: E402


@jax.jit
def _noisy_sums(key, total, unit):
    """(n, 2) Gaussian noise around the sum, drawn with jax.random (n from ``unit``)."""
    return total + jax.random.normal(key, unit.shape + (2,))


class JaxGaussianSum:
    """The sum of the data plus N(0, 1) noise in two coordinates, drawn by JAX: the key
    comes from the numpy generator, so the release follows its rng; vectorised over n."""

    name = "jax gaussian sum"
    claim = PrivacyClaim(2.0, 1e-5, "replace-one")

    def release(self, data, rng, n):
        key = jax.random.PRNGKey(int(rng.integers(0, 2**31 - 1)))
        out = _noisy_sums(key, jnp.asarray(float(np.sum(data))), jnp.zeros(n))
        return np.asarray(out, dtype=float)


def test_a_jax_mechanism_on_two_workers_gives_the_one_worker_result():
    pair = replace_one(np.zeros(5), 0, 1.0)
    one = audit(JaxGaussianSum(), pair, 12_000, seed=2, block_size=3000)
    chosen = start_method(one_thread=True)
    assert chosen.method == "spawn" and "jax" in chosen.reason
    two = audit(JaxGaussianSum(), pair, 12_000, seed=2, block_size=3000, workers=2,
                worker_timeout=300)
    assert json.dumps(one.to_dict(), sort_keys=True) == json.dumps(two.to_dict(),
                                                                    sort_keys=True)
    assert one.epsilon_lower_bound > 0  # the sums differ by 1: the attack sees it
    assert any(s["method"] == "spawn" and "jax" in s["reason"] for s in starts_used())
    assert multiprocessing.active_children() == []
