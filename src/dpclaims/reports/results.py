"""Read a results.json back: :func:`load_results` and :func:`reading_records`.

results.json (schema 3.0, ``results.schema.json``) stores each claim once with its
readings inside it; :func:`reading_records` gives the flat view (one record per
reading, with its claim's fields), which is what most analyses of a run want.
"""

from __future__ import annotations

import json
from pathlib import Path

from dpclaims.claims.core import InputError

#: The schema versions this reader understands (the major version must match).
READABLE_MAJOR = "3"


def load_results(path) -> dict:
    """The results.json at ``path`` (a file, or a report folder holding one), as a dict.

    Raises
    ------
    InputError
        No such file, not JSON, or a schema version this reader does not read (a
        results.json of dpclaims before schema 3.0: re-run the audit).
    """
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise InputError(f"no results.json at {p}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p} is not JSON: {exc}") from None
    version = str(data.get("schema_version", "")) if isinstance(data, dict) else ""
    if version.split(".")[0] != READABLE_MAJOR:
        raise InputError(f"{p} has schema_version {version or 'none'!r}; this dpclaims "
                         f"reads {READABLE_MAJOR}.x (re-run the audit to write one)")
    return data


def reading_records(results: dict) -> list[dict]:
    """One record per reading, in the report's order, each with its claim's fields
    (``claim_id``, ``paper``, ``location``, ``statement``, ``check``): the layout of a
    :meth:`~dpclaims.claims.core.Verdict.to_dict` plus the reading's ``key``."""
    out = []
    for c in results["claims"]:
        claim = {"claim_id": c["id"], "paper": c["paper"], "location": c["location"],
                 "statement": c["statement"], "check": c["check"]}
        out += [{**claim, **r} for r in c["readings"]]
    return out
