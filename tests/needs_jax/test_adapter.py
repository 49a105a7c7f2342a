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
