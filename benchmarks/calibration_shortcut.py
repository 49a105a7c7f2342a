"""The order shortcut of :func:`dpclaims.analysis.accounting.calibrate_noise_multiplier`
with dp_accounting's RDP accountant: the same sigma, bit for bit, with fewer full-grid
evaluations.

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_shortcut.py [--quick]``.

Each case is calibrated twice in this process, first with the shortcut off
(``accounting._RDP_ORDER_SHORTCUT = False``: every evaluation builds an RdpAccountant
over dp_accounting's default order grid, the code path before the shortcut) and then
on. The script asserts that the two sigmas are equal (``==`` and ``float.hex``), or that
both calls raise ValueError with the same message, and fails (exit 1) otherwise.

Cases (all ``accountant="dp_accounting-rdp"``):

* grid: Poisson sampling under add-remove, sampling without replacement under
  replace-one (Wang-Balle-Kasiviswanathan) and under add-remove (accounted as
  :func:`~dpclaims.analysis.accounting.fixed_size_add_remove_event`), unsampled
  Gaussian passes under both relations; epsilon in {0.5, 2, 8}; (N, B, steps, delta) in
  {(1000, 10, 100, 1e-5), (60000, 256, 1000, 1e-6)}; tol in {1e-3, 1e-2};
* the privacy-number catalogue's dp_accounting-rdp calibrations: for each entry whose
  sigma is unstated and whose calibration accountant is dp_accounting-rdp, the calls of
  ``privacy_numbers.check_reported`` (each delta and step count, default tol), and for
  each entry the dp_accounting-rdp calls of ``_sigma_under_each_relation`` (tol 1e-2).
  The catalogue's autodp-rdp and PLD calibrations do not reach the shortcut and are not
  repeated;
* DP-SEP Prop. 2: every paper setting under each calibration reading. DP-SEP calibrates
  with autodp-rdp (unchanged); here the same (sampling, relation, epsilon, delta) go to
  dp_accounting-rdp, which the shortcut serves;
* the bracket's ends: a target not met at bounds[1] and one met already at bounds[0]
  (both raise).

Printed: per group, the number of full-grid evaluations (RdpAccountant constructions
over the default grid, counted by wrapping ``accounting._dpa_rdp_accountant``) and the
CPU seconds (``time.process_time``) of each path, and the ratio new / old; the load
(``os.getloadavg``) before and after. The accounting memo (``$DPCLAIMS_ACCOUNTING_MEMO``)
is switched off for the run.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
import time

os.environ.pop("DPCLAIMS_ACCOUNTING_MEMO", None)

from dpclaims.analysis import accounting as acc  # noqa: E402
from dpclaims.analysis.vocabulary import RELATIONS  # noqa: E402
from dpclaims.claims.checks import privacy_numbers as pn  # noqa: E402
from dpclaims.papers.accounting import catalogue  # noqa: E402
from dpclaims.papers.dpsep.calibration import (  # noqa: E402
    CALIBRATION_READINGS,
    DELTA,
    _calibration_sampling,
)
from dpclaims.papers.dpsep.catalogue import PAPER_SETTINGS  # noqa: E402

RDP = "dp_accounting-rdp"


def grid_cases(quick: bool):
    kinds = [("poisson", "add-remove"), ("without-replacement", "replace-one"),
             ("without-replacement", "add-remove"), ("none", "add-remove"),
             ("none", "replace-one")]
    shapes = [(1000, 10, 100, 1e-5), (60000, 256, 1000, 1e-6)]
    epsilons = (2.0,) if quick else (0.5, 2.0, 8.0)
    tols = (1e-3, 1e-2)
    for (kind, rel), (n, b, steps, delta), eps, tol in itertools.product(
            kinds, shapes, epsilons, tols):
        if kind == "none":
            sampling = acc.Sampling("none", n, steps=steps)
        else:
            sampling = acc.Sampling(kind, n, batch_size=b, steps=steps)
        yield (f"grid {kind}/{rel} N={n} B={b} T={steps} eps={eps} delta={delta} tol={tol}",
               (eps, delta, sampling, rel, RDP), {"tol": tol})


def catalogue_cases():
    for entry in catalogue():
        if (entry.dataset_size is None or (entry.batch_size is None
                                           and entry.paper_sampling != "none")
                or not entry.deltas or not entry.steps):
            continue  # check_reported stops at not-checkable before calibrating
        if not entry.noise_multipliers and pn._calibration_accountant(entry) == RDP:
            for delta, steps in itertools.product(entry.deltas, entry.steps):
                plan = pn._plan(entry, entry.paper_sampling, steps)
                yield (f"catalogue {entry.id} delta={delta} T={steps}",
                       (entry.reported_epsilon, delta, plan, entry.paper_relation, RDP), {})
        if entry.paper_sampling in ("shuffle", "fixed-order", "none"):
            continue
        plan = pn._plan(entry, entry.paper_sampling, entry.steps[0])
        for relation in RELATIONS:
            if entry.paper_sampling == "poisson" and relation == "replace-one":
                continue  # the PLD
            yield (f"catalogue-relations {entry.id} {relation}",
                   (entry.reported_epsilon, entry.deltas[0], plan, relation, RDP),
                   {"tol": 1e-2})


def prop2_cases(quick: bool):
    settings = PAPER_SETTINGS[:2] if quick else PAPER_SETTINGS
    for (name, n, t, eps), reading in itertools.product(settings, CALIBRATION_READINGS):
        sampling, relation = _calibration_sampling(reading, n, t)
        yield (f"prop2 {name} N={n} T={t} eps={eps} {reading}",
               (eps, DELTA, sampling, relation, RDP), {})


def edge_cases():
    s = acc.Sampling("poisson", 1000, batch_size=10, steps=100)
    yield ("edge: not met at bounds[1]", (1e-6, 1e-5, s, "add-remove", RDP),
           {"bounds": (1e-3, 4.0)})
    yield ("edge: met at bounds[0]", (1e4, 1e-5, s, "add-remove", RDP),
           {"bounds": (0.25, 1e4)})


class Counter:
    def __init__(self):
        self.n = 0
        self.original = acc._dpa_rdp_accountant

    def __call__(self, *args, **kwargs):
        self.n += 1
        return self.original(*args, **kwargs)


def run(counter, shortcut: bool, args, kwargs):
    acc._RDP_ORDER_SHORTCUT = shortcut
    counter.n = 0
    t0 = time.process_time()
    try:
        out = ("sigma", acc.calibrate_noise_multiplier(*args, **kwargs))
    except ValueError as exc:
        out = ("ValueError", str(exc))
    return out, counter.n, time.process_time() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="epsilon 2 only in the grid, two Prop. 2 settings")
    opts = parser.parse_args(argv)
    logging.getLogger("absl").setLevel(logging.ERROR)  # dp_accounting's warnings
    counter = Counter()
    acc._dpa_rdp_accountant = counter
    print(f"load before: {os.getloadavg()}", flush=True)
    groups = {"grid": list(grid_cases(opts.quick)), "catalogue": list(catalogue_cases()),
              "prop2 (dp_accounting-rdp)": list(prop2_cases(opts.quick)),
              "edge": list(edge_cases())}
    failures, totals = [], {}
    for group, cases in groups.items():
        tot = [0, 0.0, 0, 0.0]
        for label, args, kwargs in cases:
            old, n_old, t_old = run(counter, False, args, kwargs)
            new, n_new, t_new = run(counter, True, args, kwargs)
            same = old[0] == new[0] and old[1] == new[1] and (
                old[0] != "sigma" or old[1].hex() == new[1].hex())
            if not same:
                failures.append((label, old, new))
            shown = old[1].hex() if old[0] == "sigma" else old[1][:60]
            print(f"{'ok ' if same else 'DIFF'} {label}: {shown}  full {n_old} -> {n_new}, "
                  f"CPU {t_old:.2f} -> {t_new:.2f} s", flush=True)
            tot[0] += n_old
            tot[1] += t_old
            tot[2] += n_new
            tot[3] += t_new
        totals[group] = (len(cases), *tot)
    acc._RDP_ORDER_SHORTCUT = True
    print(f"load after: {os.getloadavg()}")
    print()
    print(f"{'group':28s} {'cases':>5s} {'full old':>8s} {'full new':>8s} {'CPU old':>8s} "
          f"{'CPU new':>8s} {'new/old':>7s}")
    all_tot = [0, 0, 0, 0.0, 0.0]
    for group, (n, f_old, c_old, f_new, c_new) in totals.items():
        print(f"{group:28s} {n:5d} {f_old:8d} {f_new:8d} {c_old:8.2f} {c_new:8.2f} "
              f"{c_new / c_old:7.2f}")
        for i, v in enumerate((n, f_old, f_new, c_old, c_new)):
            all_tot[i] += v
    n, f_old, f_new, c_old, c_new = all_tot
    print(f"{'all':28s} {n:5d} {f_old:8d} {f_new:8d} {c_old:8.2f} {c_new:8.2f} "
          f"{c_new / c_old:7.2f}")
    if failures:
        print(f"\n{len(failures)} case(s) differ:")
        for label, old, new in failures:
            print(f"  {label}: old {old!r}, new {new!r}")
        return 1
    print(f"\nall {n} calibrations identical (== and float.hex, or the same ValueError)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
