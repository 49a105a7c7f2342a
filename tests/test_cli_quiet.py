"""Issue 41: other libraries' log lines and warnings go to the report folder's log file,
counted in one line; dpclaims' own warnings stay on stderr; forked children's too."""

from __future__ import annotations

import logging
import os
import warnings

from dpclaims.cli_quiet import LOG_NAME, count_records, third_party_to_log


def test_third_party_records_and_warnings_go_to_the_log_and_are_counted(tmp_path, capsys):
    root_handlers = logging.getLogger().handlers[:]
    with third_party_to_log(tmp_path) as log:
        logging.getLogger("absl").warning("failed to converge after 1000 iterations")
        logging.getLogger("absl").warning("again\nwith a second line")
        # what warnings.warn calls once its filters let a warning through
        warnings.showwarning("All-NaN slice", RuntimeWarning, "/site-packages/x.py", 3)
    assert logging.getLogger().handlers == root_handlers  # restored
    text = (tmp_path / LOG_NAME).read_text()
    assert "failed to converge" in text and "All-NaN slice" in text
    assert log.counts == {"absl": 2, "warnings.RuntimeWarning": 1}
    assert log.line(tmp_path) == (
        f"dpclaims: 3 log line(s) and warning(s) from other libraries (absl 2, "
        f"warnings.RuntimeWarning 1) went to {tmp_path / LOG_NAME}")
    assert "converge" not in capsys.readouterr().err


def test_nothing_logged_no_file_no_line(tmp_path):
    with third_party_to_log(tmp_path) as log:
        pass
    assert not (tmp_path / LOG_NAME).exists() and log.line(tmp_path) is None


def test_disabled_under_debug_leaves_stderr_alone(tmp_path):
    with third_party_to_log(tmp_path, enabled=False) as log:
        logging.getLogger("absl").warning("visible")
    assert not (tmp_path / LOG_NAME).exists() and log.total == 0


def test_a_forked_childs_records_are_counted(tmp_path):
    with third_party_to_log(tmp_path) as log:
        pid = os.fork()
        if pid == 0:  # the child: log and leave without running the parent's cleanup
            logging.getLogger("absl").warning("from the child")
            logging.shutdown()
            os._exit(0)
        os.waitpid(pid, 0)
        logging.getLogger("absl").warning("from the parent")
    assert log.counts == {"absl": 2}


def test_dpclaims_own_warnings_stay_on_stderr(tmp_path, recwarn):
    """Passed on to the warnings machinery as it was (stderr in a command; here pytest's
    recorder), never to the log."""
    import dpclaims.cli_quiet as q

    with third_party_to_log(tmp_path) as log:
        warnings.showwarning("ours", UserWarning, q.__file__, 1)
    assert [str(w.message) for w in recwarn] == ["ours"] and log.total == 0
    assert not (tmp_path / LOG_NAME).exists()


def test_count_records_reads_only_record_heads():
    assert count_records("WARNING:absl:a\n    continued: line\nERROR:jax:b\n") == {
        "absl": 1, "jax": 1}


def test_an_audit_says_where_its_data_comes_from_before_any_work(tmp_path, monkeypatch):
    """Issue 41: the first line on stderr names the data source (here: no cache, so the
    embedded defaults), before the paper runs; the run is stopped at the paper's run."""
    from click.testing import CliRunner

    from dpclaims.claims import registry
    from dpclaims.cli import main

    monkeypatch.setenv("DPCLAIMS_DATA_CACHE", str(tmp_path / "empty-cache"))

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(registry, "run_papers", stop)
    r = CliRunner().invoke(main, ["audit", "--paper", "dpsep", "--budget", "smoke",
                                  "--out", str(tmp_path / "o")])
    assert r.exit_code == 130, r.output
    first, second = r.stderr.splitlines()[:2]
    assert first.startswith("dpclaims: data: embedded statsmodels data sets"), first
    assert str(tmp_path / "empty-cache") in first
    # then, per paper, which data sets it reads and what stands in for an absent one
    assert second == ("dpclaims: data: dpsep: uci/wine-quality-red, uci/kin8nm, "
                      "uci/power-plant, uci/naval-propulsion-plant, "
                      "uci/protein-tertiary-structure not found (no data folder): "
                      "embedded statsmodels randhie instead, not the paper's data"), second


def test_data_line_names_each_data_set_and_its_source(tmp_path):
    from dpclaims.claims.paper import Paper
    from dpclaims.claims.registry import data_line, load_registry

    dpsep = next(p for p in load_registry().papers if p.id == "dpsep")
    (tmp_path / "uci" / "kin8nm").mkdir(parents=True)
    line = data_line(Paper(**{**vars(dpsep), "data": {"uci/kin8nm": "randhie",
                                                      "adult": "fair", "x": "fair"}}),
                     tmp_path, "--data-dir")
    assert line == (f"dpsep: uci/kin8nm from --data-dir {tmp_path}; adult, x not found in "
                    f"{tmp_path}: embedded fair instead, not the paper's data")
    assert data_line(Paper(**{**vars(dpsep), "data": {}}), None, "-") == "dpsep: no data set"
    assert "not declared" in data_line(Paper(**{**vars(dpsep), "data": None}), None, "-")
