"""The VIPS family's mechanisms and algorithms, small, by name (as :data:`dpclaims.mechanisms.ZOO`).

:data:`FAMILY_ZOO` maps a name to a zero-argument factory returning ``(object, data)``
(:mod:`dpclaims.algorithms.sep.zoo`).
"""

from __future__ import annotations

import numpy as np

from dpclaims.algorithms.vips.step import VIPSBLRStep
from dpclaims.algorithms.vips.whole_run import VIPSRun


def _blr_step():
    rng = np.random.default_rng(8)
    s, d = 6, 2
    step = VIPSBLRStep(mean=rng.normal(size=d), cov=0.1 * np.eye(d), noise_multiplier=2.0,
                       delta=1e-5, batch_size=s)
    x = rng.normal(size=(s, d))
    x = 0.9 * x / np.linalg.norm(x, axis=1, keepdims=True)
    return step, (x, (rng.random(s) < 0.5).astype(float))


def _run(batching: str, threat_model: str = "full-trace"):
    def make():
        alg = VIPSRun(n_records=4, batch_size=2, epochs=1, batching=batching,
                      threat_model=threat_model)
        return alg, alg.data
    return make


FAMILY_ZOO = {
    "vips-blr-step": _blr_step,
    "vips-run[wor]": _run("wor"),
    "vips-run[shuffle]": _run("shuffle"),
    "vips-run[final-iterate]": _run("wor", "final-iterate"),
}
