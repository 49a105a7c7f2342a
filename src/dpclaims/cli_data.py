"""Command line: ``dpclaims data fetch`` and ``dpclaims data list`` (the papers' data sets
in a local cache, :mod:`dpclaims.data.fetch`).

Registered on the ``dpclaims`` group by :mod:`dpclaims.cli`, so its exit codes apply: 0
done; 2 bad input (an unknown data set name, a bad ``--mirror``, a failed download naming
its URL, a checksum mismatch naming the file and both SHA-256; one line on stderr); 70 an
internal error; 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path

import click

_CACHE_HELP = ("The cache folder (default: $DPCLAIMS_DATA_CACHE, else the user cache "
               "folder, ~/.cache/dpclaims on Linux).")


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _files_summary(ds) -> str:
    """The file names of a data set, the numbered split files folded into one pattern."""
    import re

    names = [f.path.rsplit("/", 1)[1] for f in ds.files]
    out, seen = [], set()
    for name in names:
        m = re.fullmatch(r"(index_(?:train|test))_\d+\.txt", name)
        if m is None:
            out.append(name)
            continue
        stem = m.group(1)
        if stem not in seen:
            seen.add(stem)
            k = sum(1 for n in names if re.fullmatch(rf"{stem}_\d+\.txt", n))
            out.append(f"{stem}_{{0..{k - 1}}}.txt")
    return ", ".join(out)


@click.group("data")
def data():
    """The papers' data sets: download them into a local cache, verified by SHA-256.

    An audit without --data-dir reads the cache when it holds a complete, verified data
    set (else the embedded statsmodels data sets). The cache has the ../shared/data
    layout, so --data-dir accepts a cache folder or an offline copy of it."""


@data.command("fetch")
@click.argument("names", nargs=-1, metavar="[NAME...]")
@click.option("--mirror", default=None, metavar="URL",
              help="Download from a mirror with the cache's layout (URL/uci/kin8nm/data.txt, "
                   "...) instead of the upstream sources: an http(s) or ftp URL, a "
                   "file:// address or a local folder (default: $DPCLAIMS_DATA_MIRROR).")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_CACHE_HELP)
def fetch_command(names, mirror, cache):
    """Download data sets (kin8nm, naval-propulsion-plant, power-plant,
    protein-tertiary-structure, wine-quality-red, adult, wikipedia; uci = the five UCI
    sets; none given = all) and verify each file's SHA-256. Files already cached and
    verified are not downloaded again; a file whose SHA-256 differs is refused (exit 2)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from dpclaims.cli_endings import _Console, _earned
    from dpclaims.data.fetch import (
        DATASETS,
        cache_dir,
        check_cache_folder,
        expand_names,
        fetch,
    )

    selected = expand_names(names or None)  # an unknown name: exit 2, before any download
    root = check_cache_folder(cache, "--cache") if cache is not None else cache_dir()
    err = Console(stderr=True)
    total = sum(DATASETS[n].size for n in selected)
    folder_of = {ds.folder: name for name, ds in DATASETS.items()}
    state = {"downloaded": 0, "announced": set()}

    def announce(f):  # off a terminal: one line a data set, when its first download starts
        name = folder_of[f.path.rsplit("/", 1)[0]]
        if name not in state["announced"]:
            state["announced"].add(name)
            ds = DATASETS[name]
            err.print(f"downloading {escape(name)} ({len(ds.files)} files, "
                      f"{_size(ds.size)}) into {escape(str(root / ds.folder))}",
                      highlight=False)

    def run(bar=None):
        def progress(f, event):
            if event == "downloading":
                if bar is None:
                    announce(f)
                else:
                    bar[0].update(bar[1], description=f"downloading {f.path}")
                return
            state["downloaded"] += event == "downloaded"
            if bar is not None:
                bar[0].advance(bar[1], f.size)

        return fetch(selected, base_url=mirror, cache=root, progress=progress)

    if err.is_terminal:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                      console=err, transient=True) as bar:
            folders = run((bar, bar.add_task("checking the cache", total=total)))
    else:
        folders = run()
    table = Table(title=f"data cache {escape(str(root))}")
    for col in ("data set", "files", "size", "folder"):
        table.add_column(col, overflow="fold")  # a path is never cut
    for name, folder in folders.items():
        ds = DATASETS[name]
        table.add_row(escape(name), str(len(ds.files)), _size(ds.size), escape(str(folder)))
    _earned(0)
    out = _Console()
    out.print(table)
    out.print(f"{state['downloaded']} file(s) downloaded, every file's SHA-256 verified. "
              f"An audit without --data-dir now reads {escape(str(root))}.",
              highlight=False)


@data.command("list")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_CACHE_HELP)
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object with the cache folder and a list `datasets`.")
def list_command(cache, as_json):
    """Each registered data set: cached or not (every file checked by size and SHA-256),
    its files, licence, source and folder in the cache."""
    import json

    from dpclaims.cli_endings import _Console, _earned
    from dpclaims.data.fetch import DATASETS, cache_dir, check_cache_folder, mirror_url, status

    root = check_cache_folder(cache, "--cache") if cache is not None else cache_dir()
    states = status(None, root)
    mirror = mirror_url()
    rows = [{"name": name, "state": s.state, "cached": s.complete,
             "files": [f.path for f in DATASETS[name].files],
             "files_summary": _files_summary(DATASETS[name]),
             "bytes": DATASETS[name].size, "licence": DATASETS[name].licence,
             "source": DATASETS[name].source,
             "urls": DATASETS[name].urls if mirror is None
             else {f.path: f"{mirror}/{f.path}" for f in DATASETS[name].files},
             "description": DATASETS[name].description,
             "used_by": DATASETS[name].used_by, "folder": str(s.folder),
             "missing": list(s.missing), "corrupt": list(s.corrupt)}
            for name, s in states.items()]
    _earned(0)
    if as_json:
        click.echo(json.dumps({"cache": str(root), "mirror": mirror, "datasets": rows}))
        return
    from rich.markup import escape

    colour = {True: "green", False: "yellow"}
    out = _Console()
    out.print(f"data cache {escape(str(root))}", highlight=False)
    for r in rows:  # one block a data set: readable at any terminal width
        out.print(f"\n[bold]{escape(r['name'])}[/]: [{colour[r['cached']]}]"
                  f"{escape(r['state'])}[/]", highlight=False)
        for key, value in (("what", r["description"]), ("used by", r["used_by"]),
                           ("files", f"{len(r['files'])} ({_size(r['bytes'])}): "
                                     f"{r['files_summary']}"),
                           ("licence", r["licence"]), ("source", r["source"]),
                           ("folder", r["folder"])):
            out.print(f"  {key}: {escape(value)}", highlight=False, soft_wrap=True)
        bad = r["missing"] + r["corrupt"] if r["state"] != "not cached" else []
        if bad:
            out.print(f"  not verified: {escape(', '.join(bad))}", highlight=False,
                      soft_wrap=True)
    if mirror is not None:
        out.print(f"\ndownloads come from the mirror {escape(mirror)} ($DPCLAIMS_DATA_MIRROR)",
                  highlight=False)
    out.print("\n`dpclaims data fetch [NAME...]` downloads (none given: all); an audit "
              "without --data-dir reads the cache when a data set in it is complete.",
              highlight=False)
