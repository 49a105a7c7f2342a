"""Adapters: training code written for another framework as a whole-run algorithm.

:mod:`dpclaims.adapters.jax`
    :class:`~dpclaims.adapters.jax.JaxAlgorithm` wraps a JAX or NumPyro training function
    ``train(data, n_valid, key)`` into the algorithm protocol of
    :mod:`dpclaims.audits.whole_run` (the ``dpclaims[jax]`` extra; the module imports
    without JAX and raises a clear ImportError when JAX is needed and missing).

Nothing here imports a framework at import time.
"""
