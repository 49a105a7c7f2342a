"""Datasets as records: read, replace, add and remove one record.

A dataset is either an array whose leading axis indexes records, shape
``(N, ...)``, a tuple of such arrays sharing the leading axis (e.g.
``(x (N, d), y (N,))``), or a dict of them (e.g. ``{"x": (N, d), "y": (N,)}``, the
pytrees JAX code takes: :mod:`dpclaims.adapters.jax`); a record is then ``data[i]``,
respectively the tuple of ``component[i]``, respectively the dict
``{name: component[i]}`` with the same keys. Neighbouring datasets differ by one record: replaced
(replace-one, N public) or added / removed (add-remove). Every function returns
a copy and raises ValueError on a bad index, a record of the wrong shape or a
record that the dataset's dtype cannot store without changing it.
"""

from __future__ import annotations

import numpy as np


def n_records(data) -> int:
    """Number of records N of a dataset (array (N, ...), tuple or dict of such arrays)."""
    if isinstance(data, dict):
        if not data:
            raise ValueError("a dict dataset needs at least one component array")
        return n_records(tuple(data.values()))
    if isinstance(data, tuple):
        if not data:
            raise ValueError("a tuple dataset needs at least one component array")
        sizes = {np.shape(c)[0] if np.ndim(c) else None for c in data}
        if len(sizes) != 1 or None in sizes:
            raise ValueError(f"the components of a tuple dataset must share their leading "
                             f"(record) axis, got shapes {[np.shape(c) for c in data]}")
        return sizes.pop()
    if np.ndim(data) == 0:
        raise ValueError(f"a dataset must have a leading record axis, got a scalar {data!r}")
    return np.shape(data)[0]


def get_record(data, index: int):
    """Record ``index`` of ``data`` (a row, or a tuple of rows)."""
    _check_index(data, index)
    if isinstance(data, dict):
        return {k: np.asarray(c)[index] for k, c in data.items()}
    if isinstance(data, tuple):
        return tuple(np.asarray(c)[index] for c in data)
    return np.asarray(data)[index]


def replace_record(data, index: int, record):
    """A copy of ``data`` with record ``index`` replaced by ``record``."""
    _check_index(data, index)
    if isinstance(data, dict):
        return _as_dict(data, replace_record(tuple(data.values()), index,
                                             _dict_record_as_tuple(data, record)))
    if isinstance(data, tuple):
        record = _check_tuple_record(data, record)
        out = tuple(np.array(c, copy=True) for c in data)
        for c, r in zip(out, record, strict=True):
            c[index] = _cast_record(r, c.dtype)
        return out
    out = np.array(data, copy=True)
    _check_record_shape(np.asarray(record).shape, out.shape[1:])
    out[index] = _cast_record(record, out.dtype)
    return out


def remove_record(data, index: int):
    """A copy of ``data`` without record ``index``."""
    _check_index(data, index)
    if isinstance(data, dict):
        return _as_dict(data, remove_record(tuple(data.values()), index))
    if isinstance(data, tuple):
        return tuple(np.delete(np.asarray(c), index, axis=0) for c in data)
    return np.delete(np.asarray(data), index, axis=0)


def add_record(data, record):
    """A copy of ``data`` with ``record`` appended as record N."""
    if isinstance(data, dict):
        return _as_dict(data, add_record(tuple(data.values()),
                                         _dict_record_as_tuple(data, record)))
    if isinstance(data, tuple):
        record = _check_tuple_record(data, record)
        return tuple(np.concatenate([np.asarray(c), _cast_record(r, np.asarray(c).dtype)[None]])
                     for c, r in zip(data, record, strict=True))
    arr = np.asarray(data)
    _check_record_shape(np.asarray(record).shape, arr.shape[1:])
    return np.concatenate([arr, _cast_record(record, arr.dtype)[None]])


def _cast_record(value, dtype):
    """``value`` as ``dtype``; ValueError if the cast would change it (e.g. 0.7 -> int 0)."""
    arr = np.asarray(value)
    out = arr.astype(dtype)
    if not np.array_equal(out, arr, equal_nan=arr.dtype.kind == "f"):
        raise ValueError(f"record value {value!r} cannot be stored in a dataset of dtype "
                         f"{np.dtype(dtype)} without changing it")
    return out


def _check_index(data, index) -> None:
    n = n_records(data)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n:
        raise ValueError(f"record index must be an integer in [0, {n}), got {index!r}")


def _check_record_shape(got, want) -> None:
    if tuple(got) != tuple(want):
        raise ValueError(f"record has shape {tuple(got)}, the dataset's records have {tuple(want)}")


def _dict_record_as_tuple(data: dict, record) -> tuple:
    """A dict record as the tuple of its values in ``data``'s key order; ValueError
    unless it is a dict with exactly ``data``'s keys."""
    if not isinstance(record, dict) or set(record) != set(data):
        raise ValueError(f"a record of a dict dataset with keys {list(data)} must be a dict "
                         f"with those keys, got {record!r:.200}")
    return tuple(record[k] for k in data)


def _as_dict(data: dict, components: tuple) -> dict:
    return dict(zip(data, components, strict=True))


def _check_tuple_record(data, record):
    if not isinstance(record, tuple) or len(record) != len(data):
        raise ValueError(f"a record of a {len(data)}-component tuple dataset must be a tuple "
                         f"of {len(data)} values, got {record!r}")
    for c, r in zip(data, record, strict=True):
        _check_record_shape(np.shape(r), np.shape(c)[1:])
    return record


def dataset_as_lists(data) -> list:
    """A dataset as nested lists for JSON evidence: ``data.tolist()``, or one list per
    component of a tuple dataset, a dict of them for a dict dataset."""
    if isinstance(data, dict):
        return {k: np.asarray(c).tolist() for k, c in data.items()}
    if isinstance(data, tuple):
        return [np.asarray(c).tolist() for c in data]
    return np.asarray(data).tolist()


def records_equal(a, b) -> bool:
    """Whether two records (rows, tuples or dicts of rows) are equal."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b)
                and all(np.array_equal(a[k], b[k]) for k in a))
    if isinstance(a, tuple) != isinstance(b, tuple):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def differing_records(d0, d1) -> np.ndarray:
    """Indices where two equal-size datasets differ."""
    if isinstance(d0, dict):
        if not isinstance(d1, dict) or set(d0) != set(d1):
            raise ValueError("a dict dataset can only be compared with one of the same keys")
        return differing_records(tuple(d0.values()), tuple(d1[k] for k in d0))
    comps = zip(d0, d1, strict=True) if isinstance(d0, tuple) else [(d0, d1)]
    diff = None
    for a, b in comps:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            raise ValueError(f"datasets have record components of shapes {a.shape} and {b.shape}")
        d = (a != b).reshape(a.shape[0], -1).any(axis=1)
        diff = d if diff is None else diff | d
    return np.flatnonzero(diff)


