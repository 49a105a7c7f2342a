"""DP-SGD written in plain JAX, wrapped by :class:`dpclaims.adapters.jax.JaxAlgorithm`.

``dpclaims check-variant examples/jax_dpsgd.py:<name>`` (needs ``pip install
'dpclaims[jax]'``). Logistic regression on d = 2 features, T steps of DP-SGD (Abadi et
al. 2016): Poisson(q) batches drawn as a mask over the padded rows, per-example gradients
by ``jax.vmap(jax.grad(loss))``, each clipped to norm C, their sum released with Gaussian
noise of std sigma C, then an SGD step on the released sum over the expected batch size
q N. Add-remove, the claim ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
GaussianDpEvent(sigma)), T)`` with epsilon from dp_accounting's PLD accountant.

The data is a dict ``{"x": (N, 2), "y": (N,), "canary": (N,)}``; the background records
have x = (0, z), so their gradients have no e_1 component, and a record with
``canary = s`` in {-1, +1} is the gradient canary: its clipped contribution is s C e_1
(Nasr et al. 2023). The full trace releases the T noisy sums (T, 2).

Factories: ``dpsgd_correct`` (sigma = 2, C = 4, q = 0.5, N = 20, T = 4: the claim
holds), ``dpsgd_noise_not_scaled`` (planted bug: noise std sigma instead of sigma C, an
effective multiplier sigma / C = 0.5), ``dpsgd_no_clipping`` (planted bug: per-example
gradients not clipped; seen by the input canary x = 10 e_1, whose gradient has norm 5 > C
= 1 at the start), and :func:`make_dpsgd` for other sizes.
"""

from __future__ import annotations

import functools

import numpy as np

from dpclaims.adapters.jax import JaxAlgorithm
from dpclaims.analysis.accounting import Sampling, account_event, dp_event_for
from dpclaims.audits.mechanism import PrivacyClaim


def dpsgd_train(data, n_valid, key, *, steps, q, clip, lr, noise_std, do_clip,
                full_trace, n_records):
    """One run of DP-SGD (module docstring); the JAX training function of one run.

    ``data``: dict of (pad_to, ...) arrays, rows >= ``n_valid`` are padding (never
    sampled). ``noise_std``: the std of the noise added to the clipped sum (sigma C when
    correct). Returns the trace (steps, d) or the final parameters (d,).
    """
    return _dpsgd(data, n_valid, key, None, steps=steps, q=q, clip=clip, lr=lr,
                  noise_std=noise_std, do_clip=do_clip, full_trace=full_trace,
                  n_records=n_records)


def dpsgd_train_canaries(data, n_valid, key, signs, *, steps, q, clip, lr, noise_std,
                         do_clip, full_trace, n_records):
    """:func:`dpsgd_train` with the one-run audit's t Dirac gradient canaries.

    The parameters are (theta (2,), one coordinate per canary slot): d = 2 + t, and the
    released sums (steps, d). Canary i is a record whose clipped contribution is
    ``signs[i] * clip * e_(2+i)`` (x = 0 on the two features, so the logistic loss does
    not see it); it joins each step's batch independently with probability q, as every
    record does (its own uniform per step); sign 0: absent. The ordinary records'
    gradients do not depend on the slots' coordinates, so their part of the run is that
    of :func:`dpsgd_train` on the same data (with other random numbers).
    """
    return _dpsgd(data, n_valid, key, signs, steps=steps, q=q, clip=clip, lr=lr,
                  noise_std=noise_std, do_clip=do_clip, full_trace=full_trace,
                  n_records=n_records)


def _dpsgd(data, n_valid, key, signs, *, steps, q, clip, lr, noise_std, do_clip,
           full_trace, n_records):
    """The run of :func:`dpsgd_train` (``signs`` None) or :func:`dpsgd_train_canaries`."""
    import jax
    import jax.numpy as jnp

    x, y, canary = data["x"], data["y"], data["canary"]
    pad_to, d = x.shape
    t = 0 if signs is None else signs.shape[0]
    real = (jnp.arange(pad_to) < n_valid) & (canary == 0)
    u = jnp.zeros(d).at[0].set(1.0)

    def loss(theta, xi, yi):
        z = xi @ theta[:d]
        return jax.nn.softplus(z) - yi * z

    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))

    def step(theta, key_t):
        k_mask, k_noise, *k_canaries = jax.random.split(key_t, 2 if signs is None else 3)
        g = per_example(theta, x, y)[:, :d]                                 # (pad_to, d)
        if do_clip:
            norms = jnp.linalg.norm(g, axis=1, keepdims=True)
            g = g * jnp.minimum(1.0, clip / jnp.maximum(norms, 1e-12))
        g = jnp.where(real[:, None], g, canary[:, None] * clip * u[None, :])
        in_batch = jax.random.uniform(k_mask, (pad_to,)) < q
        in_batch = in_batch & (jnp.arange(pad_to) < n_valid)
        released = jnp.sum(jnp.where(in_batch[:, None], g, 0.0), axis=0)
        if signs is not None:           # each canary joins with probability q, as a record
            joins = jax.random.uniform(k_canaries[0], (t,)) < q
            released = jnp.concatenate([released, jnp.where(joins, signs * clip, 0.0)])
        released = released + noise_std * jax.random.normal(k_noise, (d + t,))
        return theta - lr * released / (q * n_records), released

    theta, trace = jax.lax.scan(step, jnp.zeros(d + t), jax.random.split(key, steps))
    return trace if full_trace else theta


def background(n_records: int, seed: int = 0) -> dict:
    """Ordinary records: x = (0, z), z ~ N(0, 1), y ~ Bernoulli(sigmoid(z)), no canary."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n_records)
    x = np.stack([np.zeros(n_records), z], axis=1).astype(np.float32)
    y = (rng.random(n_records) < 1.0 / (1.0 + np.exp(-z))).astype(np.float32)
    return {"x": x, "y": y, "canary": np.zeros(n_records, np.float32)}


def gradient_canary(sign: float) -> dict:
    """The gradient canary's record: x = 0, y = 0, canary = sign (contribution sign C e_1)."""
    return {"x": np.zeros(2, np.float32), "y": np.float32(0.0),
            "canary": np.float32(np.sign(sign))}


INPUT_CANARY = {"x": np.array([10.0, 0.0], np.float32), "y": np.float32(0.0),
                "canary": np.float32(0.0)}


@functools.cache
def claimed_epsilon(sigma: float, q: float, n_records: int, steps: int, delta: float) -> float:
    """dp_accounting's PLD epsilon of T Poisson(q)-subsampled Gaussians, add-remove."""
    event = dp_event_for(sigma, Sampling("poisson", dataset_size=n_records,
                                         batch_size=q * n_records, steps=steps))
    return float(account_event(event, delta, "add-remove", accountants=("dp_accounting-pld",))
                 .row("dp_accounting-pld").epsilon)


def make_dpsgd(*, n_records: int = 20, steps: int = 4, q: float = 0.5, clip: float = 4.0,
               sigma: float = 2.0, lr: float = 0.05, delta: float = 1e-5,
               noise_std: float | None = None, do_clip: bool = True,
               threat_model: str = "full-trace", chunk: int = 1024, name: str | None = None,
               train=dpsgd_train, canary_slots: int = 0,
               canary_chunk: int = 10) -> JaxAlgorithm:
    """A :class:`JaxAlgorithm` of :func:`dpsgd_train` (module docstring).

    ``noise_std`` defaults to sigma C (correct); any other value is a planted bug the
    claim does not know of. ``train`` may be replaced (e.g. by a function that counts its
    traces) as long as it takes the same keywords. ``canary_slots`` t > 0: the one-run
    audit's t Dirac gradient canaries (:func:`dpsgd_train_canaries`, coordinates 2 ..
    1 + t), ``canary_chunk`` runs per compiled call of it.
    """
    noise_std = sigma * clip if noise_std is None else noise_std
    event = dp_event_for(sigma, Sampling("poisson", dataset_size=n_records,
                                         batch_size=q * n_records, steps=steps))
    claim = PrivacyClaim(claimed_epsilon(sigma, q, n_records, steps, delta), delta,
                         "add-remove", event)
    keywords = {"steps": steps, "q": q, "clip": clip, "lr": lr, "noise_std": noise_std,
                "do_clip": do_clip, "full_trace": threat_model == "full-trace",
                "n_records": n_records}
    fn = functools.partial(train, **keywords)
    canaries = {} if not canary_slots else {
        "train_canaries": functools.partial(dpsgd_train_canaries, **keywords),
        "gradient_canary_slots": canary_slots,
        "canary_coordinates": 2 + np.arange(canary_slots), "canary_chunk": canary_chunk}
    return JaxAlgorithm(
        name=name or f"jax-dpsgd[N={n_records}, T={steps}, q={q:g}, sigma={sigma:g}, "
                     f"C={clip:g}, noise std={noise_std:g}{'' if do_clip else ', no clip'}]",
        claim=claim, threat_model=threat_model, train=fn, data=background(n_records),
        chunk=chunk, gradient_canary=gradient_canary, canary_direction=np.array([1.0, 0.0]),
        clip=clip, input_canary=INPUT_CANARY,
        sampling=Sampling("poisson", dataset_size=n_records, batch_size=q * n_records,
                          steps=steps), **canaries)


def dpsgd_correct():
    return make_dpsgd(name="jax-dpsgd-correct")


def dpsgd_noise_not_scaled():
    return make_dpsgd(noise_std=2.0, name="jax-dpsgd-noise-std-sigma-not-sigma-C")


def dpsgd_no_clipping():
    return make_dpsgd(clip=1.0, do_clip=False, name="jax-dpsgd-no-clipping")
