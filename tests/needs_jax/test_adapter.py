"""The JAX adapter (dpclaims.adapters.jax) on a plain-JAX DP-SGD (examples/jax_dpsgd.py).

Runs in a venv with JAX (``make test-d3p`` or ``pip install 'dpclaims[jax]'``); skipped
without it. Small chunks keep the compiles and the audits to a few CPU-seconds.
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from dpclaims.adapters.jax import JaxAlgorithm  # noqa: E402
from dpclaims.analysis.records import add_record  # noqa: E402
from dpclaims.audits.mechanism import InvalidMechanismError  # noqa: E402
from dpclaims.audits.whole_run import audit_whole_run, canary_pair  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import jax_dpsgd  # noqa: E402

TRACES = {"count": 0}


def counting_train(data, n_valid, key, **kw):
    """:func:`jax_dpsgd.dpsgd_train`, counting how often JAX traces it (a Python side
    effect runs once per trace, never per call of the compiled function)."""
    TRACES["count"] += 1
    return jax_dpsgd.dpsgd_train(data, n_valid, key, **kw)


@pytest.fixture(scope="module")
def alg():
    return jax_dpsgd.make_dpsgd(chunk=256, train=counting_train)


def test_same_rng_same_runs_and_chunks_do_not_change_them(alg):
    a = alg.run(alg.data, np.random.default_rng(3), 5)
    assert a.shape == (5, 4, 2) and a.dtype == np.float64
    assert np.array_equal(a, alg.run(alg.data, np.random.default_rng(3), 5))
    assert not np.array_equal(a, alg.run(alg.data, np.random.default_rng(4), 5))
    # 600 runs are 3 chunks of 256 (the last padded and trimmed); the key data is one draw
    # of (n_runs, 2) from the stream, so the first 5 runs are those of a call of 5
    many = alg.run(alg.data, np.random.default_rng(3), 600)
    assert many.shape == (600, 4, 2)
    assert np.array_equal(many[:5], a)
    assert len({tuple(r.ravel()) for r in many}) == 600


def test_neighbouring_datasets_share_one_compile(alg):
    pair = canary_pair(alg, "gradient")
    before = TRACES["count"]
    out0 = alg.run(pair.d0, np.random.default_rng(0), 300)
    out1 = alg.run(pair.d1, np.random.default_rng(0), 7)
    inp = canary_pair(alg, "input")
    alg.run(inp.d1, np.random.default_rng(0), 3)
    assert TRACES["count"] - before <= 1   # 0 when an earlier test compiled it already
    assert TRACES["count"] >= 1
    # the canary's +C u moves the released sums along e_1 only when it is sampled
    assert out0.shape == (300, 4, 2) and out1.shape == (7, 4, 2)


def test_pickle_round_trip_rebuilds_the_compiled_function(alg):
    alg.run(alg.data, np.random.default_rng(0), 2)
    assert alg._fn is not None
    state = alg.__getstate__()
    assert state["_fn"] is None
    copy = pickle.loads(pickle.dumps(alg))
    assert copy._fn is None
    want = alg.run(alg.data, np.random.default_rng(11), 9)
    assert np.array_equal(copy.run(copy.data, np.random.default_rng(11), 9), want)


def test_a_train_function_that_cannot_be_imported_is_named_when_pickling():
    base = jax_dpsgd.make_dpsgd(chunk=8)
    bad = JaxAlgorithm(name="lambda", claim=base.claim, threat_model="full-trace",
                       train=lambda data, n_valid, key: data["x"][:2], data=base.data)
    with pytest.raises(pickle.PicklingError, match="train function.*module level"):
        pickle.dumps(bad)


def test_a_dataset_larger_than_pad_to_is_refused(alg):
    big = add_record(add_record(alg.data, jax_dpsgd.gradient_canary(1)),
                     jax_dpsgd.gradient_canary(-1))
    with pytest.raises(ValueError, match="22 records, more than pad_to = 21"):
        alg.run(big, np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="pad_to = 3 is smaller than the data's 20"):
        JaxAlgorithm(name="x", claim=alg.claim, threat_model="full-trace",
                     train=jax_dpsgd.dpsgd_train, data=alg.data, pad_to=3)


def test_train_output_of_the_wrong_shape_is_an_error():
    base = jax_dpsgd.make_dpsgd(chunk=8)
    alg = JaxAlgorithm(name="final-as-trace", claim=base.claim, threat_model="full-trace",
                       train=_final_only, data=base.data, chunk=8)
    with pytest.raises(InvalidMechanismError, match=r"shape \(S, k\).*got \(2,\)"):
        alg.run(alg.data, np.random.default_rng(0), 3)


def _final_only(data, n_valid, key):
    return data["x"][0] + jax.random.normal(key, (2,))


def test_audit_blocks_are_whole_chunks(alg):
    res = audit_whole_run(alg, 2000, seed=0)
    assert res.block_size % alg.chunk == 0


# The audits (fixed seed 0, alpha = 0.05: a correct algorithm is refuted with probability
# <= 5 %; the seed is fixed, so the outcome is too). Claim: epsilon 2.52 (PLD, q = 0.5,
# sigma = 2, T = 4, delta = 1e-5).

def test_audit_does_not_refute_the_correct_dpsgd(alg):
    res = audit_whole_run(alg, 20_000, seed=0)
    assert not res.refutes_claim
    assert res.epsilon_lower_bound < alg.claim.epsilon


def test_audit_refutes_noise_std_sigma_instead_of_sigma_c():
    bug = jax_dpsgd.make_dpsgd(noise_std=2.0, chunk=256)     # sigma / C = 0.5 in truth
    res = audit_whole_run(bug, 5_000, seed=0)
    assert res.refutes_claim, res.epsilon_lower_bound


def test_audit_refutes_no_clipping_with_the_input_canary():
    bug = jax_dpsgd.make_dpsgd(clip=1.0, do_clip=False, chunk=256)
    res = audit_whole_run(bug, 5_000, seed=0, canary="input")
    assert res.refutes_claim, res.epsilon_lower_bound
    ok = jax_dpsgd.make_dpsgd(clip=1.0, chunk=256)
    assert not audit_whole_run(ok, 5_000, seed=0, canary="input").refutes_claim


def test_check_variant_on_the_example_refutes_the_planted_bug(tmp_path):
    from click.testing import CliRunner

    from dpclaims.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "jax_dpsgd.py"
    result = CliRunner().invoke(main, ["check-variant", f"{example}:dpsgd_noise_not_scaled",
                                       "--n-trials", "5000", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output       # 1: a claim refuted
    # the piped claim line: the verdict word, then the claim's id and its sentence
    assert re.search(r"^refuted +\S+/whole-run-audit: ", result.output, re.M), result.output


def test_make_key_gives_train_another_kind_of_key():
    base = jax_dpsgd.make_dpsgd(chunk=16)
    typed = JaxAlgorithm(name="typed-keys", claim=base.claim, threat_model="full-trace",
                         train=base.train, data=base.data, chunk=16,
                         make_key=jax.random.wrap_key_data)
    out = typed.run(typed.data, np.random.default_rng(5), 20)
    # a typed threefry key over the same key data draws what the raw key draws
    assert np.array_equal(out, base.run(base.data, np.random.default_rng(5), 20))
    copy = pickle.loads(pickle.dumps(typed))
    assert np.array_equal(copy.run(copy.data, np.random.default_rng(5), 3), out[:3])


def test_the_worked_example_of_docs_jax_md_runs(tmp_path, monkeypatch):
    text = (Path(__file__).resolve().parents[2] / "docs" / "jax.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "my_dpsgd_doc.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_dpsgd_doc

    alg = my_dpsgd_doc.make()
    out = alg.run(alg.data, np.random.default_rng(0), 3)
    assert out.shape == (3, 4, 2)
    pair = canary_pair(alg, "gradient")
    assert alg.run(pair.d1, np.random.default_rng(0), 3).shape == (3, 4, 2)
    copy = pickle.loads(pickle.dumps(alg))
    assert np.array_equal(copy.run(copy.data, np.random.default_rng(0), 3), out)


def _runs_in_child(alg, seed, n):
    return alg.run(alg.data, np.random.default_rng(seed), n), alg._fn is not None


def test_a_spawned_worker_rebuilds_the_compiled_function_and_gives_the_same_runs(alg):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    alg.run(alg.data, np.random.default_rng(0), 2)            # compiled in this process
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        out, compiled = pool.submit(_runs_in_child, alg, 8, 300).result(timeout=300)
    assert compiled
    assert np.array_equal(out, alg.run(alg.data, np.random.default_rng(8), 300))


def _params_dict(data, n_valid, key):
    """A final iterate as a parameter dict, as NumPyro and d3p return it."""
    k1, k2 = jax.random.split(key)
    return {"scale": jax.random.normal(k1, (1,)) + n_valid,
            "loc": data["x"].sum(0) + jax.random.normal(k2, (2,))}


def test_a_final_iterate_given_as_a_parameter_dict_is_flattened():
    base = jax_dpsgd.make_dpsgd(chunk=8)
    alg = JaxAlgorithm(name="dict-params", claim=base.claim, threat_model="final-iterate",
                       train=_params_dict, data=base.data, chunk=8)
    out = alg.run(alg.data, np.random.default_rng(0), 3)
    assert out.shape == (3, 3)                       # "loc" (2) then "scale" (1): key order
    assert np.allclose(out[:, 2].mean(), 20.0, atol=3.0)


def test_a_full_trace_given_as_a_dict_is_an_error():
    base = jax_dpsgd.make_dpsgd(chunk=8)
    alg = JaxAlgorithm(name="dict-trace", claim=base.claim, threat_model="full-trace",
                       train=_params_dict, data=base.data, chunk=8)
    with pytest.raises(InvalidMechanismError, match="one array per run.*got dict"):
        alg.run(alg.data, np.random.default_rng(0), 3)


# ---------------------------------------------------------------- one-run canaries

def test_one_run_canaries_add_exactly_signs_c_e_j_to_the_steps_they_join():
    """Zero noise, the same keys with and without the canaries: the difference of the
    released sums is signs[r, i] * C on coordinate j(i) = 2 + i in the steps canary i
    joins, 0 elsewhere (the ordinary records' coordinates, the unused slots, sign 0)."""
    alg = jax_dpsgd.make_dpsgd(noise_std=0.0, chunk=8, canary_slots=8, canary_chunk=16)
    signs = np.random.default_rng(0).choice([-1.0, 0.0, 1.0], size=(40, 6))
    with_c = alg.run_gradient_canaries(alg.data, np.random.default_rng(3), signs)
    without = alg.run_gradient_canaries(alg.data, np.random.default_rng(3), np.zeros((40, 6)))
    diff = with_c - without
    assert diff.shape == (40, 4, 10)                      # (R, T, 2 + slots)
    np.testing.assert_array_equal(diff[:, :, :2], 0.0)
    np.testing.assert_array_equal(diff[:, :, 8:], 0.0)
    d = diff[:, :, 2:8]
    want = np.broadcast_to(alg.clip * signs[:, None, :], d.shape)
    joined = d != 0
    np.testing.assert_array_equal(d[joined], want[joined])
    assert not joined[want == 0].any()
    # each canary joins each step with probability q = 1/2: of the n = 640-ish cells with a
    # sign, the joined count is Binomial(n, 1/2); within 5 sd (false alarm < 1e-6; fixed seed)
    n = int((want != 0).sum())
    assert abs(joined.sum() - n / 2) < 5 * np.sqrt(n / 4), (joined.sum(), n)
    np.testing.assert_array_equal(alg.gradient_canary_coordinates(6), 2 + np.arange(6))


def test_one_run_canary_runs_follow_the_rng_and_chunks_do_not_change_them():
    alg = jax_dpsgd.make_dpsgd(chunk=8, canary_slots=5, canary_chunk=2)
    signs = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, 1.0], [-1.0, -1.0, 1.0]])
    a = alg.run_gradient_canaries(alg.data, np.random.default_rng(5), signs)
    assert a.shape == (3, 4, 7)                           # 2 chunks of 2, the last padded
    b = alg.run_gradient_canaries(alg.data, np.random.default_rng(5), signs[:2])
    np.testing.assert_array_equal(a[:2], b)
    assert not np.array_equal(a, alg.run_gradient_canaries(alg.data,
                                                           np.random.default_rng(6), signs))
    copy = pickle.loads(pickle.dumps(alg))
    np.testing.assert_array_equal(
        copy.run_gradient_canaries(copy.data, np.random.default_rng(5), signs), a)


def test_one_run_canary_arguments_are_checked():
    from dpclaims.audits.one_run import offers_gradient_canaries

    base = jax_dpsgd.make_dpsgd(chunk=8)
    assert not offers_gradient_canaries(base)             # no slots: no capability
    assert "train_canaries" not in base.to_dict()
    alg = jax_dpsgd.make_dpsgd(chunk=8, canary_slots=3)
    assert offers_gradient_canaries(alg)
    assert alg.to_dict()["gradient_canary_slots"] == 3
    kw = {"name": "x", "claim": base.claim, "threat_model": "full-trace",
          "train": base.train, "data": base.data}
    with pytest.raises(ValueError, match="go together.*only 2"):
        JaxAlgorithm(**kw, train_canaries=alg.train_canaries, gradient_canary_slots=3)
    with pytest.raises(ValueError, match="3 distinct non-negative integers"):
        JaxAlgorithm(**kw, train_canaries=alg.train_canaries, gradient_canary_slots=3,
                     canary_coordinates=[2, 2, 3])
    with pytest.raises(ValueError, match="-1, 0 or \\+1"):
        alg.run_gradient_canaries(alg.data, np.random.default_rng(0), np.full((1, 3), 2.0))
    with pytest.raises(ValueError, match="room for 3 gradient canaries, got signs for m = 4"):
        alg.run_gradient_canaries(alg.data, np.random.default_rng(0), np.ones((1, 4)))
    with pytest.raises(ValueError, match="room for 3 gradient canaries, asked for m = 4"):
        alg.gradient_canary_coordinates(4)
    with pytest.raises(InvalidMechanismError, match="takes no Dirac gradient canaries"):
        base.run_gradient_canaries(base.data, np.random.default_rng(0), np.ones((1, 2)))
