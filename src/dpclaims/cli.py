"""Command line: ``dpclaims audit``, ``check``, ``check-variant`` and ``account`` (a thin
layer over the checks and :mod:`dpclaims.reports`).

Exit codes (the same for ``audit``, ``check`` and ``check-variant``;
:mod:`dpclaims.claims.headline`): 0 nothing refuted; 1 a claim is refuted (its
headline); 2 bad input: options, files, a claim or the user's own code (one line on
stderr naming it; an exception raised in the user's code names the file and line);
3 a claim was not checkable and none is refuted; 69 a worker lost mid-run: a worker
process that stopped answering within ``--worker-timeout`` or died, or the Dask cluster
of ``audit --scheduler`` that failed (one line; no report); 70 an internal error of dpclaims
(a bug: one line, the traceback with ``--debug``); 130 interrupted (Ctrl-C); 143
terminated (SIGTERM: ``kill``, ``timeout``, a CI cancelling the job). Interrupted or
terminated, a run removes its staging folder and its lock and writes no report.
``account`` exits 0, 2, 70, 130 or 143.

Output read by a program that stops early (``dpclaims check ... | head -1``): the rest
of the output is dropped quietly and the exit code is the one the run earned (its
report is complete by then).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import platform
import re
import sys
import time
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from dpclaims import __version__
from dpclaims.audits.registry import SCORES, described
from dpclaims.cli_endings import (
    Terminated,
    _Console,
    _earned,
    _flush_stdout,
    _sigterm_raises,
    _silence_stdout,
    _stdout_closed,
)

_COLOURS = {"holds": "green", "refuted": "red", "inconclusive": "yellow",
            "not-checkable": "white"}


class _Main(click.Group):
    """The command group, with the exit codes of the module docstring: every exception is
    turned into one line on stderr and its code, never a traceback (``--debug`` shows it)."""

    def invoke(self, ctx):
        from dpclaims.claims import (
            EXIT_BAD_INPUT,
            EXIT_CLUSTER_LOST,
            EXIT_INTERNAL,
            EXIT_INTERRUPTED,
            EXIT_TERMINATED,
        )
        from dpclaims.claims.core import InputError

        try:
            with _sigterm_raises():
                try:
                    return super().invoke(ctx)
                finally:
                    _flush_stdout()
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Terminated:
            click.echo("dpclaims: terminated (SIGTERM); no report was written.", err=True)
            raise click.exceptions.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            click.echo("dpclaims: interrupted; no report was written.", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except InputError as exc:
            _debug_traceback(ctx)
            click.echo(f"dpclaims: bad input: {_one_line(exc)}", err=True)
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
        except MemoryError:  # the sizes asked for (trials, examples, a domain's shape)
            _debug_traceback(ctx)
            click.echo("dpclaims: bad input: the run needs more memory than this machine "
                       "has (MemoryError); ask for less: fewer --n-trials or "
                       "--max-examples, a smaller record domain or budget", err=True)
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
        except SystemExit as exc:  # dpclaims' own sys.exit passes; the user's code's does not
            from dpclaims.execution.user_code import user_frame

            where = user_frame(exc)
            if where is None:
                raise
            _debug_traceback(ctx)
            click.echo(f"dpclaims: bad input: your code called sys.exit({exc.code!r}) at "
                       f"{where[0]}:{where[1]} (in {where[2]}); a mechanism, an algorithm or "
                       "a paper must not end the process", err=True)
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
        except Exception as exc:  # noqa: BLE001  (classified: the user's code or ours)
            from dpclaims.execution.cluster import ClusterLostError
            from dpclaims.execution.processes import WorkerLostError
            from dpclaims.execution.user_code import describe_user_error

            if _is_user_object_error(exc):  # a user's mechanism found wrong where it is used
                _debug_traceback(ctx)
                click.echo(f"dpclaims: bad input: {_one_line(exc)}", err=True)
                raise click.exceptions.Exit(EXIT_BAD_INPUT) from None

            earned = (ctx.obj or {}).get("earned")
            if earned is not None and _stdout_closed(exc):
                _silence_stdout()  # the reader of stdout left; the report is written
                raise click.exceptions.Exit(earned) from None
            if isinstance(exc, (ClusterLostError, WorkerLostError)):
                _debug_traceback(ctx)
                click.echo(f"dpclaims: {_one_line(exc)}", err=True)
                raise click.exceptions.Exit(EXIT_CLUSTER_LOST) from None

            _debug_traceback(ctx)
            where = describe_user_error(exc)
            if where is not None:
                click.echo(f"dpclaims: bad input: an exception in your code: {_one_line(where)}",
                           err=True)
                raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
            click.echo(f"dpclaims: internal error (a bug in dpclaims, please report it): "
                       f"{type(exc).__name__}: {_one_line(exc)}"
                       + ("" if _debug(ctx) else "; rerun with --debug for the traceback"),
                       err=True)
            raise click.exceptions.Exit(EXIT_INTERNAL) from None


def _is_user_object_error(exc: BaseException) -> bool:
    """Whether ``exc`` says that a user's mechanism or algorithm breaks the protocol
    (:class:`~dpclaims.audits.mechanism.InvalidMechanismError`), wherever dpclaims first
    touched the object: bad input, never an internal error."""
    mechanism = sys.modules.get("dpclaims.audits.mechanism")
    return mechanism is not None and isinstance(exc, mechanism.InvalidMechanismError)


@contextlib.contextmanager
def _quiet_dask_client_log():
    """Dask's client logger at CRITICAL while the command runs. Restored when it ends
    normally; not after an exception (a lost cluster): the client's reconnection,
    which goes on until the process ends, would log it again after the one line."""
    try:  # first: importing distributed sets this logger's level from Dask's config
        import distributed  # noqa: F401
    except ImportError:  # connect() says how to install it
        yield
        return
    log = logging.getLogger("distributed.client")
    level = log.level
    log.setLevel(logging.CRITICAL)
    yield
    log.setLevel(level)


def _debug(ctx) -> bool:
    return bool((ctx.obj or {}).get("debug"))


def _debug_traceback(ctx) -> None:
    if _debug(ctx):
        import traceback

        traceback.print_exc()


def _echo_quiet(quiet, folder) -> None:
    """The one stderr line counting what other libraries logged into the report folder's
    log (:mod:`dpclaims.cli_quiet`); nothing when they logged nothing."""
    line = quiet.line(folder)
    if line is not None:
        click.echo(line, err=True)


def _one_line(text) -> str:
    return " ".join(str(text).split())


WORKER_TIMEOUT_HELP = (
    "Seconds to wait for the worker processes while none of the blocks (or checks) they "
    "run comes back; then the run stops, exit 69 with one line naming it. Default: "
    "max(600, 20 x the seconds per output the audit's probe took x the block size).")


def _check_worker_timeout(seconds) -> None:
    if seconds is not None and not (0 < seconds < math.inf):
        raise click.BadParameter(f"must be a positive number of seconds, got {seconds}",
                                 param_hint="--worker-timeout")


def _worker_info(timeout, starts: list) -> dict:
    """run_info's record of the worker processes: how they started and why
    (:func:`dpclaims.execution.processes.starts_used`), and ``--worker-timeout``."""
    out = {"worker processes": starts} if starts else {}
    if timeout is not None:
        out["worker timeout"] = timeout
    return out


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpclaims")
@click.option("--debug", is_flag=True, help="Show the full traceback of an error.")
@click.pass_context
def main(ctx, debug):
    """Verify the privacy and accuracy claims of DP Bayesian inference papers.

    \b
    Exit codes (audit, check, check-variant):
      0   nothing refuted
      1   a claim is refuted
      2   bad input (options, files, a claim, an exception in your code)
      3   a claim was not checkable, none refuted
      69  a worker lost mid-run (a worker process silent for
          --worker-timeout, or dead; the Dask cluster of --scheduler)
      70  internal error of dpclaims (a bug; --debug shows the traceback)
      130 interrupted (Ctrl-C)
      143 terminated (SIGTERM: kill, timeout, a cancelled CI job)
    Interrupted or terminated, no report is written and --out is left as it was."""
    ctx.ensure_object(dict)["debug"] = debug


def _paper_help() -> str:
    from dpclaims import paper_ids

    return ("Which paper's claims to check: a registered paper's id (now: "
            f"{', '.join(paper_ids()) or 'none'}; `dpclaims papers` lists them), all of "
            "them in one report (all), or a paper that is not installed, as "
            "path/to/file.py:obj or module:obj.")


@main.command()
@click.option("--paper", default="dpsep", show_default=True, help=_paper_help())
@click.option("--budget", type=click.Choice(["quick", "standard", "full", "smoke"]),
              default="quick", show_default=True,
              help="Effort: quick takes minutes on 2 cores (DP-SEP about 2, all papers "
                   "about 6); standard and full take longer; smoke (under a minute) exists "
                   "for the project's tests.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Root seed: the same seed gives the same results.json.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, show_default="reports/audit-PAPER",
              help="Folder for results.json, report.md, report.html and figures. The "
                   "default folder is this command's own: a rerun replaces the report it "
                   "holds (of audit, for the same --paper); any other content is refused.")
@click.option("--data-dir", type=click.Path(path_type=Path), default=None,
              help="The papers' data sets (../shared/data layout). Without it: the cache "
                   "of `dpclaims data fetch` when it holds a verified data set, else the "
                   "embedded statsmodels data sets.")
@click.option("--workers", type=int, default=None,
              help="Processes for independent checks (default: 2, or 1 on a one-core "
                   "machine). results.json is the same whatever the number.")
@click.option("--worker-timeout", "worker_timeout", type=float, default=None,
              metavar="SECONDS",
              help=WORKER_TIMEOUT_HELP)
@click.option("--scheduler", metavar="ADDRESS", envvar="DPCLAIMS_SCHEDULER", default=None,
              help="Run the independent checks and their trial blocks on the Dask cluster "
                   "of this scheduler (tcp://HOST:8786; default $DPCLAIMS_SCHEDULER, else "
                   "local). results.json is the same as a local run's; --out must be on a "
                   "file system the workers share. Needs pip install 'dpclaims[dask]'.")
@click.option("--overwrite", is_flag=True,
              help="Replace the files of an earlier run in --out (otherwise a folder that "
                   "holds files is refused before any work).")
@click.option("--claim", "claims", multiple=True, metavar="PATTERN",
              help="Check only the claims whose id matches (shell-style: *, ?; with or "
                   "without the paper's prefix, e.g. prop1-* or 'dpsep/*table*'); may "
                   "repeat. The report lists the selection; a selected claim's verdicts "
                   "are the same as in a run of every claim.")
def audit(paper, budget, seed, out_dir, data_dir, workers, worker_timeout, scheduler,
          overwrite, claims):
    """Check a paper's claims and write a report with a verdict for each. Exit codes: see
    dpclaims --help (0 nothing refuted, 1 refuted, 3 not checkable)."""
    from dpclaims.claims import exit_code
    from dpclaims.reports.output import StagedOutput

    console = Console(stderr=True)
    if data_dir is not None and not Path(data_dir).is_dir():
        raise click.BadParameter(f"data directory not found: {data_dir}",
                                 param_hint="--data-dir")
    if seed < 0:
        raise click.BadParameter(f"seed must be >= 0, got {seed}", param_hint="--seed")
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    if workers < 1:
        raise click.BadParameter(f"workers must be >= 1, got {workers}",
                                 param_hint="--workers")
    _check_worker_timeout(worker_timeout)
    from dpclaims.data.fetch import resolve_data_dir

    origin = "--data-dir" if data_dir is not None else "the data cache"
    data_dir, data_source = resolve_data_dir(data_dir)  # else the verified cache, else None
    from dpclaims.claims.registry import resolve, run_papers

    # an unknown paper or the named plugin broken: exit 2, before any work; another
    # broken plugin is skipped (with --paper all: one line each)
    papers = resolve(paper, lambda line: click.echo(f"dpclaims: {line}", err=True))
    for p in papers:
        p.budget(budget)
    from dpclaims.claims.registry import select_claims

    select_claims(papers, claims)  # a pattern that selects nothing: exit 2, before any work
    label = paper if ":" not in paper else ",".join(p.id for p in papers)
    owner, out_dir, own = _default_out("audit", label, out_dir)
    staged = StagedOutput(out_dir, overwrite, owner, own)  # refuses another run's folder
    t0 = time.perf_counter()
    from dpclaims.execution.processes import reset_starts, starts_used
    from dpclaims.execution.processes import worker_timeout as timeout_set

    reset_starts()
    with staged as staging, contextlib.ExitStack() as cluster:
        from dpclaims.cli_quiet import third_party_to_log
        from dpclaims.reports.render import write_report

        cluster.enter_context(timeout_set(worker_timeout))
        quiet = cluster.enter_context(third_party_to_log(
            staging, enabled=not _debug(click.get_current_context())))
        client = cluster_info = None
        if scheduler is not None:  # no scheduler, or an unfit worker: one line, exit 2
            from dpclaims.execution.cluster import check_workers, connect

            # a lost scheduler is reported in one line, not also in Dask's log; and while
            # the client tries to reconnect to it, its backoff draws from the global
            # `random` module (distributed.comm.core.connect), which Hypothesis, comparing
            # that module's state around each draw of a property test running here,
            # takes for a strategy using it (ours do not)
            if not _debug(click.get_current_context()):
                cluster.enter_context(_quiet_dask_client_log())
            cluster.enter_context(warnings.catch_warnings())
            warnings.filterwarnings("ignore", message="Do not use the `random` module "
                                    "inside strategies")
            client = cluster.enter_context(connect(scheduler))
            cluster_info = check_workers(client, staging)
        # said before the papers run (and after every check of the input): a cache filled
        # by an earlier `data fetch` changes what they read, and so verdicts
        click.echo(f"dpclaims: data: {data_source}", err=True)
        from dpclaims.claims.registry import data_line

        for p in papers:  # which data each paper reads, and from where
            click.echo(f"dpclaims: data: {data_line(p, data_dir, origin)}", err=True)
        with _progress(console, "starting",
                       None if claims else _plan(f"{paper}/{budget}")) as show:
            def tick(name):
                show(f"{label}/{budget}: {name}", name)

            try:
                verdicts, sections, meta, timings = run_papers(
                    papers, budget, seed, staging, data_dir, tick, workers, client,
                    selection=claims)
            except Exception as exc:
                from dpclaims.execution.cluster import ClusterLostError, lost_cluster

                what = None if client is None else lost_cluster(client, exc)
                if what is None:
                    raise
                raise ClusterLostError(
                    f"the Dask cluster at {scheduler} failed mid-run ({what}); no report "
                    "was written. The same --seed gives the same results.json: rerun on a "
                    "working cluster, or without --scheduler") from exc
            show("writing report")
        run_info = {
            "command": " ".join(["dpclaims"] + sys.argv[1:]),
            "dpclaims": __version__,
            "python": platform.python_version(),
            "workers": workers,
            **_worker_info(worker_timeout, starts_used()),
            **({"scheduler": cluster_info} if cluster_info else {}),
            "data": data_source,
            "seconds per check": timings,
            "total seconds": round(time.perf_counter() - t0, 1),
        }
        paths = write_report(staging, title=f"dpclaims audit: {label}", meta=meta,
                             verdicts=verdicts, sections=sections, run_info=run_info,
                             captions={k: v for p in papers for k, v in p.captions.items()},
                             seed=seed)
    paths = {k: staged.out / Path(v).name for k, v in paths.items()}
    _earned(exit_code(verdicts))  # a closed stdout from here on ends with this code
    _echo_quiet(quiet, staged.out)
    _print_summary(f"{label}: claims and verdicts (seed {seed}, budget {budget})", verdicts,
                   paths)
    sys.exit(exit_code(verdicts))


EXPECTED_SECONDS = "expected_seconds.json"


def _plan(key: str):
    """The recorded checks of ``key`` ("paper/budget"), in order, with their measured
    seconds: ``[(name, seconds), ...]``, or None when none is recorded. The table is
    written by ``benchmarks/cli_timings.py --record`` from a measured run."""
    import json
    from importlib import resources

    try:
        table = json.loads(resources.files("dpclaims").joinpath(EXPECTED_SECONDS).read_text())
    except FileNotFoundError:
        return None
    entry = table.get("plans", {}).get(key)
    return [(name, float(sec)) for name, sec in entry] if entry else None


class _Eta:
    """The one progress vocabulary: "[k/N] description (elapsed)".

    With a recorded plan (:func:`_plan`), N is the number of checks in it and a step
    whose name is in the plan counts one of them, in whatever order the checks report
    (the checks run in parallel processes, and a paper that runs beside the others
    reports first); any other step ("starting", "writing report", a check the plan
    does not know) shows the count so far. Without a plan: "[k] description (elapsed)",
    every step numbered. No estimate of the time left is shown: an estimate from the
    recorded seconds was seen to be wrong by a factor of 40 ("about 11 s left" 450 s
    before the end).
    """

    def __init__(self, plan):
        from collections import Counter

        self.plan = plan or []
        self.left = Counter(name for name, _ in self.plan)
        self.t0 = time.perf_counter()
        self.done = 0

    def describe(self, description: str, name: str | None = None) -> str:
        elapsed = _duration(time.perf_counter() - self.t0)
        name = description if name is None else name
        if not self.plan:
            self.done += 1
            return f"[{self.done}] {description} ({elapsed} elapsed)"
        if self.left[name] > 0:
            self.left[name] -= 1
            self.done += 1
        return f"[{self.done}/{len(self.plan)}] {description} ({elapsed} elapsed)"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@contextlib.contextmanager
def _progress(console: Console, first: str, plan=None):
    """``show(description, name=None)`` for long work. With a recorded ``plan`` (see
    :func:`_plan`) each step shows "[k/N]" and the time elapsed (:class:`_Eta`);
    ``name`` is the step's key in the plan when ``description`` carries a prefix.

    On a terminal: a live spinner line. On anything else (a log, CI): one plain line per
    step with the same text, and no spinner frames."""
    eta = _Eta(plan)
    if console.is_terminal:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                      console=console, transient=False) as progress:
            task = progress.add_task(first, total=None)
            yield lambda d, name=None: progress.update(task, description=eta.describe(d, name))
        return

    def show(description, name=None):
        print(eta.describe(description, name), file=console.file, flush=True)

    show(first)
    yield show



@main.command("papers")
def papers_command():
    """List the registered papers (entry point group dpclaims.papers): id, claims, title."""
    from rich.markup import escape

    from dpclaims.claims.registry import ENTRY_POINT_GROUP, load_registry

    registry = load_registry()
    table = Table(title=f"registered papers (entry point group {ENTRY_POINT_GROUP})")
    for col in ("id", "claims", "title", "checks"):
        table.add_column(col, no_wrap=col == "id")
    for p in registry.papers:
        table.add_row(escape(p.id), str(len(p.claims)), escape(p.title), escape(p.summary))
    for pid, why in registry.broken.items():
        table.add_row(escape(pid), "-", "[red]does not load[/]", escape(why))
    _earned(0)
    _Console().print(table)

#: The narrowest terminal that gets `account`'s boxed table; narrower, or not a terminal
#: (a log, a pipe, CI), gets one plain line per accountant.
TABLE_MIN_WIDTH = 120

def claim_lines(claims: list[dict], width: int | None = None) -> list[str]:
    """The terminal's claim lines: each claim's headline verdict, its id and its plain
    sentence (:func:`dpclaims.claims.headline.claim_sentence`).

    ``width`` None (a log, a pipe, CI): one line per claim, of any length. A width (a
    terminal): each claim wrapped at spaces to ``width`` columns, continued with an
    indent; a word (a number) is never broken, so a word longer than the line overflows
    it rather than being cut.

    Raises
    ------
    ValueError
        ``width`` below 40 columns.
    """
    import textwrap

    from dpclaims.claims.headline import claim_sentence

    if width is not None and width < 40:
        raise ValueError(f"width must be at least 40 columns, got {width!r}")
    out = []
    for c in claims:
        line = f"{c['verdict']:<13} {c['id']}: {claim_sentence(c)}"
        if width is None:
            out.append(line)
        else:
            out += textwrap.wrap(line, width=width, subsequent_indent=" " * 14,
                                 break_long_words=False, break_on_hyphens=False)
    return out


def _print_summary(title, verdicts, paths, sentences: bool = False):
    """The claims and their headline verdicts on stdout, then the report's paths.

    One claim per line (:func:`claim_lines`): verdict, id and the plain sentence; on a
    terminal wrapped at its width, never cut inside a word; anywhere else one line per
    claim of any length. Then a legend of the verdict words and readings
    (:data:`dpclaims.claims.headline.LEGEND`) and the summary line (claims per verdict);
    with ``sentences`` each claim's full headline sentence as well."""
    import textwrap

    from rich.markup import escape

    from dpclaims.claims import claims_summary
    from dpclaims.claims.headline import LEGEND
    from dpclaims.reports.render import summarise, summary_line

    claims = claims_summary(verdicts)
    line = summary_line(summarise(claims), verdicts, {})
    out = _Console()
    if out.is_terminal:
        width = max(40, out.width)
        out.print(escape(title), highlight=False, soft_wrap=True)
        for text in claim_lines(claims, width):
            word = text.split(" ", 1)[0]
            styled = (f"[{_COLOURS[word]}]{word}[/]{escape(text[len(word):])}"
                      if word in _COLOURS else escape(text))
            out.print(styled, highlight=False, soft_wrap=True)
        for text in [x for t in (LEGEND, line) for x in textwrap.wrap(
                t, width, break_long_words=False, break_on_hyphens=False)]:
            out.print(escape(text), highlight=False, soft_wrap=True)
    else:
        click.echo(title)
        for text in claim_lines(claims):
            click.echo(text)
        click.echo(LEGEND)
        click.echo(line)
    if sentences:
        for c in claims:
            click.echo(f"{c['id']}: {c['headline']}")
    for kind, path in paths.items():
        click.echo(f"{kind}: {path}")


@main.command()
@click.option("--sigma", type=float, default=None,
              help="Noise multiplier (noise std / L2 sensitivity under --relation).")
@click.option("--target-epsilon", type=float, default=None,
              help="Calibrate: the smallest sigma meeting this epsilon (instead of --sigma).")
@click.option("--sampling", type=click.Choice(["poisson", "without-replacement", "shuffle",
                                               "fixed-order", "none"]), required=True,
              help="The sampling the algorithm really performs.")
@click.option("--dataset-size", type=int, default=None, help="N, the number of records.")
@click.option("--batch-size", type=int, default=None, help="B, the batch size.")
@click.option("--sampling-rate", type=float, default=None,
              help="q = B / N (instead of B); for Poisson sampling --dataset-size may then "
                   "be left out.")
@click.option("--steps", type=int, default=None, help="Number of noisy steps.")
@click.option("--epochs", type=float, default=None,
              help="Number of passes (instead of steps); for poisson / without-replacement "
                   "ceil(epochs * N / B) steps (rounded up and said so).")
@click.option("--delta", type=float, required=True, help="Target delta in [0, 1).")
@click.option("--relation", type=click.Choice(["replace-one", "add-remove"]),
              default="add-remove", show_default=True,
              help="Neighbouring relation (add-remove: DP-SGD's and dp_accounting's default).")
@click.option("--accountant", type=click.Choice(["dp_accounting-rdp", "autodp-rdp",
                                                 "dp_accounting-pld"]),
              default="dp_accounting-rdp", show_default=True,
              help="Accountant used to calibrate with --target-epsilon.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object with a list `rows` instead of a table.")
@click.option("--no-cache", is_flag=True,
              help="Recompute even when the same question was answered before (the answer "
                   "is cached per source of the code that computes it and per version of "
                   "dp_accounting, autodp, scipy and numpy).")
@click.option("--all-accountants", is_flag=True,
              help="For full-batch (none) and fixed-order events with --sigma, whose exact "
                   "epsilon has a closed form printed alone by default: every accountant "
                   "side by side (--target-epsilon always runs every accountant).")
def account(sigma, target_epsilon, sampling, dataset_size, batch_size, sampling_rate, steps,
            epochs, delta, relation, accountant, as_json, no_cache, all_accountants):
    """Epsilon of an iterative Gaussian mechanism by every accountant, side by side, and
    the certified bracket [lower, upper] they give on the true epsilon.

    A full-batch (none) or fixed-order event given --sigma is a composition of plain
    Gaussians, whose exact epsilon has a closed form (Balle & Wang 2018): it is printed
    alone, in under a second, unless --all-accountants asks for every accountant's bound
    on it."""
    import json

    question = {"sigma": sigma, "target_epsilon": target_epsilon, "sampling": sampling,
                "dataset_size": dataset_size, "batch_size": batch_size,
                "sampling_rate": sampling_rate, "steps": steps, "epochs": epochs,
                "delta": delta, "relation": relation, "accountant": accountant,
                "all_accountants": all_accountants}
    payload = None if no_cache else _account_cache(question)
    if payload is None:
        payload = _account_payload(**question)
        _account_cache(question, payload)
    _earned(0)
    if as_json:
        click.echo(json.dumps({k: v for k, v in payload.items() if not k.startswith("_")}))
        return
    _account_print(payload)


def _account_cache(question: dict, payload: dict | None = None) -> dict | None:
    """The cached answer to ``question`` (None when there is none), or store ``payload``.

    The cache is a folder of JSON files, one per question and fingerprint
    (:func:`dpclaims.fingerprint` of the sources that compute an answer and of
    the versions of dp_accounting, autodp, scipy and numpy, read without importing
    them): ``$DPCLAIMS_ACCOUNT_CACHE``, else ``$XDG_CACHE_HOME/dpclaims/account``,
    else ``~/.cache/dpclaims/account``. An unreadable or unwritable cache is ignored (the
    answer is computed). A cached answer needs no import of the accountants: under a
    second where importing dp_accounting alone takes 2.6-4 s.
    """
    import hashlib
    import json

    from dpclaims import fingerprint

    salt = fingerprint(("cli.py", "analysis/accounting.py", "analysis/gaussian_dp.py",
                        "analysis/sampling.py", "analysis/validation.py"),
                       ("dp-accounting", "autodp", "scipy", "numpy"))
    key = hashlib.sha256(json.dumps([question, salt], sort_keys=True).encode()).hexdigest()
    root = os.environ.get("DPCLAIMS_ACCOUNT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "dpclaims", "account")
    path = Path(root) / f"{key}.json"
    try:
        if payload is None:
            return json.loads(path.read_text()) if path.is_file() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(payload))
        tmp.replace(path)  # atomic: a reader never sees half a file
    except (OSError, ValueError):
        return None
    return None


def _account_batch(dataset_size, batch_size, sampling_rate):
    """The batch size ``account`` uses: --batch-size, or --sampling-rate x N.

    Parameters
    ----------
    dataset_size : int or None
        --dataset-size.
    batch_size : int or None
        --batch-size.
    sampling_rate : float or None
        --sampling-rate.

    Returns
    -------
    int, float or None
        The batch size (a float when from a rate: the plan checks it).

    Raises
    ------
    click.UsageError
        On both options given, a rate without N, or a rate outside (0, 1].
    """
    if batch_size is not None and sampling_rate is not None:
        raise click.UsageError("give at most one of --batch-size and --sampling-rate")
    if sampling_rate is None:
        return batch_size
    if dataset_size is None:
        raise click.UsageError("--sampling-rate needs --dataset-size")
    if not 0 < sampling_rate <= 1:
        raise click.UsageError(f"--sampling-rate must lie in (0, 1], got {sampling_rate}")
    return sampling_rate * dataset_size


def _account_rate(batch_size, sampling_rate) -> float:
    """--sampling-rate for Poisson sampling without --dataset-size (q itself).

    Raises click.UsageError on --batch-size given too or q outside (0, 1]."""
    if batch_size is not None:
        raise click.UsageError("give at most one of --batch-size and --sampling-rate")
    if not (math.isfinite(sampling_rate) and 0 < sampling_rate <= 1):
        raise click.UsageError(f"--sampling-rate must lie in (0, 1], got {sampling_rate}")
    return sampling_rate


def _account_rate_steps(rate, steps, epochs, notes: list):
    """--epochs at Poisson rate q as ceil(epochs / q) steps (a note when rounded up);
    (steps, None). Raises click.UsageError on epochs not finite and > 0."""
    if epochs is None or steps is not None:
        return steps, epochs
    if not (math.isfinite(epochs) and epochs > 0):
        raise click.UsageError(f"--epochs must be a finite number > 0, got {epochs}")
    exact = epochs / rate
    n = math.ceil(exact - 1e-9)
    if n != exact:
        notes.append(f"{epochs:g} epochs at rate q = {rate:g} is {exact:.6g} steps: rounded "
                     f"up to {n}")
    return n, None


def _account_steps(sampling, dataset_size, batch, steps, epochs, notes: list):
    """--steps and --epochs as the sampling plan takes them.

    For Poisson and without-replacement sampling, epochs become ceil(epochs * N / B)
    steps (a note says so when rounded); for the others, epochs must be whole.

    Parameters
    ----------
    sampling : str
        --sampling.
    dataset_size, batch
        N and B (None when not given).
    steps : int or None
        --steps.
    epochs : float or None
        --epochs.
    notes : list of str
        Notes printed with the result; appended to.

    Returns
    -------
    tuple
        (steps, epochs) for :class:`~dpclaims.analysis.sampling.Sampling`.

    Raises
    ------
    click.UsageError
        On epochs not finite and > 0, or not whole where they must be.
    """
    from dpclaims.analysis.validation import steps_for_epochs

    if epochs is not None and not (math.isfinite(epochs) and epochs > 0):
        raise click.UsageError(f"--epochs must be a finite number > 0, got {epochs}")
    if (epochs is not None and steps is None and sampling in ("poisson", "without-replacement")
            and dataset_size and batch):
        try:
            steps, note = steps_for_epochs(epochs, dataset_size, batch)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc
        notes += [note] if note else []
        epochs = None
    elif epochs is not None:
        if epochs != int(epochs):
            raise click.UsageError(f"--epochs must be a whole number for {sampling}, "
                                   f"got {epochs}")
        epochs = int(epochs)
    return steps, epochs


def _account_row_kind(row) -> str:
    """What an accountant's row is, in words, for ``account``'s table and JSON.

    Parameters
    ----------
    row : AccountantRow
        One row of an accounting result.

    Returns
    -------
    str
        Exact, lower bound, not a bound, classic / tight / plain upper bound.
    """
    from dpclaims.analysis.accounting import TIGHT_ACCOUNTANTS

    if row.bound == "exact":
        return "exact (certified bracket)"
    if row.bound == "lower":
        return "lower bound"
    if row.bound == "model":
        return "not a bound here (see note)"
    if row.name == "moments-accountant":
        return "classic upper bound (looser conversion)"
    if row.name in TIGHT_ACCOUNTANTS:
        return "tight upper bound"
    return "upper bound"


def _account_payload(sigma, target_epsilon, sampling, dataset_size, batch_size, sampling_rate,
                     steps, epochs, delta, relation, accountant, all_accountants) -> dict:
    """What ``account`` prints (its --json object, plus "_"-prefixed fields for the table)."""
    from dpclaims.analysis.sampling import Sampling

    if (sigma is None) == (target_epsilon is None):
        raise click.UsageError("give exactly one of --sigma and --target-epsilon")
    notes = []
    rate = None
    if sampling == "poisson" and sampling_rate is not None and dataset_size is None:
        # Poisson sampling is accounted from q alone: no dataset size needed
        rate, batch = _account_rate(batch_size, sampling_rate), None
        steps, epochs = _account_rate_steps(rate, steps, epochs, notes)
    else:
        batch = _account_batch(dataset_size, batch_size, sampling_rate)
        steps, epochs = _account_steps(sampling, dataset_size, batch, steps, epochs, notes)
    try:
        plan = Sampling(sampling, dataset_size=dataset_size, batch_size=batch, steps=steps,
                        epochs=epochs, rate=rate)
        if target_epsilon is None and not all_accountants and sampling in EXACT_SAMPLINGS:
            return _account_exact_payload(sigma, plan, delta, relation, notes)
        from dpclaims.analysis.accounting import account as account_rows
        from dpclaims.analysis.accounting import calibrate_noise_multiplier

        calibrated = None
        if target_epsilon is None:
            result = account_rows(sigma, plan, delta, relation)
        else:  # a root search over sigma, each step an accounting: seconds to minutes
            with _progress(Console(stderr=True),
                           f"calibrating sigma to epsilon = {target_epsilon:g} with "
                           f"{accountant} ({plan.num_steps} steps)") as show:
                calibrated = calibrate_noise_multiplier(target_epsilon, delta, plan, relation,
                                                        accountant)
                sigma = calibrated
                show(f"sigma = {sigma:.6g}; accounting it with every accountant")
                result = account_rows(sigma, plan, delta, relation)
        result = _account_refined_lower_end(result)
    except (ValueError, TypeError) as exc:
        raise click.UsageError(str(exc)) from exc
    rows = [{"accountant": r.name, "relation": relation, "kind": _account_row_kind(r),
             "bound": r.bound,
             "epsilon": None if r.epsilon is None or not math.isfinite(r.epsilon) else r.epsilon,
             "note": r.note} for r in result.rows]
    lo, hi = result.lower_bound, result.upper_bound
    bracket = {"lower": None if lo is None else {"accountant": lo[0], "epsilon": lo[1]},
               "upper": None if hi is None else {"accountant": hi[0], "epsilon": hi[1]}}
    advice = ("tight accountants disagree: refine the PLD discretisation "
              "(analysis.accounting.account(..., pld_initial_interval=...)) and report the "
              "larger value until they agree")
    return {"noise_multiplier": sigma, "calibrated_by": accountant
            if calibrated is not None else None,
            "target_epsilon": target_epsilon, "delta": delta,
            "relation": relation, "sampling": sampling, "steps":
            plan.num_steps, "notes": notes, "note": result.note,
            "disagrees": result.disagrees,
            "tight_disagreement": result.tight_disagreement,
            "tight_disagrees": result.tight_disagrees,
            "advice": advice if result.tight_disagrees else None,
            "certified_bracket": bracket, "rows": rows, "_rtol": result.rtol}


#: ``account`` refines the optimistic PLD (the bracket's lower end) until it exceeds this
#: fraction of the pessimistic PLD (the upper end), or cannot be refined further.
LOWER_END_FRACTION = 0.95


def _account_refined_lower_end(result):
    """``result`` with its optimistic PLD row refined (finer discretisation intervals,
    :func:`~dpclaims.analysis.accounting.refine_lower_bound`) until it exceeds
    :data:`LOWER_END_FRACTION` of the pessimistic PLD: at the pessimistic row's interval
    the lower bound is loose by up to steps x interval (0 for DP-SGD's 14,063 steps at
    0.0005), a useless lower end of the certified bracket. Every value on the way is a
    certified lower bound; the row's note says where and why the refinement stopped."""
    from dpclaims.analysis.accounting import refine_lower_bound

    upper = next((r.epsilon for r in result.rows if r.name == "dp_accounting-pld"
                  and r.epsilon is not None and math.isfinite(r.epsilon)), None)
    if upper is None or upper <= 0:
        return result
    with _progress(Console(stderr=True), "refining the certified lower end (optimistic "
                   "PLD at finer intervals)"):
        return refine_lower_bound(result, LOWER_END_FRACTION * upper)


#: Samplings whose event is a composition of plain Gaussians, so that the exact epsilon
#: has a closed form (Balle & Wang 2018): ``account`` answers them without importing an
#: accountant unless --all-accountants asks for every accountant's row.
EXACT_SAMPLINGS = ("none", "fixed-order")


def _account_exact_payload(sigma, plan, delta, relation, notes) -> dict:
    """``account``'s payload for an event with a closed form (:data:`EXACT_SAMPLINGS`):
    the exact epsilon of the one Gaussian the composition equals, by
    :func:`dpclaims.analysis.gaussian_dp.gaussian_epsilon_bracket_exact`, its bracket
    both ends of the certified one; no accountant is imported (under a second in all)."""
    from dpclaims.analysis.gaussian_dp import (
        composed_multiplier,
        exact_gaussian_note,
        gaussian_epsilon_bracket_exact,
    )

    # both raise ValueError naming a bad sigma or delta (the caller makes it exit 2)
    effective = composed_multiplier(sigma, plan.passes)
    eps, (lo, hi) = gaussian_epsilon_bracket_exact(effective, delta)
    row = {"accountant": "analytic-gaussian", "relation": relation,
           "kind": "exact (certified bracket)", "bound": "exact", "epsilon": eps,
           "note": exact_gaussian_note(effective) + " Every other accountant gives a bound "
                   "on this value (--all-accountants prints them side by side)."}
    return {"noise_multiplier": sigma, "calibrated_by": None, "target_epsilon": None,
            "delta": delta, "relation": relation, "sampling": plan.kind,
            "steps": plan.num_steps, "notes": notes,
            "note": plan.accounting_note(sigma, relation), "disagrees": False,
            "tight_disagreement": None, "tight_disagrees": False, "advice": None,
            "certified_bracket": {"lower": {"accountant": "analytic-gaussian", "epsilon": lo},
                                  "upper": {"accountant": "analytic-gaussian", "epsilon": hi}},
            "rows": [row], "_rtol": 0.05}


def _account_print(p: dict) -> None:
    """``account``'s table from its payload (:func:`_account_payload`). Computed text is
    escaped: rich would take "[no lower bound, ...]" for markup and print nothing."""
    from rich.markup import escape

    out = _Console(highlight=False, soft_wrap=True)  # a log line is never cut
    for n in p["notes"]:
        out.print(f"[yellow]{escape(n)}[/]")
    sigma = p["noise_multiplier"]
    if p["calibrated_by"] is not None:
        out.print(escape(f"sigma = {sigma:.6g} meets epsilon = {p['target_epsilon']:g} by "
                         f"{p['calibrated_by']}"))
    title = (f"sigma {sigma:.6g}, {p['sampling']}, {p['relation']}, delta {p['delta']:g}, "
             f"{p['steps']} steps")
    if out.is_terminal and out.width >= TABLE_MIN_WIDTH:
        table = Table(title=escape(title))
        for col in ("accountant", "relation", "kind", "epsilon", "note"):
            table.add_column(col)
        for r in p["rows"]:
            eps = "unsupported" if r["epsilon"] is None else f"{r['epsilon']:.6g}"
            table.add_row(*(escape(str(x)) for x in (r["accountant"], r["relation"],
                                                     r["kind"], eps, r["note"])))
        out.print(table)
    else:  # a log, a pipe, a narrow terminal: one line per accountant, never squeezed
        click.echo(title)
        for r in p["rows"]:
            eps = "unsupported" if r["epsilon"] is None else f"{r['epsilon']:.6g}"
            click.echo(f"{r['accountant']}: epsilon {eps} ({r['kind']}, {r['relation']}). "
                       f"{r['note']}")
    lo, hi = p["certified_bracket"]["lower"], p["certified_bracket"]["upper"]
    out.print(escape("certified bracket on the true epsilon: ["
                     + ("no lower bound" if lo is None else
                        f"{lo['epsilon']:.6g} ({lo['accountant']})") + ", "
                     + ("no upper bound" if hi is None else
                        f"{hi['epsilon']:.6g} ({hi['accountant']})") + "]"))
    out.print(escape(p["note"]))
    if p["tight_disagrees"]:
        out.print(f"[yellow]{escape(p['advice'])} (they differ by "
                  f"{p['tight_disagreement']:.1%} > {p['_rtol']:.0%})[/]")


@main.command("check-variant", epilog="""\b
Exit codes:
  0   every claim the variant makes was checked and none is refuted
  1   a claim is refuted (a certificate contradicts it)
  2   bad input: not a mechanism, a missing file or module, an exception in
      your code (its file and line named), a release of the wrong or a
      changing shape, with NaN, or that does not follow its rng; data outside
      the declared domain; bad options
  3   nothing was checked for at least one claim (not-checkable: e.g. no data
      and no record domain), and none is refuted
  69  a worker lost: a worker process (--workers 2 or more) silent for
      --worker-timeout seconds, or dead (one line naming both)
  70  internal error of dpclaims (--debug shows the traceback)
  130 interrupted (Ctrl-C); 143 terminated (SIGTERM)""")
@click.argument("spec", metavar="FILE.py:OBJECT | package.module:OBJECT")
@click.option("--n-trials", type=int, default=200_000, show_default=True,
              help="Audit trials per dataset of the selected neighbouring pair.")
@click.option("--max-examples", type=int, default=300, show_default=True,
              help="Hypothesis examples for the property test of the sensitivity.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance of the audit's certificate.")
@click.option("--score", type=str, default=None,
              help=f"Attack score (a variant's own `score` attribute takes precedence): "
                   f"{described(SCORES)}.")
@click.option("--selection-trials", type=int, default=None,
              help="Pilot trials per dataset and candidate pair for the pair selection "
                   "(an algorithm: pilot runs per dataset and candidate dataset of the "
                   "whole-run dataset search) (default max(2000, n-trials / 10)).")
@click.option("--one-run", "one_run", type=int, default=None, metavar="CANARIES",
              help="An algorithm: a one-run audit with CANARIES Dirac gradient canaries "
                   "(each included with probability 1/2; Steinke, Nasr & Jagielski 2023) "
                   "instead of the whole-run audit; not-checkable when the algorithm does "
                   "not take them (docs/guide/one-run.md).")
@click.option("--one-run-runs", "one_run_runs", type=int, default=1, show_default=True,
              help="With --one-run: independent runs whose canaries are pooled.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Root seed: the same seed gives the same results.json.")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Processes for the audit's trial blocks (results do not depend on it).")
@click.option("--worker-timeout", "worker_timeout", type=float, default=None,
              metavar="SECONDS", help=WORKER_TIMEOUT_HELP)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, show_default="reports/check-variant-FILE-OBJECT",
              help="Folder for results.json, report.md and report.html. The default "
                   "folder (FILE: the file's stem or the module's last part) is this "
                   "command's own: a rerun replaces the report it holds; any other content "
                   "is refused.")
@click.option("--overwrite", is_flag=True,
              help="Replace the files of an earlier run in --out.")
def check_variant(spec, n_trials, max_examples, alpha, score, selection_trials, one_run,
                  one_run_runs, seed, workers, worker_timeout, out_dir, overwrite):
    """Check a mechanism (or a factory returning one): property test of its sensitivity,
    accounting of its dp_event, empirical audit on a searched neighbouring pair. An
    algorithm (`run` instead of `release`; dpclaims.audits.whole_run) gets a whole-run
    audit with a canary instead, --n-trials whole runs per dataset."""
    budget = _budget(seed, n_trials=n_trials, max_examples=max_examples, alpha=alpha,
                     workers=workers, selection_trials=selection_trials, score=score,
                     **({} if one_run is None else {"one_run": one_run,
                                                     "one_run_runs": one_run_runs}))
    _check_worker_timeout(worker_timeout)
    from dpclaims.execution.processes import reset_starts, starts_used
    from dpclaims.execution.processes import worker_timeout as timeout_set

    reset_starts()
    extra = {"workers": workers}

    def work(tick):
        from dpclaims.audits.capabilities import has_run
        from dpclaims.claims import InputError
        from dpclaims.claims.checks.variant import check_variant, load_variant

        mech = load_variant(spec)
        if one_run is not None and not has_run(mech):
            raise InputError("--one-run audits an algorithm (an object with `run`); "
                             f"{mech.name!r} is a mechanism")
        with timeout_set(worker_timeout):
            verdicts, sections, meta = check_variant(mech, budget, seed, tick)
        meta["variant"] = spec
        extra.update(_worker_info(worker_timeout, starts_used()))
        return f"check-variant: {mech.name}", mech.name, verdicts, sections, meta

    _run_check(work, seed, _default_out("check-variant", _variant_name(spec), out_dir),
               overwrite, extra)


def _budget(seed, **kwargs):
    """The VariantBudget of a check command; bad options are usage errors (exit 2)."""
    from dpclaims.claims.budgets import VariantBudget

    if seed < 0:
        raise click.BadParameter(f"seed must be >= 0, got {seed}", param_hint="--seed")
    try:
        return VariantBudget(**kwargs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def _slug(text: str) -> str:
    """``text`` as one part of a folder name: letters, digits, ``.``, ``_``, ``-``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return slug or "unnamed"


def _variant_name(spec: str) -> str:
    """The name in check-variant's default folder: ``examples/variants.py:correct`` ->
    ``variants-correct``, ``dpclaims.mechanisms:svt_alg4`` -> ``mechanisms-svt_alg4``."""
    where, _, obj = spec.rpartition(":")
    if not where:
        where, obj = spec, ""
    stem = Path(where).stem if where.endswith(".py") else where.rsplit(".", 1)[-1]
    return "-".join(part for part in (stem, obj) if part)


def _default_out(command: str, name: str, out_dir):
    """``(owner, out_dir, replace_own)`` of a run: without --out, the command's own folder
    ``reports/<command>-<name>``, where a report of the same command and name is replaced
    (another command's folder, or any other content, is refused); with --out, the folder
    given, replaced only with --overwrite."""
    owner = {"command": command, "name": _slug(name)}
    if out_dir is None:
        return owner, Path("reports") / f"{command}-{owner['name']}", True
    return owner, Path(out_dir), False


def _run_check(work, seed, out, overwrite, run_extra):
    """Run ``work(tick) -> (title, name, verdicts, sections, meta)`` with a progress line,
    write the report into a staged folder moved to the output folder on success, print the
    headline table and exit with the headlines' code. ``out`` is :func:`_default_out`'s
    answer."""
    from dpclaims.claims import exit_code
    from dpclaims.reports.output import StagedOutput

    owner, out_dir, own = out
    staged = StagedOutput(out_dir, overwrite, owner, own)  # refuses another run's folder
    t0 = time.perf_counter()
    console = Console(stderr=True)
    with staged as staging:
        from dpclaims.cli_quiet import third_party_to_log

        with third_party_to_log(staging, not _debug(click.get_current_context())) as quiet, \
                _progress(console, "loading") as show:
            title, name, verdicts, sections, meta = work(show)
            show("writing report")
        from dpclaims.reports.render import write_report

        run_info = {"command": " ".join(["dpclaims"] + sys.argv[1:]), "dpclaims": __version__,
                    "python": platform.python_version(), **run_extra,
                    "total seconds": round(time.perf_counter() - t0, 1)}
        paths = write_report(staging, title=f"dpclaims {title}", meta=meta,
                             verdicts=verdicts, sections=sections, run_info=run_info,
                             seed=seed)
    paths = {k: staged.out / Path(v).name for k, v in paths.items()}
    _earned(exit_code(verdicts))  # a closed stdout from here on ends with this code
    _echo_quiet(quiet, staged.out)
    _print_summary(f"{name}: claims and verdicts (seed {seed})", verdicts, paths,
                   sentences=True)
    sys.exit(exit_code(verdicts))


@main.command("check", epilog="""\b
Exit codes: as check-variant (0 checked, none refuted; 1 a claim is refuted;
2 bad input, e.g. a string where a number belongs, named with its key;
3 a claim could not be checked and none is refuted; 70 internal error;
130 interrupted; 143 terminated by SIGTERM).""")
@click.argument("claims_file", metavar="CLAIMS.toml")
@click.option("--n-trials", type=int, default=200_000, show_default=True,
              help="Audit trials per dataset for [[audit]] claims.")
@click.option("--max-examples", type=int, default=300, show_default=True,
              help="Hypothesis examples for [[sensitivity]] claims.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance of each audit's certificate.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Root seed: the same seed gives the same results.json.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, show_default="reports/check-CLAIMS",
              help="Folder for results.json, report.md and report.html. The default "
                   "folder (CLAIMS: the file's stem) is this command's own: a rerun "
                   "replaces the report it holds; any other content is refused.")
@click.option("--overwrite", is_flag=True,
              help="Replace the files of an earlier run in --out.")
def check(claims_file, n_trials, max_examples, alpha, seed, out_dir, overwrite):
    """Check a paper's claims stated in a TOML file: reported privacy numbers (recomputed
    by every accountant, under the paper's and the real sampling), sensitivities
    (property test over a record domain), mechanisms (empirical audit)."""
    from dpclaims.claims.claims_file import load_claims_file

    budget = _budget(seed, n_trials=n_trials, max_examples=max_examples, alpha=alpha)
    spec = load_claims_file(claims_file)  # every value validated before any heavy import

    def work(tick):
        from dpclaims.claims.checks.user_claims import check_claims_file

        verdicts, sections, meta = check_claims_file(spec, budget, seed, tick)
        return f"check: {meta['paper']}", meta["paper"], verdicts, sections, meta

    _run_check(work, seed, _default_out("check", Path(claims_file).stem, out_dir),
               overwrite, {})


from dpclaims.cli_data import data as _data_group  # noqa: E402  (the `data` commands)

main.add_command(_data_group)

if __name__ == "__main__":  # pragma: no cover
    main()
