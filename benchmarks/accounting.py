"""Speed and tightness of the accountants in :func:`dpclaims.analysis.accounting.account`,
and the discretisation error of the PLD accountant.

Run: ``.venv/bin/python benchmarks/accounting.py [--quick] [--reference-interval X]``.

Settings (delta = 1e-5): Poisson sampling under add-remove with N = 100 000,
q = B / N in {0.001, 0.01, 0.1}, steps in {100, 1000, 10000}, sigma in {0.8, 1.5};
sampling without replacement under replace-one (N = 60 000, B = 256, steps in
{1000, 10000}, sigma in {0.8, 1.5}; N = 1000, B = 50, 200 steps, sigma = 1); shuffled
passes (add-remove; replace-one gives the same rows) with 10 or 100 epochs, sigma in
{0.8, 1.5}. ``--quick`` runs six of these and finishes in well under a minute.

Table 1, one line per (setting, accountant), the rows of one ``account()`` call at its
default settings (the PLD refines its interval from 1e-3 until epsilon moves < 1 %):

epsilon    the row's epsilon ("-" where the accountant does not support the setting).
time_s     wall time of that row. The PLD, autodp, moments and analytic rows are timed
           by wrapping the module's row builders for the duration of the call; the
           dp_accounting-rdp time is the rest of the call (its RDP curve, which the
           moments row reuses, plus account()'s small overhead). One cold call per
           setting, after one warm-up call of the whole grid's first setting.
eps/ref    epsilon over the reference measured in this run: the exact epsilon
           (analytic-gaussian) for shuffled passes; the PLD at the reference interval
           (Table 2) for Poisson sampling; the smallest supported row for sampling
           without replacement, where no near-exact accountant exists here.
detail     dp_accounting-rdp: optimal order; moments: optimal lambda; PLD: the interval
           it stopped at and the number of halvings.

Table 2, one line per setting the PLD supports: epsilon at a fixed
``value_discretization_interval`` of 1e-2, 1e-3 and 1e-4 (``pld_initial_interval=x,
pld_max_refinements=0``) as relative error ``(eps_x - eps_ref) / eps_ref`` against the
reference interval (default 1e-5), with the wall time of each. The PLD is pessimistic,
so the errors are >= 0 up to rounding; for shuffled passes the exact epsilon is shown too.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from dataclasses import dataclass

import dpclaims.analysis.accounting as acc
from dpclaims.analysis.accounting import ACCOUNTANTS, Sampling, account

DELTA = 1e-5
INTERVALS = (1e-2, 1e-3, 1e-4)
# Row builders of account_event, by row name; the dp_accounting-rdp row is built inline.
TIMED_BUILDERS = {
    "dp_accounting-pld": "_pld_row",
    "autodp-rdp": "_autodp_row",
    "moments-accountant": "_moments_row",
    "analytic-gaussian": "_analytic_row",
}


@dataclass(frozen=True)
class Setting:
    label: str
    sigma: float
    sampling: Sampling
    relation: str
    reference: str  # "pld", "exact" or "min"


def poisson(q: float, steps: int, sigma: float) -> Setting:
    n = 100_000
    sampling = Sampling("poisson", dataset_size=n, batch_size=round(q * n), steps=steps)
    return Setting(f"poisson AR q={q:g} T={steps} s={sigma:g}", sigma, sampling,
                   "add-remove", "pld")


def without_replacement(n: int, b: int, steps: int, sigma: float) -> Setting:
    sampling = Sampling("without-replacement", dataset_size=n, batch_size=b, steps=steps)
    return Setting(f"WOR RO N={n} B={b} T={steps} s={sigma:g}", sigma, sampling,
                   "replace-one", "min")


def shuffle(epochs: int, sigma: float) -> Setting:
    return Setting(f"shuffle AR epochs={epochs} s={sigma:g}", sigma,
                   Sampling("shuffle", epochs=epochs), "add-remove", "exact")


def grid(quick: bool) -> list[Setting]:
    if quick:
        return [
            poisson(0.001, 1000, 1.5),
            poisson(0.01, 100, 1.5),
            poisson(0.01, 1000, 0.8),
            poisson(0.1, 100, 1.5),
            without_replacement(60_000, 256, 1000, 1.5),
            shuffle(10, 1.5),
        ]
    settings = [
        poisson(q, steps, sigma)
        for q in (0.001, 0.01, 0.1)
        for steps in (100, 1000, 10_000)
        for sigma in (0.8, 1.5)
    ]
    settings += [
        without_replacement(60_000, 256, steps, sigma)
        for steps in (1000, 10_000)
        for sigma in (0.8, 1.5)
    ]
    settings.append(without_replacement(1000, 50, 200, 1.0))
    settings += [shuffle(epochs, sigma) for epochs in (10, 100) for sigma in (0.8, 1.5)]
    return settings


@contextlib.contextmanager
def row_timers():
    """Wrap the row builders of account_event with timers; yields {row name: seconds}."""
    times: dict[str, float] = {}
    originals = {name: getattr(acc, attr) for name, attr in TIMED_BUILDERS.items()}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                times[name] = time.perf_counter() - start

        return wrapper

    for name, attr in TIMED_BUILDERS.items():
        setattr(acc, attr, timed(name, originals[name]))
    try:
        yield times
    finally:
        for name, attr in TIMED_BUILDERS.items():
            setattr(acc, attr, originals[name])


def timed_account(setting: Setting):
    with row_timers() as times:
        start = time.perf_counter()
        result = account(setting.sigma, setting.sampling, DELTA, setting.relation)
        total = time.perf_counter() - start
    times = dict(times)
    times["dp_accounting-rdp"] = total - sum(times.values())
    return result, times


def pld_at(setting: Setting, interval: float) -> tuple[float | None, float]:
    start = time.perf_counter()
    result = account(setting.sigma, setting.sampling, DELTA, setting.relation,
                     pld_initial_interval=interval, pld_max_refinements=0)
    return result.row("dp_accounting-pld").epsilon, time.perf_counter() - start


def detail(row) -> str:
    d = row.details
    if "optimal_order" in d:
        return f"order {d['optimal_order']:g}"
    if d.get("optimal_lambda") is not None:
        return f"lambda {d['optimal_lambda']:g}"
    if "value_discretization_interval" in d:
        mark = "" if d["converged"] else " NOT converged"
        interval = d["value_discretization_interval"]
        return f"interval {interval:.3g} ({d['refinements']} halvings){mark}"
    return ""


def fmt(x: float | None, width: int, spec: str) -> str:
    return f"{'-' if x is None else format(x, spec):>{width}}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="six settings, < 60 s")
    parser.add_argument("--reference-interval", type=float, default=1e-5,
                        help="PLD value_discretization_interval of the reference (1e-5)")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # dp_accounting's per-order convergence warnings
    wall = time.perf_counter()
    settings = grid(args.quick)
    account(settings[0].sigma, settings[0].sampling, DELTA, settings[0].relation)  # warm-up

    # Table 2 first: its reference is Table 1's for Poisson sampling.
    pld_rows, references = [], {}
    for s in settings:
        ref, ref_time = pld_at(s, args.reference_interval)
        if ref is None:
            continue
        at = [pld_at(s, x) for x in INTERVALS]
        exact = account(s.sigma, s.sampling, DELTA, s.relation, pld_max_refinements=0).row(
            "analytic-gaussian").epsilon
        pld_rows.append((s, ref, ref_time, at, exact))
        references[s.label] = ref

    print(f"Table 1: account() rows, delta = {DELTA:g}")
    print(f"{'setting':<40}{'accountant':<20}{'epsilon':>12}{'time_s':>9}{'eps/ref':>9}  detail")
    for s in settings:
        result, times = timed_account(s)
        supported = [r.epsilon for r in result.rows if r.supported]
        if s.reference == "exact":
            ref = result.row("analytic-gaussian").epsilon
        elif s.reference == "pld":
            ref = references[s.label]
        else:
            ref = min(supported)
        for name in ACCOUNTANTS:
            row = result.row(name)
            ratio = None if row.epsilon is None else row.epsilon / ref
            print(f"{s.label:<40}{name:<20}{fmt(row.epsilon, 12, '.6g')}"
                  f"{times.get(name, 0.0):>9.3f}{fmt(ratio, 9, '.4f')}  {detail(row)}")
    print("reference (eps/ref): poisson = PLD at interval "
          f"{args.reference_interval:g}; shuffle = exact; WOR = smallest supported row")

    print()
    print(f"Table 2: PLD discretisation, relative error against interval "
          f"{args.reference_interval:g}, delta = {DELTA:g}")
    head = "".join(f"{f'err@{x:g}':>12}{'s':>7}" for x in INTERVALS)
    print(f"{'setting':<40}{'eps_ref':>12}{'ref_s':>8}{head}{'exact':>12}")
    for s, ref, ref_time, at, exact in pld_rows:
        cells = "".join(f"{(e - ref) / ref:>12.2e}{t:>7.2f}" for e, t in at)
        print(f"{s.label:<40}{ref:>12.6g}{ref_time:>8.2f}{cells}{fmt(exact, 12, '.6g')}")
    print(f"total wall time: {time.perf_counter() - wall:.1f} s")


if __name__ == "__main__":
    main()
