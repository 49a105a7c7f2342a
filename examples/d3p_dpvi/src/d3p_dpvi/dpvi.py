"""d3p 0.2.0's ``DPSVI`` as one JAX training run, ``train(data, n_valid, key)``.

The training function is d3p's code as it is: ``DPSVI(model, guide, optim,
Trace_ELBO(), clipping_threshold, dp_scale, N=...)``, its ``init`` and ``update`` (per-
example gradients by ``jax.vmap``, clipping, the average, Gaussian noise of std
``dp_scale * C / B`` from d3p's ChaCha PRNG ``d3p.random``, the optimiser step), run as
d3p's README writes it (one key for the batches and ``DPSVI.init``; the batch of step i
from ``fold_in(key, i)``). Two things are not d3p's own:

* **The batches.** d3p's ``d3p.minibatch.subsample_batchify_data`` draws B distinct
  indices out of ``range(len(data))`` (``d3p.util.sample_from_array``, a keyed Feistel
  permutation), with ``len(data)`` a Python int fixed when the batchifier is built. The
  adapter passes every dataset padded to one shape (``pad_to`` rows, of which the first
  ``n_valid`` are records: D has N = 100 and D + canary 101), and ``n_valid`` is a traced
  value, so d3p's sampler would draw padding rows. :func:`fixed_size_batch` is the
  smallest faithful equivalent: a uniformly random subset of exactly B of the first
  ``n_valid`` rows, the B smallest of ``pad_to`` uniform 32-bit keys from d3p's PRNG
  (``d3p.random.random_bits`` of ``fold_in(key, i)``), with the padding rows' keys set
  above every record's. Sampling without replacement, as d3p's (ties between two 32-bit
  keys, broken by row index, occur with probability < 1.2e-6 per step for 101 rows).
* **The key.** ``d3p.random.PRNGKey`` takes a Python int or bytes, not a traced array;
  :func:`chacha_key` builds the same ChaCha state from 256 bits drawn from the run's
  JAX key (``chacha.cipher.setup_state(key, nonce 0, counter 0)``, what
  ``PRNGKey(seed)`` does with a 32-byte seed).

The model and the gradient canary
---------------------------------
Records are ``(x (N, 2), is_canary (N,))``. An ordinary record (``is_canary = 0``) is
an observation x ~ N(theta, I_2) of a latent theta ~ N(0, I_2). A record with
``is_canary = s`` in {-1, +1} is the audit's gradient canary (Nasr et al. 2023;
:mod:`dpclaims.audits.whole_run`): its log-likelihood is switched off and it adds
``-s M a`` to the log joint, a ``numpyro.factor`` linear in a second latent a ~ N(0, 1)
with M = :data:`CANARY_WEIGHT` = 1e4. The guide is N(theta_loc, diag theta_scale) for
theta and a point mass (``Delta``) at ``a_loc`` for a. d3p's per-example loss is 1/N
times the ELBO of a batch of one record whose likelihood is scaled by N (the plate's
scale; ``clip_unscaled_observations``), so the canary's per-example gradient with
respect to the variational parameters is ``s M e_a`` (from the factor) plus the prior's
and the guide's 1/N share: ``a_loc / N`` on a_loc, ``theta / N`` on theta_loc and the
entropy's ``1 / N`` on the scale. Its norm is about M >> C, so d3p's clipping scales it
to ``C (s e_a + r)`` with ``|r| < 1e-3`` for ``|a_loc|, |theta| < 10`` (float32 then
rounds the rest): the canary's clipped contribution to every step is ``s C u`` with
u = e_a, up to r. Without the Delta guide the canary's gradient would also move the
scale of a's guide by a random amount (the reparametrised sample), and its direction
would not be fixed. An ordinary record's gradient has no e_a component but the prior's
``a_loc / N``: the direction u is quiet. The audit's certificate is valid whatever the
canary does (the canary is only the adversary's choice of record); its exactness only
matters for the audit's power.

The trace
---------
The optimiser is plain SGD (``numpyro.optim.SGD``, step size :data:`STEP_SIZE`): the
noisy batch gradient ``g_t = N (mean clipped gradient + noise)`` is then read off two
consecutive parameter vectors, ``(p_(t-1) - p_t) / step_size``, and the full trace (every
step's parameters) is post-processing of the noisy gradients, which the claim covers.
(With d3p's README's Adam the update is not linear in g_t and only the final iterate
could be audited.) ``train`` returns the unconstrained parameters ``[a_loc, theta_loc
(2), log theta_scale (2)]`` before the first step and after each of the T steps, shape
(T + 1, 5); :func:`noisy_sums` turns them into the per-step released statistic, the
noisy sum of the batch's clipped gradients, ``B g_t / N`` (T, 5), in which the canary
contributes ``s C e_a`` and the noise has std ``dp_scale * C`` per coordinate.

The one-run audit's canary slots
-------------------------------
A one-run audit (:mod:`dpclaims.audits.one_run`) needs m canaries in one run, each on a
coordinate of its own. :func:`train_slots` is :func:`train` with t = :data:`CANARY_SLOTS`
more parameters, ``slots_loc`` (t,), the point mass of a latent vector b with a flat prior
(a masked normal: log density 0, no prior gradient), and t canary rows appended to every batch: row
i has ``slot = i`` and sign ``signs[i]`` when canary i joins the step, 0 otherwise. Canary
i joins each step independently with probability q = B / N (a uniform 32-bit key per
canary and step from d3p's PRNG, a stream apart from the batches'), the probability with
which the fixed-size sampler puts any one record into a batch; the B ordinary records are
still drawn by :func:`fixed_size_batch` from the N records, so the canaries change
neither N nor any ordinary record's batches. A canary row's per-example loss is only the
factor ``-M sign b_i`` (the prior and the guide of theta and a are scaled by 0 on canary
rows, 1 on the data's rows), so its per-example gradient is exactly ``sign M e_i`` in the
``slots_loc`` block and d3p clips it to ``sign C e_i`` (up to float32 rounding); a row
with sign 0 has gradient 0. The data's rows have the loss of :func:`model`. d3p averages
over the B + t rows of the batch and scales its noise std to ``dp_scale * C / (B + t)``,
so the noisy sum of the clipped gradients (:func:`noisy_sums`) still has noise std
``dp_scale * C`` per coordinate. The likelihood's scale (the plate's size) is N + t in
this run (NumPyro's plate must be at least as large as the B + t rows d3p's ``init``
traces): a data row's per-example gradient then carries a 1 / (N + t) share of the prior
instead of 1 / N (d3p divides the scale out before clipping,
``clip_unscaled_observations``, and multiplies the noisy mean by it after the noise), and
the clipping and the noise std relative to C are as in :func:`train`. What a one-run
certificate of this run certifies is in docs/guide/one-run.md ("JAX and d3p").

The scale N of the likelihood (``DPSVI(..., N=...)``) is the nominal N = 100 for both
datasets of a pair: d3p reads it as a concrete number at ``init``
(``get_observations_scale`` calls ``np.unique`` on the sites' scales), so it cannot follow
the traced ``n_valid``. With ``N=len(data)`` on each dataset, the gradient scale itself
would differ by 101 / 100 between D and D + canary, a leak of the dataset size that
this example does not audit.
"""

from __future__ import annotations

import d3p.random
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from chacha import cipher
from d3p.svi import DPSVI
from numpyro.infer import Trace_ELBO
from numpyro.optim import SGD

#: N, records of the base dataset (and the likelihood's scale N in the model).
DATASET_SIZE = 100
#: B, records per batch (fixed size, without replacement).
BATCH_SIZE = 50
#: T, DPSVI updates per run.
STEPS = 4
#: C, d3p's ``clipping_threshold`` (L2 norm of a per-example gradient).
CLIP = 0.5
#: sigma, the noise multiplier (d3p's ``dp_scale``).
NOISE_MULTIPLIER = 2.0
#: delta of every claim.
DELTA = 1e-5
#: Dimension of the ordinary records' x and of theta.
DIM = 2
#: M, the canary factor's weight (the canary's unclipped gradient has norm about M).
CANARY_WEIGHT = 1e4
#: The SGD step size.
STEP_SIZE = 1e-2
#: t, the one-run audit's canary slots of :func:`train_slots` (coordinates 5 .. 4 + t).
CANARY_SLOTS = 2000
#: Names of the released coordinates, in order (unconstrained parameters).
COORDINATES = ("a_loc", "theta_loc[0]", "theta_loc[1]", "log theta_scale[0]",
               "log theta_scale[1]")


def model(x, is_canary, N=DATASET_SIZE):  # noqa: N803  (d3p's and NumPyro's name)
    """The NumPyro model of a batch (module docstring).

    Parameters
    ----------
    x : array (B, 2)
        Observations (ignored where ``is_canary != 0``).
    is_canary : array (B,)
        0 for an ordinary record, s in {-1, +1} for the gradient canary.
    N : int
        The dataset size the plate scales the batch's likelihood to (a Python int).
    """
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([DIM]).to_event(1))
    a = numpyro.sample("a", dist.Normal(0.0, 1.0))
    with numpyro.plate("batch", N, x.shape[0]):
        ordinary = 1.0 - jnp.abs(is_canary)
        numpyro.factor("loglik", ordinary * dist.Normal(theta, 1.0).to_event(1).log_prob(x))
        numpyro.factor("canary", -CANARY_WEIGHT * is_canary * a)


def guide(x, is_canary, N=DATASET_SIZE):  # noqa: N803
    """Mean-field Gaussian for theta, a point mass at ``a_loc`` for a (module docstring)."""
    loc = numpyro.param("theta_loc", jnp.zeros(DIM))
    scale = numpyro.param("theta_scale", jnp.full(DIM, 0.5),
                          constraint=dist.constraints.positive)
    numpyro.sample("theta", dist.Normal(loc, scale).to_event(1))
    numpyro.sample("a", dist.Delta(numpyro.param("a_loc", 0.0)))


def chacha_key(key):
    """A ``d3p.random`` (ChaCha20) key from a JAX PRNG key, traceable.

    Parameters
    ----------
    key : JAX PRNG key
        A raw uint32 (2,) threefry key or a typed key.

    Returns
    -------
    array uint32 (4, 4)
        The ChaCha state ``d3p.random.PRNGKey`` builds from a 256-bit seed (nonce and
        counter 0), the seed drawn as 8 uint32 words from ``key``.
    """
    words = jax.random.bits(key, (8,), jnp.uint32)
    return cipher.setup_state(words, jnp.zeros(3, jnp.uint32), jnp.zeros(1, jnp.uint32))


def fixed_size_batch(batch_key, n_valid, pad_to: int, batch_size: int = BATCH_SIZE):
    """Indices of a uniformly random subset of exactly B of the first ``n_valid`` rows.

    Parameters
    ----------
    batch_key : array uint32 (4, 4)
        A ``d3p.random`` key (the batch's ``fold_in(key, i)``).
    n_valid : int or traced int32
        Rows that are records; rows ``>= n_valid`` are padding and never drawn.
        Must be >= B (not checked inside the traced function; the factories' datasets
        have N >= B).
    pad_to : int
        Rows of the padded dataset (static).
    batch_size : int
        B (static).

    Returns
    -------
    array int32 (B,)
        The rows of the B smallest uint32 keys ``d3p.random.random_bits(batch_key, 32,
        (pad_to,))`` among the records (ties broken by row index, probability < pad_to^2
        / 2^33 per call): without replacement, uniform over the B-subsets of the records,
        what d3p's ``subsample_batchify_data`` draws from an unpadded dataset.
    """
    bits = d3p.random.random_bits(batch_key, 32, (pad_to,))
    # padding rows get the largest key; the B smallest keys are the B largest complements
    keys = jnp.where(jnp.arange(pad_to) < n_valid, bits, jnp.uint32(0xFFFFFFFF))
    _, idx = jax.lax.top_k(jnp.bitwise_not(keys), batch_size)
    return idx


def make_dpsvi(dp_scale: float) -> DPSVI:
    """d3p's ``DPSVI`` as its README builds it, with SGD and this example's constants.

    Parameters
    ----------
    dp_scale : float
        d3p's ``dp_scale``: the noise multiplier sigma (noise std ``dp_scale * C / B`` on
        the averaged clipped gradient).
    """
    return DPSVI(model, guide, SGD(STEP_SIZE), Trace_ELBO(), CLIP, dp_scale,
                 N=DATASET_SIZE)


def flat_params(dpsvi: DPSVI, state):
    """The unconstrained parameters of a DPSVI state as a vector (5,), in
    :data:`COORDINATES` order."""
    p = dpsvi.optim.get_params(state.optim_state)
    return jnp.concatenate([jnp.reshape(p["a_loc"], (1,)), p["theta_loc"],
                            p["theta_scale"]])


def train(data, n_valid, key, *, dp_scale: float):
    """One run of d3p's DPSVI: T updates on fixed-size batches (module docstring).

    Parameters
    ----------
    data : tuple (x (pad_to, 2), is_canary (pad_to,))
        The dataset padded to ``pad_to`` rows; rows ``>= n_valid`` are padding.
    n_valid : int32 scalar
        Records in ``data``.
    key : JAX PRNG key
        The run's randomness (batches, d3p's noise, the guide's samples).
    dp_scale : float
        d3p's ``dp_scale``.

    Returns
    -------
    array float32 (T + 1, 5)
        The unconstrained parameters before the first update and after each of the T
        updates.
    """
    x, is_canary = data
    pad_to = x.shape[0]
    dpsvi = make_dpsvi(dp_scale)
    rng_key = chacha_key(key)
    batchifier_state = rng_key          # d3p's subsample_batchify_data: init(key) -> key

    def get_batch(i):
        idx = fixed_size_batch(d3p.random.fold_in(batchifier_state, i), n_valid, pad_to)
        return jnp.take(x, idx, axis=0), jnp.take(is_canary, idx, axis=0)

    state = dpsvi.init(rng_key, *get_batch(jnp.uint32(0)))
    start = flat_params(dpsvi, state)

    def step(state, i):
        state, _ = dpsvi.update(state, *get_batch(i))
        return state, flat_params(dpsvi, state)

    _, trace = jax.lax.scan(step, state, jnp.arange(STEPS, dtype=jnp.uint32))
    return jnp.concatenate([start[None], trace])


def train_correct(data, n_valid, key):
    """:func:`train` with ``dp_scale = sigma`` (d3p's noise multiplier, as documented)."""
    return train(data, n_valid, key, dp_scale=NOISE_MULTIPLIER)


def train_replace_one(data, n_valid, key):
    """:func:`train` with ``dp_scale = 2 sigma``: d3p's ``dp_scale`` multiplies C, the
    add/remove sensitivity of the clipped sum; under replace-one the sum moves by up to
    2C, so a noise multiplier sigma relative to it needs ``dp_scale = 2 sigma``."""
    return train(data, n_valid, key, dp_scale=2 * NOISE_MULTIPLIER)


def train_planted_bug(data, n_valid, key):
    """:func:`train` with ``dp_scale = sigma * C``: the noise *std* passed where d3p wants
    the multiplier (d3p multiplies by C itself), so the noise std is sigma C^2 = 0.5 C."""
    return train(data, n_valid, key, dp_scale=NOISE_MULTIPLIER * CLIP)


def model_slots(x, is_canary, slot, slot_sign, N=DATASET_SIZE, slots=CANARY_SLOTS):  # noqa: N803
    """:func:`model` with t canary slots (module docstring, "The one-run audit's canary
    slots").

    Parameters
    ----------
    x, is_canary : arrays (B', 2), (B',)
        As for :func:`model`.
    slot : int32 array (B',)
        -1 for a row of the data, i in [0, t) for canary slot i's row.
    slot_sign : array (B',)
        The sign of canary slot i's row in this step (0: not in the step, or absent);
        0 on the data's rows.
    N : int
        As for :func:`model`.
    slots : int
        t (static).
    """
    data_row = (slot < 0).astype(x.dtype)
    with numpyro.handlers.scale(scale=data_row):
        theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([DIM]).to_event(1))
        a = numpyro.sample("a", dist.Normal(0.0, 1.0))
    # a flat prior: log density 0 (NumPyro's mask), but it can be sampled when d3p's init
    # runs the model without the guide
    b = numpyro.sample("slots", dist.Normal(0.0, 1.0).expand([slots]).to_event(1).mask(False))
    with numpyro.plate("batch", N, x.shape[0]):
        ordinary = data_row * (1.0 - jnp.abs(is_canary))
        numpyro.factor("loglik", ordinary * dist.Normal(theta, 1.0).to_event(1).log_prob(x))
        numpyro.factor("canary", -CANARY_WEIGHT * is_canary * a)
        numpyro.factor("slot", -CANARY_WEIGHT * slot_sign * b[jnp.maximum(slot, 0)])


def guide_slots(x, is_canary, slot, slot_sign, N=DATASET_SIZE, slots=CANARY_SLOTS):  # noqa: N803
    """:func:`guide` (scaled by 0 on canary rows) and a point mass at ``slots_loc`` (t,)."""
    with numpyro.handlers.scale(scale=(slot < 0).astype(x.dtype)):
        guide(x, is_canary, N)
    numpyro.sample("slots", dist.Delta(numpyro.param("slots_loc", jnp.zeros(slots)),
                                       event_dim=1))


def train_slots(data, n_valid, key, signs, *, dp_scale: float):
    """One run of d3p's DPSVI with t one-run canaries (module docstring).

    Parameters
    ----------
    data, n_valid, key, dp_scale
        As for :func:`train`.
    signs : array float32 (t,)
        In {-1, 0, +1}: canary i's clipped contribution to each step it joins is
        ``signs[i] * C * e_(5 + i)``; 0: absent.

    Returns
    -------
    array float32 (T + 1, 5 + t)
        The unconstrained parameters, :data:`COORDINATES` then ``slots_loc``, before the
        first update and after each.
    """
    x, is_canary = data
    pad_to = x.shape[0]
    t = signs.shape[0]
    # the plate's size is N + t: NumPyro's plate needs its size at least the batch's B + t
    # rows when d3p's init traces the model on the whole batch
    dpsvi = DPSVI(model_slots, guide_slots, SGD(STEP_SIZE), Trace_ELBO(), CLIP, dp_scale,
                  N=DATASET_SIZE + t, slots=t)
    rng_key = chacha_key(key)
    canary_key = chacha_key(jax.random.fold_in(key, 1))
    # q = B / N as a 32-bit threshold: P(bits < threshold) = q exactly for q = 1/2
    threshold = jnp.uint32(round(BATCH_SIZE / DATASET_SIZE * 2**32))
    data_slot = jnp.full(BATCH_SIZE, -1, jnp.int32)
    canary_slot = jnp.arange(t, dtype=jnp.int32)

    def get_batch(i):
        idx = fixed_size_batch(d3p.random.fold_in(rng_key, i), n_valid, pad_to)
        joins = d3p.random.random_bits(d3p.random.fold_in(canary_key, i), 32, (t,)) \
            < threshold
        return (jnp.concatenate([jnp.take(x, idx, axis=0), jnp.zeros((t, DIM), x.dtype)]),
                jnp.concatenate([jnp.take(is_canary, idx, axis=0),
                                 jnp.zeros(t, is_canary.dtype)]),
                jnp.concatenate([data_slot, canary_slot]),
                jnp.concatenate([jnp.zeros(BATCH_SIZE, x.dtype),
                                 jnp.where(joins, signs, 0.0).astype(x.dtype)]))

    def flat(state):
        p = dpsvi.optim.get_params(state.optim_state)
        return jnp.concatenate([jnp.reshape(p["a_loc"], (1,)), p["theta_loc"],
                                p["theta_scale"], p["slots_loc"]])

    state = dpsvi.init(rng_key, *get_batch(jnp.uint32(0)))
    start = flat(state)

    def step(state, i):
        state, _ = dpsvi.update(state, *get_batch(i))
        return state, flat(state)

    _, trace = jax.lax.scan(step, state, jnp.arange(STEPS, dtype=jnp.uint32))
    return jnp.concatenate([start[None], trace])


def train_slots_correct(data, n_valid, key, signs):
    """:func:`train_slots` with ``dp_scale = sigma`` (as :func:`train_correct`)."""
    return train_slots(data, n_valid, key, signs, dp_scale=NOISE_MULTIPLIER)


def train_slots_replace_one(data, n_valid, key, signs):
    """:func:`train_slots` with ``dp_scale = 2 sigma`` (as :func:`train_replace_one`)."""
    return train_slots(data, n_valid, key, signs, dp_scale=2 * NOISE_MULTIPLIER)


def train_slots_planted_bug(data, n_valid, key, signs):
    """:func:`train_slots` with ``dp_scale = sigma * C`` (as :func:`train_planted_bug`)."""
    return train_slots(data, n_valid, key, signs, dp_scale=NOISE_MULTIPLIER * CLIP)


def noisy_sums(releases):
    """Per-step released statistic from traces: ``(p_(t-1) - p_t) B / (step_size N)``.

    Parameters
    ----------
    releases : array (n, T + 1, 5 + t)
        Traces of :func:`train` (t = 0) or :func:`train_slots` (t canary slots, whose
        batches have B + t rows and whose likelihood scale is N + t).

    Returns
    -------
    ndarray (n, T, 5 + t)
        The noisy sum of each step's clipped per-example gradients (d3p's noisy mean
        gradient times N + t, divided by (N + t) / (B + t)): the canary contributes ``s C e_a``
        (slot i's ``s C e_(5 + i)``), the noise has std ``dp_scale * C`` per coordinate.
    """
    import numpy as np

    r = np.asarray(releases, dtype=float)
    if r.ndim != 3 or r.shape[1] != STEPS + 1 or r.shape[2] < len(COORDINATES):
        raise ValueError(f"releases must have shape (n, {STEPS + 1}, 5 + t), got {r.shape}")
    t = r.shape[2] - len(COORDINATES)
    return (r[:, :-1] - r[:, 1:]) * ((BATCH_SIZE + t) / (STEP_SIZE * (DATASET_SIZE + t)))
