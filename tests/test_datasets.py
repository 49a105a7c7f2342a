"""Tests of dpclaims.data.datasets: bundled sets, the UCI split layout, clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpclaims.data.datasets import (
    UCI_SETS,
    check_data_dir,
    load_fair,
    load_randhie,
    load_uci,
)

# ../shared/data relative to the repository root (tests/ -> repo -> its parent).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_shared_data = pytest.mark.skipif(
    not (SHARED_DATA / "uci" / "wine-quality-red" / "data.txt").is_file(),
    reason=f"shared data folder not found at {SHARED_DATA}",
)


def assert_scaled_training_rows(data):
    norms = np.linalg.norm(data.x_train, axis=1)
    assert np.all(norms <= 1 + 1e-12)
    assert norms.max() == pytest.approx(1.0, rel=1e-12)  # scaled by the largest row norm
    assert np.all(np.isfinite(data.x_train)) and np.all(np.isfinite(data.x_test))
    # intercept: last column constant on both splits, same value
    intercept = data.x_train[:, -1]
    np.testing.assert_allclose(intercept, intercept[0], rtol=1e-14)
    np.testing.assert_allclose(data.x_test[:, -1], intercept[0], rtol=1e-14)
    # covariates standardised with training statistics (then scaled by one constant):
    # zero training mean, and every non-constant column with the same training std
    cov = data.x_train[:, :-1]
    np.testing.assert_allclose(cov.mean(axis=0), 0.0, atol=1e-12)
    stds = cov.std(axis=0)
    np.testing.assert_allclose(stds[stds > 0], intercept[0], rtol=1e-9)


# --------------------------------------------------------------------------- fair


def test_load_fair_shapes_labels_and_scaling():
    data = load_fair()
    assert data.name == "fair" and data.task == "classification"
    assert data.n_train + data.x_test.shape[0] == 6366
    assert data.x_test.shape[0] == round(0.1 * 6366)
    assert data.dim == 9  # 8 covariates + intercept
    assert data.x_test.shape[1] == 9
    assert data.y_train.shape == (data.n_train,)
    assert set(np.unique(data.y_train)) == {-1.0, 1.0}
    assert set(np.unique(data.y_test)) <= {-1.0, 1.0}
    assert_scaled_training_rows(data)
    assert "||x||_2 <= 1" in data.preprocessing and "seed 0" in data.preprocessing


def test_load_fair_labels_match_affairs_count():
    import statsmodels.api as sm

    frame = sm.datasets.fair.load_pandas().data
    data = load_fair()
    positives = int(np.sum(data.y_train == 1) + np.sum(data.y_test == 1))
    assert positives == int(np.sum(frame["affairs"].to_numpy() > 0))


def test_load_fair_split_is_seeded():
    a, b, c = load_fair(seed=0), load_fair(seed=0), load_fair(seed=1)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.y_train, c.y_train)
    assert load_fair(test_fraction=0.25).x_test.shape[0] == round(0.25 * 6366)


# --------------------------------------------------------------------------- randhie


def test_load_randhie_shapes_and_scaling():
    data = load_randhie()
    assert data.name == "randhie" and data.task == "regression"
    assert data.n_train + data.x_test.shape[0] == 20190
    assert data.dim == 10  # 9 covariates + intercept
    assert_scaled_training_rows(data)
    # target standardised with training statistics
    assert data.y_train.mean() == pytest.approx(0.0, abs=1e-12)
    assert data.y_train.std() == pytest.approx(1.0, rel=1e-12)
    assert np.all(np.isfinite(data.y_test))


# --------------------------------------------------------------------------- UCI (shared)


@needs_shared_data
def test_load_uci_wine_from_shared_data():
    data = load_uci(SHARED_DATA, "wine-quality-red", split=0)
    assert data.name == "wine-quality-red" and data.task == "regression"
    assert data.n_train == 1439
    assert data.x_test.shape[0] == 160
    assert data.dim == 12  # 11 features + intercept
    assert_scaled_training_rows(data)
    assert data.y_train.mean() == pytest.approx(0.0, abs=1e-12)
    assert data.y_train.std() == pytest.approx(1.0, rel=1e-12)
    assert "split 0 (1439 train / 160 test rows)" in data.preprocessing
    other = load_uci(SHARED_DATA, "wine-quality-red", split=1)
    assert other.n_train == 1439 and not np.array_equal(other.y_train, data.y_train)


@needs_shared_data
def test_check_data_dir_accepts_shared_data():
    assert check_data_dir(SHARED_DATA) == SHARED_DATA


# --------------------------------------------------------------------------- UCI (synthetic)


def write_fake_uci(root: Path, name: str = "kin8nm", rows: int = 30, seed: int = 0):
    """A small folder in the Hernandez-Lobato & Adams layout; returns (data, train, test)."""
    rng = np.random.default_rng(seed)
    folder = root / "uci" / name
    folder.mkdir(parents=True)
    data = rng.standard_normal((rows, 5)) * [1.0, 10.0, 0.1, 3.0, 2.0] + [0, 5, -1, 0, 7]
    perm = rng.permutation(rows)
    train, test = np.sort(perm[:24]), np.sort(perm[24:])
    np.savetxt(folder / "data.txt", data)
    np.savetxt(folder / "index_features.txt", [0, 1, 2, 3], fmt="%d")
    np.savetxt(folder / "index_target.txt", [4], fmt="%d")
    np.savetxt(folder / "index_train_0.txt", train, fmt="%d")
    np.savetxt(folder / "index_test_0.txt", test, fmt="%d")
    return data, train, test


def test_load_uci_on_synthetic_folder_matches_hand_computation(tmp_path):
    data, train, test = write_fake_uci(tmp_path)
    out = load_uci(tmp_path, "kin8nm", split=0)
    xtr, ytr = data[train, :4], data[train, 4]
    xte, yte = data[test, :4], data[test, 4]
    mean, std = xtr.mean(axis=0), xtr.std(axis=0)
    xs = np.hstack([(xtr - mean) / std, np.ones((len(train), 1))])
    scale = np.linalg.norm(xs, axis=1).max()
    np.testing.assert_allclose(out.x_train, xs / scale, rtol=1e-12)
    np.testing.assert_allclose(
        out.x_test, np.hstack([(xte - mean) / std, np.ones((len(test), 1))]) / scale,
        rtol=1e-12)
    np.testing.assert_allclose(out.y_train, (ytr - ytr.mean()) / ytr.std(), rtol=1e-12)
    np.testing.assert_allclose(out.y_test, (yte - ytr.mean()) / ytr.std(), rtol=1e-12)
    assert f"({scale:.3f})" in out.preprocessing


def test_load_uci_missing_directory_names_the_path(tmp_path):
    missing = tmp_path / "no-such-folder"
    with pytest.raises(FileNotFoundError, match="no-such-folder") as info:
        load_uci(missing, "wine-quality-red")
    assert str(missing / "uci" / "wine-quality-red") in str(info.value)


def test_load_uci_missing_split_file_names_it(tmp_path):
    write_fake_uci(tmp_path)
    with pytest.raises(FileNotFoundError, match="index_train_3.txt"):
        load_uci(tmp_path, "kin8nm", split=3)


def test_load_uci_non_finite_values_raise(tmp_path):
    data, _, _ = write_fake_uci(tmp_path)
    data[4, 2] = np.nan
    np.savetxt(tmp_path / "uci" / "kin8nm" / "data.txt", data)
    with pytest.raises(ValueError, match=r"data\.txt.*non-finite"):
        load_uci(tmp_path, "kin8nm")


@pytest.mark.parametrize("name", ["wine", "year-prediction-msd", ""])
def test_load_uci_unknown_set_raises(tmp_path, name):
    with pytest.raises(ValueError, match="unknown UCI set") as info:
        load_uci(tmp_path, name)
    assert repr(name) in str(info.value)
    assert all(s in str(info.value) for s in UCI_SETS)


def test_check_data_dir_missing_names_the_path(tmp_path):
    missing = tmp_path / "absent"
    with pytest.raises(FileNotFoundError, match="absent"):
        check_data_dir(missing)
    assert check_data_dir(tmp_path) == tmp_path
    assert check_data_dir(str(tmp_path)) == tmp_path
