"""Command line: ``dpclaims audit`` and ``dpclaims check-variant`` (a thin layer over
:mod:`dpclaims.reports`).

Exit codes of ``audit``: 0 when it ran and wrote its report (a refuted claim is a
finding about a paper, not a failure of the run); 2 on bad input, with the reason
on stderr. ``check-variant``: 0 when every claim of the variant was checked and
none is refuted, 1 when one is refuted, 2 on bad input, 3 when nothing could be
checked for some claim (not-checkable) and none is refuted.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import sys
import time
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from dpclaims import __version__

_COLOURS = {"holds": "green", "refuted": "red", "inconclusive": "yellow",
            "not-checkable": "white"}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpclaims")
def main():
    """Verify the privacy and accuracy claims of DP Bayesian inference papers."""


@main.command()
@click.option("--paper", type=click.Choice(["dpsep", "vips", "dpvim", "accounting", "all"]),
              default="dpsep", show_default=True,
              help="Which claims to check: DP-SEP's, VIPS's, DPVIm's, every "
                   "privacy number the three papers report (accounting recomputation; "
                   "--budget does not apply to it), or all of them in one report.")
@click.option("--budget", type=click.Choice(["quick", "standard", "full", "smoke"]),
              default="quick", show_default=True,
              help="Effort: quick takes minutes on 2 cores (DP-SEP about 2, all papers "
                   "about 6); standard and full take longer; smoke (under a minute) exists "
                   "for the project's tests.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Root seed: the same seed gives the same results.json.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports/out"), show_default=True,
              help="Folder for results.json, report.md, report.html and figures.")
@click.option("--data-dir", type=click.Path(path_type=Path), default=None,
              help="The papers' data sets (../shared/data layout). Without it the "
                   "embedded statsmodels data sets are used.")
@click.option("--workers", type=int, default=None,
              help="Processes for independent checks (default: 2, or 1 on a one-core "
                   "machine). results.json is the same whatever the number.")
def audit(paper, budget, seed, out_dir, data_dir, workers):
    """Check a paper's claims and write a report with a verdict for each."""
    from dpclaims.claims import InputError
    from dpclaims.reports.render import write_report

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
    t0 = time.perf_counter()
    with _progress(console, "starting", _plan(f"{paper}/{budget}")) as show:
        def tick(name):
            show(f"[{paper}/{budget}] {name}", name)

        try:
            verdicts, sections, meta, timings = _run_papers(paper, budget, seed, out_dir,
                                                            data_dir, tick, workers)
        except InputError as exc:
            raise click.UsageError(str(exc)) from exc
        show("writing report")
    run_info = {
        "command": " ".join(["dpclaims"] + sys.argv[1:]),
        "dpclaims": __version__,
        "python": platform.python_version(),
        "workers": workers,
        "seconds per check": timings,
        "total seconds": round(time.perf_counter() - t0, 1),
    }
    paths = write_report(out_dir, title=f"dpclaims audit: {paper}", meta=meta,
                         verdicts=verdicts, sections=sections, run_info=run_info)
    _print_summary(f"{paper}: claims and verdicts (seed {seed}, budget {budget})", verdicts,
                   paths)


def _run_papers(paper, budget, seed, out_dir, data_dir, tick, workers=1):
    """Run one paper's checks, or all of them (``paper == "all"``), merged into one report."""
    from dpclaims.claims.checks.dpsep import run_dpsep_audit
    from dpclaims.claims.checks.dpvim import run_dpvim_audit
    from dpclaims.claims.checks.privacy_numbers import run_accounting_audit
    from dpclaims.claims.checks.vips import run_vips_audit

    runners = {
        "dpsep": lambda: run_dpsep_audit(budget, seed, out_dir, data_dir, tick, workers),
        # under "all" the reported epsilons come once, from the accounting catalogue
        "vips": lambda: run_vips_audit(budget, seed, tick, data_dir=data_dir, out_dir=out_dir,
                                       include_catalogue=paper != "all"),
        "dpvim": lambda: run_dpvim_audit(budget, seed, tick, data_dir=data_dir, out_dir=out_dir,
                                         include_catalogue=paper != "all"),
        "accounting": lambda: run_accounting_audit(seed, tick, entries=_smoke_entries()
                                                   if budget == "smoke" else None),
    }
    if paper != "all":
        return runners[paper]()
    from dpclaims.claims import CheckTimer

    # the accounting catalogue (no randomness, no figures) runs beside the papers' checks
    # in a second process: its progress is one line, its results are assembled in order
    with CheckTimer(tick, workers) as timer:  # no process is left behind on an error
        background = timer.start("accounting catalogue", lambda: (
            run_accounting_audit(seed, lambda name: None, entries=_smoke_entries()
                                 if budget == "smoke" else None)))
        results = {name: run() for name, run in runners.items() if name != "accounting"}
        results["accounting"] = background.result()
    verdicts, sections, meta, timings = [], [], {}, {}
    for name, (v, s, m, t) in results.items():
        verdicts += v
        sections += [{**sec, "title": f"{name}: {sec['title']}"} for sec in s]
        meta[name], timings[name] = m, t
    return verdicts, sections, meta, timings


def _smoke_entries():
    """The smoke budget's accounting catalogue: the first entry of each paper."""
    from dpclaims.claims.checks.privacy_numbers import catalogue

    first = {}
    for e in catalogue():
        first.setdefault(e.id.split("/")[0], e)
    return list(first.values())


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
    """k of N and an estimate of the time left, from a recorded plan.

    The estimate is the recorded seconds of the checks not yet finished, scaled by how
    much slower or faster than recorded this run has been so far (elapsed over the
    recorded seconds of the finished checks). A step that is not in the plan (another
    data folder or budget) leaves the count and the estimate out rather than guess.
    """

    def __init__(self, plan):
        self.plan = plan or []
        self.names = [name for name, _ in self.plan]
        self.t0 = time.perf_counter()
        self.steps = 0
        self.pos = 0  # the plan is walked forwards: a name recurring later is found again

    def describe(self, description: str, name: str | None = None) -> str:
        elapsed = time.perf_counter() - self.t0
        self.steps += 1
        name = description if name is None else name
        if name not in self.names[self.pos:]:
            return f"step {self.steps} ({elapsed:.1f} s elapsed): {description}"
        k = self.pos = self.names.index(name, self.pos)
        done = sum(s for _, s in self.plan[:k])
        left = sum(s for _, s in self.plan[k:])
        scale = elapsed / done if done > 0 and elapsed > 0 else 1.0
        return (f"check {k + 1} of {len(self.plan)}: {description} ({elapsed:.0f} s elapsed, "
                f"about {_duration(scale * left)} left)")


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


@contextlib.contextmanager
def _progress(console: Console, first: str, plan=None):
    """``show(description, name=None)`` for long work. With a recorded ``plan`` (see
    :func:`_plan`) each step shows "check k of N" and the time left (:class:`_Eta`);
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


def _print_summary(title, verdicts, paths, sentences: bool = False):
    """One row per claim (its headline verdict and deciding reading), then the sentences."""
    from rich.markup import escape

    from dpclaims.claims import claims_summary

    claims = claims_summary(verdicts)
    table = Table(title=title)
    # the claim id is never cut: the other columns wrap to make room
    widest = max((len(c["id"]) for c in claims), default=5)
    table.add_column("claim", no_wrap=True, min_width=widest)
    for col in ("where", "verdict", "readings", "deciding reading"):
        table.add_column(col)
    for c in claims:
        counts = {}
        for r in c["readings"]:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        table.add_row(escape(c["id"]), escape(c["location"]),
                      f"[{_COLOURS[c['verdict']]}]{c['verdict']}[/]",
                      ", ".join(f"{n} {k}" for k, n in counts.items()),
                      escape(c["deciding_reading"] or "-"))
    out = Console()
    out.print(table)
    if sentences:
        for c in claims:
            out.print(f"[bold]{escape(c['id'])}[/]: {escape(c['headline'])}")
    for kind, path in paths.items():
        out.print(f"{kind}: {path}")


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
@click.option("--sampling-rate", type=float, default=None, help="q = B / N (instead of B).")
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
def account(sigma, target_epsilon, sampling, dataset_size, batch_size, sampling_rate, steps,
            epochs, delta, relation, accountant, as_json):
    """Epsilon of an iterative Gaussian mechanism by every accountant, side by side."""
    import json

    from dpclaims.analysis.accounting import (
        TIGHT_ACCOUNTANTS,
        Sampling,
        calibrate_noise_multiplier,
        steps_for_epochs,
    )
    from dpclaims.analysis.accounting import account as account_rows

    if (sigma is None) == (target_epsilon is None):
        raise click.UsageError("give exactly one of --sigma and --target-epsilon")
    if batch_size is not None and sampling_rate is not None:
        raise click.UsageError("give at most one of --batch-size and --sampling-rate")
    if sampling_rate is not None:
        if dataset_size is None:
            raise click.UsageError("--sampling-rate needs --dataset-size")
        if not 0 < sampling_rate <= 1:
            raise click.UsageError(f"--sampling-rate must lie in (0, 1], got {sampling_rate}")
        batch = sampling_rate * dataset_size
    else:
        batch = batch_size
    notes = []
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
    try:
        plan = Sampling(sampling, dataset_size=dataset_size, batch_size=batch, steps=steps,
                        epochs=epochs)
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
    except (ValueError, TypeError) as exc:
        raise click.UsageError(str(exc)) from exc
    def kind(name):
        if name in TIGHT_ACCOUNTANTS:
            return "tight"
        if name == "moments-accountant":
            return "classic (looser conversion)"
        return "upper bound"

    rows = [{"accountant": r.name, "relation": relation, "kind": kind(r.name),
             "epsilon": None if r.epsilon is None or not np.isfinite(r.epsilon) else r.epsilon,
             "note": r.note} for r in result.rows]
    advice = ("tight accountants disagree: refine the PLD discretisation "
              "(analysis.accounting.account(..., pld_initial_interval=...)) and report the "
              "larger value until they agree")
    if as_json:
        click.echo(json.dumps({"noise_multiplier": sigma, "calibrated_by": accountant
                               if calibrated is not None else None,
                               "target_epsilon": target_epsilon, "delta": delta,
                               "relation": relation, "sampling": sampling, "steps":
                               plan.num_steps, "notes": notes, "note": result.note,
                               "disagrees": result.disagrees,
                               "tight_disagreement": result.tight_disagreement,
                               "tight_disagrees": result.tight_disagrees,
                               "advice": advice if result.tight_disagrees else None,
                               "rows": rows}))
        return
    out = Console()
    for n in notes:
        out.print(f"[yellow]{n}[/]")
    if calibrated is not None:
        out.print(f"sigma = {sigma:.6g} meets epsilon = {target_epsilon:g} by {accountant}")
    table = Table(title=f"sigma {sigma:.6g}, {sampling}, {relation}, delta {delta:g}, "
                        f"{plan.num_steps} steps")
    for col in ("accountant", "relation", "kind", "epsilon", "note"):
        table.add_column(col)
    for r in rows:
        eps = "unsupported" if r["epsilon"] is None else f"{r['epsilon']:.6g}"
        table.add_row(r["accountant"], r["relation"], r["kind"], eps, r["note"])
    out.print(table)
    out.print(result.note)
    if result.tight_disagrees:
        out.print(f"[yellow]{advice} (they differ by {result.tight_disagreement:.1%} > "
                  f"{result.rtol:.0%})[/]")


@main.command("check-variant", epilog="""\b
Exit codes:
  0  every claim the variant makes was checked and none is refuted
  1  a claim is refuted (a certificate contradicts it)
  2  bad input (not a mechanism, a missing file or module, a release of the
     wrong or a changing shape or with NaN, a score of the wrong shape, an
     unknown score name, bad options)
  3  nothing was checked for at least one claim (not-checkable: e.g. no data
     and no record domain), and none is refuted""")
@click.argument("spec", metavar="FILE.py:OBJECT | package.module:OBJECT")
@click.option("--n-trials", type=int, default=200_000, show_default=True,
              help="Audit trials per dataset of the selected neighbouring pair.")
@click.option("--max-examples", type=int, default=300, show_default=True,
              help="Hypothesis examples for the property test of the sensitivity.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance of the audit's certificate.")
@click.option("--score", type=str, default=None,
              help="Attack score: auto (default), fisher, likelihood-ratio, logistic, "
                   "gradient-boosting (a variant's own `score` attribute takes precedence).")
@click.option("--selection-trials", type=int, default=None,
              help="Pilot trials per dataset and candidate pair for the pair selection "
                   "(default max(2000, n-trials / 10)).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Root seed: the same seed gives the same results.json.")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Processes for the audit's trial blocks (results do not depend on it).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports/variant"), show_default=True,
              help="Folder for results.json, report.md and report.html.")
def check_variant(spec, n_trials, max_examples, alpha, score, selection_trials, seed, workers,
                  out_dir):
    """Check a mechanism (or a factory returning one): property test of its sensitivity,
    accounting of its dp_event, empirical audit on a searched neighbouring pair. An
    algorithm (`run` instead of `release`; dpclaims.audits.whole_run) gets a whole-run
    audit with a canary instead, --n-trials whole runs per dataset."""
    from dpclaims.claims.checks.variant import check_variant, load_variant

    budget = _budget(seed, n_trials=n_trials, max_examples=max_examples, alpha=alpha,
                     workers=workers, selection_trials=selection_trials, score=score)

    def work(tick):
        mech = load_variant(spec)
        verdicts, sections, meta = check_variant(mech, budget, seed, tick)
        meta["variant"] = spec
        return f"check-variant: {mech.name}", mech.name, verdicts, sections, meta

    _run_check(work, seed, out_dir, {"workers": workers})


def _budget(seed, **kwargs):
    """The VariantBudget of a check command; bad options are usage errors (exit 2)."""
    from dpclaims.claims.checks.variant import VariantBudget

    if seed < 0:
        raise click.BadParameter(f"seed must be >= 0, got {seed}", param_hint="--seed")
    try:
        return VariantBudget(**kwargs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def _run_check(work, seed, out_dir, run_extra):
    """Run ``work(tick) -> (title, name, verdicts, sections, meta)`` with a progress line,
    write the report, print the headline table and exit with the headlines' code."""
    from dpclaims.claims import InputError
    from dpclaims.claims.checks.variant import exit_code
    from dpclaims.reports.render import write_report

    t0 = time.perf_counter()
    console = Console(stderr=True)
    with _progress(console, "loading") as show:
        try:
            title, name, verdicts, sections, meta = work(show)
        except InputError as exc:
            raise click.UsageError(str(exc)) from exc
        show("writing report")
    run_info = {"command": " ".join(["dpclaims"] + sys.argv[1:]), "dpclaims": __version__,
                "python": platform.python_version(), **run_extra,
                "total seconds": round(time.perf_counter() - t0, 1)}
    paths = write_report(out_dir, title=f"dpclaims {title}", meta=meta, verdicts=verdicts,
                         sections=sections, run_info=run_info)
    _print_summary(f"{name}: claims and verdicts (seed {seed})", verdicts, paths,
                   sentences=True)
    sys.exit(exit_code(verdicts))


@main.command("check", epilog="""\b
Exit codes: as check-variant (0 checked, none refuted; 1 a claim is refuted;
2 bad input; 3 a claim could not be checked and none is refuted).""")
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
              default=Path("reports/check"), show_default=True,
              help="Folder for results.json, report.md and report.html.")
def check(claims_file, n_trials, max_examples, alpha, seed, out_dir):
    """Check a paper's claims stated in a TOML file: reported privacy numbers (recomputed
    by every accountant, under the paper's and the real sampling), sensitivities
    (property test over a record domain), mechanisms (empirical audit)."""
    from dpclaims.claims.checks.user_claims import check_claims_file

    budget = _budget(seed, n_trials=n_trials, max_examples=max_examples, alpha=alpha)

    def work(tick):
        verdicts, sections, meta = check_claims_file(claims_file, budget, seed, tick)
        return f"check: {meta['paper']}", meta["paper"], verdicts, sections, meta

    _run_check(work, seed, out_dir, {})


if __name__ == "__main__":  # pragma: no cover
    main()
