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

# Seconds each long test file took (`make test`, 2026-11-26, 2 cores, both workers
# busy; the files not listed take under 15 s). `make test` hands whole files to its two workers
# (--dist loadfile) in collection order (--no-loadscope-reorder), and the order below
# puts the longest first, so that no long file starts last and runs alone: the
# longest-processing-time-first rule. xdist's own default orders files by their number
# of tests, which started test_cli.py (6 tests, 3 minutes) near the end.
LONG_FILES = {
    # test_cli.py: test_cli_all.py's 115 s merged into it on 2026-11-28 (one smoke run),
    # and test_vips_report.py's tests (reading VIPS's part of that run)
    "test_cli.py": 265, "test_accounting_properties.py": 121,
    "test_accounting_known_values.py": 49,
    "test_privacy_numbers.py": 33, "test_accounting.py": 33, "test_literature_zoo.py": 29,
    "test_whole_run.py": 29, "test_audit_core.py": 23,
    "test_exit_codes.py": 18, "test_user_claims.py": 18, "test_sep.py": 17,
    "test_property_checker.py": 17, "test_cluster.py": 15,
}


def pytest_collection_modifyitems(config, items):
    """The long files first, longest first (:data:`LONG_FILES`); the rest after them in
    their usual order (a stable sort: tests keep their order within a file)."""
    items.sort(key=lambda item: -LONG_FILES.get(item.path.name, 0))


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


@pytest.fixture(autouse=True, scope="session")
def _no_user_data_cache(tmp_path_factory):
    """Every test runs with an empty data cache (``DPCLAIMS_DATA_CACHE``), so an audit
    without --data-dir uses the embedded data whatever ``dpclaims data fetch`` has put
    in the developer's own cache, and with a session-local cache of ``account``'s answers
    (``DPCLAIMS_ACCOUNT_CACHE``); tests of either cache set their own. Accounting results
    are memoised for the session (``DPCLAIMS_ACCOUNTING_MEMO``,
    :data:`dpclaims.analysis.accounting.MEMO_ENV`): the smoke audits repeat the same
    calibrations and catalogue accountings."""
    import os

    empty = tmp_path_factory.mktemp("empty-data-cache")
    answers = tmp_path_factory.mktemp("account-cache")
    # accounting results shared by this session's workers (pytest-N/ is this session's;
    # a worker's own base is pytest-N/popen-gwK), never by two sessions
    base = tmp_path_factory.getbasetemp()
    memo = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "accounting-memo"
    names = ("DPCLAIMS_DATA_CACHE", "DPCLAIMS_ACCOUNT_CACHE", "DPCLAIMS_ACCOUNTING_MEMO")
    before = {k: os.environ.get(k) for k in names}
    os.environ["DPCLAIMS_DATA_CACHE"] = str(empty)
    os.environ["DPCLAIMS_ACCOUNT_CACHE"] = str(answers)  # never the developer's own cache
    os.environ["DPCLAIMS_ACCOUNTING_MEMO"] = str(memo)
    yield
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def dask_client():
    """A ``dask.distributed.Client`` of a ``LocalCluster`` of two single-threaded worker
    processes, started for the test module (skips when ``distributed`` is not
    installed). The workers inherit this process's environment (the caches above)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client
