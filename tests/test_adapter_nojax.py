"""dpclaims.adapters.jax without JAX: it imports, and asks for the extra when run; its
padding and the dict datasets of dpclaims.analysis.records (numpy only)."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from dpclaims.analysis.records import (
    add_record,
    dataset_as_lists,
    differing_records,
    get_record,
    n_records,
    records_equal,
    remove_record,
    replace_record,
)
from dpclaims.audits.mechanism import PrivacyClaim


@pytest.fixture
def no_jax(monkeypatch):
    """``import jax`` fails (a None entry in sys.modules makes the import raise), and the
    adapter module is imported afresh under it (the module imported before is put back
    afterwards)."""
    import dpclaims.adapters

    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.delitem(sys.modules, "dpclaims.adapters.jax", raising=False)
    monkeypatch.delattr(dpclaims.adapters, "jax", raising=False)   # restored afterwards
    return importlib.import_module("dpclaims.adapters.jax")


def _train(data, n_valid, key):
    return data["x"][0]


def test_the_module_imports_and_names_the_extra_without_jax(no_jax):
    data = {"x": np.zeros((3, 2)), "y": np.zeros(3)}
    alg = no_jax.JaxAlgorithm(name="a", claim=PrivacyClaim(1.0, 1e-5, "add-remove"),
                              threat_model="final-iterate", train=_train, data=data)
    assert alg.pad_to == 4 and alg.max_runs_per_call == 4096
    with pytest.raises(ImportError, match=r"pip install 'dpclaims\[jax\]'"):
        alg.run(data, np.random.default_rng(0), 2)
    with pytest.raises(ImportError, match="needs JAX"):
        no_jax.import_jax()


def test_pad_dataset_keeps_kind_keys_and_dtypes():
    from dpclaims.adapters.jax import pad_dataset

    data = {"x": np.ones((2, 3), np.float32), "k": np.array([1, 2])}
    padded, n = pad_dataset(data, 4)
    assert n == 2 and list(padded) == ["x", "k"]
    assert padded["x"].shape == (4, 3) and padded["x"].dtype == np.float32
    assert padded["k"].tolist() == [1, 2, 0, 0]
    tup, _ = pad_dataset((np.ones(2), np.ones((2, 1))), 3)
    assert isinstance(tup, tuple) and tup[1].shape == (3, 1)
    arr, _ = pad_dataset(np.ones((2, 2)), 2)
    assert arr.shape == (2, 2)
    with pytest.raises(ValueError, match="3 records, more than pad_to = 2"):
        pad_dataset(np.ones((3, 1)), 2)


def test_dict_datasets_as_records():
    d = {"x": np.arange(6.0).reshape(3, 2), "y": np.array([0.0, 1.0, 0.0])}
    assert n_records(d) == 3
    r = get_record(d, 1)
    assert records_equal(r, {"x": np.array([2.0, 3.0]), "y": np.float64(1.0)})
    added = add_record(d, {"y": 1.0, "x": np.array([9.0, 9.0])})   # key order of the data
    assert list(added) == ["x", "y"] and n_records(added) == 4
    assert added["x"][3].tolist() == [9.0, 9.0] and n_records(d) == 3
    replaced = replace_record(d, 0, {"x": np.array([7.0, 7.0]), "y": 1.0})
    assert differing_records(d, replaced).tolist() == [0]
    assert n_records(remove_record(d, 2)) == 2
    assert dataset_as_lists(d) == {"x": [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]],
                                   "y": [0.0, 1.0, 0.0]}
    with pytest.raises(ValueError, match="must be a dict with those keys"):
        add_record(d, {"x": np.zeros(2)})
    with pytest.raises(ValueError, match="record has shape"):
        add_record(d, {"x": np.zeros(3), "y": 0.0})
    with pytest.raises(ValueError, match="share their leading"):
        n_records({"x": np.zeros(2), "y": np.zeros(3)})


class _Chunked:
    """A numpy whole run (one Gaussian release of a clipped sum, final iterate) that
    declares ``max_runs_per_call``."""

    name = "chunked"
    threat_model = "final-iterate"
    max_runs_per_call = 300

    def __init__(self):
        self.claim = PrivacyClaim(1.0, 1e-5, "add-remove")
        self.data = np.zeros((5, 1))
        self.input_canary = np.ones(1)

    def run(self, data, rng, n_runs):
        return np.asarray(data).sum() + 4.0 * rng.standard_normal((n_runs, 1))


def test_audit_whole_run_blocks_are_multiples_of_max_runs_per_call():
    from dpclaims.audits.whole_run import audit_whole_run, validate_algorithm

    res = audit_whole_run(_Chunked(), 2000, seed=0)
    assert res.block_size % 300 == 0 and res.block_size >= 300
    bad = _Chunked()
    bad.max_runs_per_call = 0
    with pytest.raises(ValueError, match="max_runs_per_call must be an integer >= 1"):
        validate_algorithm(bad)
