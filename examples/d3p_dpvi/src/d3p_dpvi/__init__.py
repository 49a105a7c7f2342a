"""d3p 0.2.0's ``DPSVI`` audited end to end: factories for ``dpclaims check-variant``.

Each factory returns a :class:`dpclaims.adapters.jax.JaxAlgorithm` around d3p's own
training code (:mod:`d3p_dpvi.dpvi`): N = 100 records, fixed-size batches of B = 50
drawn afresh each step, T = 4 DPSVI updates, clipping threshold C = 0.5, noise
multiplier sigma = 2, delta = 1e-5; the full trace is released (every step's
parameters) and audited with the white-box gradient canary of :mod:`d3p_dpvi.dpvi`.

``correct``
    d3p's DPSVI with ``dp_scale = 2 sigma``, claiming what the sampling it performs gives
    under replace-one. d3p's ``dp_scale`` multiplies C, the add/remove sensitivity of the
    clipped sum; under replace-one the sum moves by up to 2C, so the noise multiplier
    sigma = 2 of a replace-one claim needs ``dp_scale = 4``. (This example's first version
    ran ``dp_scale = sigma`` under the same claim: the factor-2 mistake of
    ``examples/variants.py:wrong``, an effective multiplier of 1. The audit's dataset
    search refuted it at the default budget, seed 0, on "aligned with": certified
    epsilon >= 3.97 against 3.75.) d3p draws fixed-size batches without replacement,
    which dpclaims' accountants cover under **replace-one** (Wang, Balle &
    Kasiviswanathan 2019, Thm. 27, in dp_accounting's and autodp's RDP):
    ``SelfComposedDpEvent(SampledWithoutReplacementDpEvent(100, 50,
    GaussianDpEvent(2)), 4)``, epsilon 3.7464 by both, claimed as 3.75.
    Replace-one, because under it N = 100 is public, so the likelihood's scale N that
    d3p fixes at ``init`` is the same on both datasets, and the bound is the tighter
    one: the same sampler under add/remove is bounded by
    :func:`dpclaims.analysis.accounting.fixed_size_add_remove_event` at epsilon 6.68
    (an added record that enters a full batch pushes another one out).
``planted_bug``
    The same claim, with the noise *std* sigma * C passed as ``dp_scale``, which d3p
    reads as the multiplier (it multiplies by C itself): the noise std is sigma C^2 =
    0.5, an effective multiplier of 0.5 against the replace-one sensitivity 2C = 1.
``d3p_own_claim``
    d3p run as documented, claiming what d3p's own accountant says:
    ``DPSVI.get_epsilon(1e-5, q=0.5, num_iter=4)`` (the Fourier accountant, about 2.524),
    Poisson subsampling at q = B / N under add/remove. The code draws fixed-size batches
    (declared in ``sampling``), for which that number is not an upper bound: on the
    dataset where every record is the canary with sign -1 (:func:`adversarial_data`),
    an added canary +C u that enters a batch pushes a -C u out, and the batch sum moves
    by 2C; the exact epsilon of that pair is about 6.63.

Each factory's data is the base dataset (:func:`ordinary_data`); ``check-variant``'s
search over neighbouring datasets (:mod:`dpclaims.audits.adversarial`) finds the
adversarial one (:func:`adversarial_data` builds it by hand, for the tests of the
canary).
"""

from __future__ import annotations

import numpy as np

from d3p_dpvi.dpvi import (
    BATCH_SIZE,
    CANARY_SLOTS,
    CLIP,
    COORDINATES,
    DATASET_SIZE,
    DELTA,
    DIM,
    NOISE_MULTIPLIER,
    STEPS,
    make_dpsvi,
    noisy_sums,
    train_correct,
    train_planted_bug,
    train_replace_one,
    train_slots_correct,
    train_slots_planted_bug,
    train_slots_replace_one,
)
from dpclaims.adapters.jax import JaxAlgorithm
from dpclaims.analysis.accounting import Sampling, dp_event_for
from dpclaims.audits.mechanism import PrivacyClaim

__all__ = ["adversarial_data", "correct", "d3p_epsilon", "d3p_own_claim", "gradient_canary",
           "ordinary_data", "planted_bug", "SAMPLING"]

#: The sampler d3p's code performs: fixed-size batches of B drawn afresh each step.
SAMPLING = Sampling("without-replacement", dataset_size=DATASET_SIZE, batch_size=BATCH_SIZE,
                    steps=STEPS)
#: The claim of ``correct`` and ``planted_bug``: the RDP epsilon 3.7464 of
#: :data:`SAMPLING` at sigma = 2 under replace-one (dp_accounting and autodp agree),
#: rounded up as a paper would print it; ``check-variant``'s accounting check recomputes it.
CORRECT_EPSILON = 3.75
#: The canary direction u = e_a in the released space (:data:`d3p_dpvi.dpvi.COORDINATES`).
CANARY_DIRECTION = np.eye(len(COORDINATES))[0]


def ordinary_data(seed: int = 0):
    """The base dataset: N = 100 ordinary records, x ~ N((1, -1), I_2), no canary.

    Returns
    -------
    tuple (x float32 (100, 2), is_canary float32 (100,))
    """
    rng = np.random.default_rng(seed)
    x = (np.array([1.0, -1.0]) + rng.standard_normal((DATASET_SIZE, DIM))).astype(np.float32)
    return x, np.zeros(DATASET_SIZE, dtype=np.float32)


def adversarial_data():
    """Every record the gradient canary with sign -1 (clipped contribution -C u each).

    Added to it, the canary +C u that enters a batch of exactly B pushes a -C u out: the
    batch sum moves by 2C, the worst case of fixed-size batches under add/remove
    (:func:`dpclaims.analysis.accounting.fixed_size_add_remove_event`, "Tightness").

    Returns
    -------
    tuple (x float32 (100, 2) zeros, is_canary float32 (100,) all -1)
    """
    return (np.zeros((DATASET_SIZE, DIM), dtype=np.float32),
            np.full(DATASET_SIZE, -1.0, dtype=np.float32))


def gradient_canary(sign: float):
    """The canary record ``(x = 0, is_canary = sign)``: clipped contribution sign C u.

    Raises
    ------
    ValueError
        ``sign`` not -1 or +1.
    """
    if sign not in (-1.0, 1.0):
        raise ValueError(f"sign must be -1 or +1, got {sign!r}")
    return np.zeros(DIM, dtype=np.float32), np.float32(sign)


def d3p_epsilon(delta: float = DELTA) -> float:
    """d3p's own reading: ``DPSVI.get_epsilon(delta, q=B/N, num_iter=T)`` at sigma = 2.

    Poisson subsampling at rate q under add/remove (d3p 0.2.0, ``d3p/svi.py``, by the
    Fourier accountant ``fourier_accountant.compute_eps.get_epsilon_R``).
    """
    return float(make_dpsvi(NOISE_MULTIPLIER).get_epsilon(
        delta, BATCH_SIZE / DATASET_SIZE, num_iter=STEPS))


def _algorithm(name, claim, train, train_slots, data, **extra) -> JaxAlgorithm:
    return JaxAlgorithm(name=name, claim=claim, threat_model="full-trace", train=train,
                        data=ordinary_data() if data is None else data,
                        gradient_canary=gradient_canary, canary_direction=CANARY_DIRECTION,
                        clip=CLIP, updates=noisy_sums, sampling=SAMPLING,
                        train_canaries=train_slots, gradient_canary_slots=CANARY_SLOTS,
                        canary_coordinates=len(COORDINATES) + np.arange(CANARY_SLOTS),
                        **extra)


def _correct_claim() -> PrivacyClaim:
    return PrivacyClaim(CORRECT_EPSILON, DELTA, "replace-one",
                        dp_event_for(NOISE_MULTIPLIER, SAMPLING))


def correct(data=None, chunk: int = 4096) -> JaxAlgorithm:
    """d3p's DPSVI as documented, with the replace-one claim of the fixed-size sampler it
    performs (module docstring). ``data``: the base dataset (default
    :func:`ordinary_data`); ``chunk``: runs per compiled call (the adapter's)."""
    return _algorithm("d3p-dpsvi (correct, dp_scale = 2 sigma)", _correct_claim(),
                      train_replace_one, train_slots_replace_one, data, chunk=chunk)


def planted_bug(data=None) -> JaxAlgorithm:
    """``correct`` with the noise std sigma C passed as ``dp_scale`` (module docstring)."""
    return _algorithm("d3p-dpsvi (dp_scale = sigma C)", _correct_claim(), train_planted_bug,
                      train_slots_planted_bug, data)


def d3p_own_claim(data=None) -> JaxAlgorithm:
    """d3p's DPSVI as documented, claiming d3p's own ``get_epsilon`` (Poisson, add/remove)
    for the fixed-size sampler it performs (module docstring)."""
    import dp_accounting

    eps = d3p_epsilon()
    q = BATCH_SIZE / DATASET_SIZE
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
        q, dp_accounting.GaussianDpEvent(NOISE_MULTIPLIER)), STEPS)
    return _algorithm("d3p-dpsvi (d3p's get_epsilon)",
                      PrivacyClaim(eps, DELTA, "add-remove", event), train_correct,
                      train_slots_correct, data,
                      library_accounting={"name": "d3p's DPSVI.get_epsilon", "epsilon": eps,
                                          "delta": DELTA, "relation": "add-remove",
                                          "assumes": "poisson"})
