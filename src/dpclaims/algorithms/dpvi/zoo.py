"""The DPVI family's mechanisms and algorithms, small, by name (as :data:`dpclaims.mechanisms.ZOO`).

:data:`FAMILY_ZOO` maps a name to a zero-argument factory returning ``(object, data)``
(:mod:`dpclaims.algorithms.sep.zoo`).
"""

from __future__ import annotations

from dpclaims.algorithms.dpvi.step import DPVIGradientCanary
from dpclaims.algorithms.dpvi.whole_run import DPVI_VARIANTS, DPVIRun, dpvi_background


def _canary_step():
    step = DPVIGradientCanary(dataset_size=6, steps=2, sampling="full", variant="aligned",
                              dim=2, claim_reading="full-batch-exact", relation="add-remove")
    x, y, c = dpvi_background(6, 2, seed=1)
    return step, (x, y, c)


def _run(variant: str, threat_model: str = "full-trace"):
    def make():
        alg = DPVIRun(n_records=6, steps=2, variant=variant, threat_model=threat_model)
        return alg, alg.data
    return make


FAMILY_ZOO = {
    "dpvi-gradient-canary": _canary_step,
    **{f"dpvi-run[{v}]": _run(v) for v in DPVI_VARIANTS},
    "dpvi-run[final-iterate]": _run("aligned", "final-iterate"),
}
