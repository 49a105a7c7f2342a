"""One contract over every family's registry (``FAMILY_ZOO``) and every mechanism of
:data:`dpclaims.mechanisms.ZOO`: each entry is read once into its capabilities
(:mod:`dpclaims.audits.capabilities`) and must give outputs of the protocol's shape, the
same outputs under the same seed, a claim whose epsilon is the one its dp_event accounts
to, and, where it declares one, a step (or query) consistent with its sensitivity."""

from __future__ import annotations

import numpy as np
import pytest

from dpclaims import mechanisms
from dpclaims.algorithms.dpvi.zoo import FAMILY_ZOO as DPVI_ZOO
from dpclaims.algorithms.sep.zoo import FAMILY_ZOO as SEP_ZOO
from dpclaims.algorithms.vips.zoo import FAMILY_ZOO as VIPS_ZOO
from dpclaims.analysis.accounting import account_event
from dpclaims.audits.capabilities import (
    HasGradientCanary,
    HasQuery,
    HasStep,
    WholeRunAlgorithm,
)
from dpclaims.audits.mechanism import Sensitivity, validate_mechanism
from dpclaims.audits.whole_run import is_algorithm, validate_algorithm


def _zoo_mechanism(factory):
    def make():
        m = factory()
        return m, m.data
    return make


ENTRIES = {**{f"sep/{k}": v for k, v in SEP_ZOO.items()},
           **{f"vips/{k}": v for k, v in VIPS_ZOO.items()},
           **{f"dpvi/{k}": v for k, v in DPVI_ZOO.items()},
           **{f"zoo/{k}": _zoo_mechanism(v) for k, v in mechanisms.ZOO.items()}}
N = 3


def _caps(obj):
    return validate_algorithm(obj) if is_algorithm(obj) else validate_mechanism(obj)


def _draw(caps, data, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    f = caps.run if is_algorithm(caps) else caps.release
    return np.asarray(f(data, rng, N), dtype=float)


def test_every_family_has_a_registry_with_its_whole_runs():
    runs = {type(make()[0]) for zoo in (SEP_ZOO, VIPS_ZOO, DPVI_ZOO) for make in zoo.values()
            if is_algorithm(make()[0])}
    assert {c.__name__ for c in runs} == {"DPSEPPass", "VIPSRun", "DPVIRun"}
    assert all(issubclass(c, WholeRunAlgorithm) for c in runs)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_outputs_have_the_protocols_shape_and_follow_the_seed(name):
    obj, data = ENTRIES[name]()
    caps = _caps(obj)
    out = _draw(caps, data, 0)
    assert out.shape[0] == N and np.all(np.isfinite(out))
    if is_algorithm(caps):
        assert out.ndim == (3 if caps.threat_model == "full-trace" else 2)
    np.testing.assert_array_equal(out, _draw(caps, data, 0))
    if is_algorithm(caps):   # a hook the resolver found is the named protocol's
        assert (caps.gradient_canary is not None) == isinstance(obj, HasGradientCanary)
    else:
        assert (caps.query is not None) == isinstance(obj, HasQuery)


_ACCOUNTED: dict = {}


def _accounted(event, delta: float, relation: str):
    key = (repr(event), delta, relation)
    if key not in _ACCOUNTED:
        _ACCOUNTED[key] = _bracket(account_event(event, delta, relation, query="general"))
    return _ACCOUNTED[key]


def _bracket(res):
    eps = [(r.epsilon, r.bound) for r in res.rows if r.epsilon is not None]
    upper = min(e for e, b in eps if b in ("upper", "exact"))
    lower = max((e for e, b in eps if b in ("lower", "exact")), default=0.0)
    return lower, upper


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_the_claim_is_its_dp_events_epsilon(name):
    c = _caps(ENTRIES[name]()[0]).claim
    if c.dp_event is None:
        pytest.skip("no dp_event: the claim states epsilon only")
    lower, upper = _accounted(c.dp_event, c.delta, c.relation)
    assert lower * (1 - 1e-3) <= c.epsilon <= upper * (1 + 1e-3)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_the_declared_sensitivity_fits_the_step_or_query(name):
    obj, data = ENTRIES[name]()
    caps = _caps(obj)
    if is_algorithm(caps):
        if caps.step is None:
            pytest.skip("no step")
        assert isinstance(obj, HasStep)
        sens = caps.step_sensitivity
        sens = sens if isinstance(sens, Sensitivity) else Sensitivity(float(sens), 2)
        states = caps.random_states(np.random.default_rng(1), 4)
        from dpclaims.claims.checks.whole_run import _batch

        batch = _batch(caps)
        r0 = np.asarray(caps.step(states, batch, np.random.default_rng(2)))
        r1 = np.asarray(caps.step(states, batch, np.random.default_rng(2)))
        assert r0.shape[0] == 4 and np.all(np.isfinite(r0))
        np.testing.assert_array_equal(r0, r1)   # the same rng: the same noise
        assert sens.value > 0
        return
    if caps.sensitivity is None or caps.query is None:
        pytest.skip("no query with a sensitivity")
    q = np.asarray(caps.query(data), dtype=float).ravel()
    assert np.all(np.isfinite(q)) and caps.sensitivity.value > 0
    assert sens_distance_is_zero(caps.sensitivity, q)


def sens_distance_is_zero(sens: Sensitivity, q) -> bool:
    return sens.distance(q, q) == 0.0
