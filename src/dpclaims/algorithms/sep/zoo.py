"""The SEP family's mechanisms and algorithms, small, by name (as :data:`dpclaims.mechanisms.ZOO`).

:data:`FAMILY_ZOO` maps a name to a zero-argument factory returning ``(object, data)``: a
step mechanism or a whole-run algorithm at a small size, and a dataset it runs on. The
contract test (``tests/test_family_contracts.py``) runs every entry of every family.
"""

from __future__ import annotations

import numpy as np

from dpclaims.algorithms.sep.likelihoods import Probit
from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.algorithms.sep.step import DPSEPStep
from dpclaims.algorithms.sep.whole_run import SEP_READINGS, DPSEPPass, dpsep_background
from dpclaims.analysis.gaussian import flatten_natural, natural_dim


def _step(reading: str):
    def make():
        d, n = 2, 6
        step = DPSEPStep(DPSEPParams(clipping_norm=1.0, damping=1.0, noise_multiplier=2.0,
                                     reading=reading), Probit(), np.zeros(natural_dim(d)),
                         flatten_natural(np.zeros(d), 0.5 * np.eye(d)), n, 0)
        x, y, _ = dpsep_background(n, d, seed=1)
        return step, (x, y)
    return make


def _pass(reading: str, threat_model: str):
    def make():
        alg = DPSEPPass(n_records=4, epochs=1, reading=reading, threat_model=threat_model)
        return alg, alg.data
    return make


FAMILY_ZOO = {
    **{f"dpsep-step[{r}]": _step(r) for r in ("as-printed", "sep-invariant")},
    **{f"dpsep-pass[{r}]": _pass(r, "full-trace") for r in SEP_READINGS},
    "dpsep-pass[final-iterate]": _pass("as-printed", "final-iterate"),
}
