"""Every report a test writes is validated against the shipped JSON Schema.

``dpclaims.reports.render.write_report`` is wrapped for the whole session: after it
writes ``results.json``, the file is validated against
``src/dpclaims/reports/results.schema.json`` (jsonschema, Draft 2020-12), so a
report whose layout drifts from its schema fails the test that produced it.
"""

from __future__ import annotations

import json

import pytest

VALIDATED: list[str] = []


@pytest.fixture(autouse=True, scope="session")
def _validate_every_report():
    from jsonschema import Draft202012Validator

    from dpclaims.reports import render

    validator = Draft202012Validator(json.loads(render.SCHEMA_PATH.read_text()))
    original = render.write_report

    def checked(out_dir, **kwargs):
        paths = original(out_dir, **kwargs)
        validator.validate(json.loads(paths["json"].read_text()))
        VALIDATED.append(str(paths["json"]))
        return paths

    render.write_report = checked
    yield
    render.write_report = original
