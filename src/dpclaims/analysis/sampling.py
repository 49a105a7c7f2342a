"""How an iterative Gaussian mechanism picks its batches: :class:`Sampling`.

Kept apart from :mod:`dpclaims.analysis.accounting` so that what needs only the plan
(its steps, passes and description; the exact answer of ``dpclaims account`` for a
composition of plain Gaussians, :mod:`dpclaims.analysis.gaussian_dp`) imports no
accountant: importing dp_accounting and autodp takes 1.2-2.5 s, the whole of a
simple question's budget. :mod:`dpclaims.analysis.accounting` re-exports
:class:`Sampling`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from dpclaims.analysis.validation import check_count, check_positive
from dpclaims.analysis.vocabulary import SAMPLINGS

__all__ = ["Sampling"]


@dataclass(frozen=True)
class Sampling:
    """How an iterative Gaussian mechanism picks the records each step touches.

    Parameters
    ----------
    kind : {"poisson", "without-replacement", "shuffle", "fixed-order", "none"}
        ``poisson``: each record joins each batch independently with probability
        q = B / N. ``without-replacement``: each batch is a uniformly random
        subset of exactly B of the N records. ``shuffle``: each epoch is a pass
        over a (hidden) random permutation in batches of B. ``fixed-order``: the
        same, in an order the adversary knows. ``none``: every step uses the
        whole dataset (full batch).
    dataset_size : int, optional
        N, number of records. Required for ``poisson`` and
        ``without-replacement``, and for ``shuffle`` / ``fixed-order`` given in
        ``steps``.
    batch_size : int or float, optional
        B, records per batch (for ``poisson`` the expected batch size, which may
        be fractional). 0 < B <= N. For ``none`` it may be omitted or equal N.
    steps : int, optional
        Number of noisy steps (mechanism invocations). Give exactly one of
        ``steps`` and ``epochs``.
    rate : float, optional
        ``poisson`` only: the sampling rate q in (0, 1] itself, instead of B and N (the
        accounting of Poisson sampling needs only q). Not with ``batch_size``.
    epochs : int, optional
        Number of passes. For ``poisson`` / ``without-replacement`` it means
        ``epochs * N / B`` steps, which must be an integer (otherwise give
        ``steps``); for ``shuffle`` / ``fixed-order`` a pass is ``ceil(N / B)``
        steps (the last batch may be short); for ``none`` a pass is one step.

    Raises
    ------
    ValueError
        Unknown ``kind``; a non-positive or non-integer size or count;
        ``batch_size > dataset_size``; both or neither of ``steps`` and
        ``epochs``; a size missing that the kind needs.

    Notes
    -----
    A shuffled or fixed-order pass touches each record exactly once per epoch,
    so the honest default (:func:`dp_event_for`) is the composition of one
    *unamplified* Gaussian mechanism per epoch: with disjoint batches, changing
    one record changes one step's output per epoch by at most Delta. For a
    fixed-order pass whose order the adversary knows this is exact (tight in
    the worst case over the query); for a hidden shuffle it is an upper bound
    that ignores amplification by shuffling. A partial last epoch (``steps``
    not a multiple of ``ceil(N / B)``) counts as a full one, since some record
    is touched in it. Under add-remove this assumes that adding or removing a
    record changes only the batch that holds it; if batches are re-formed by
    position, an insertion shifts every later batch and the bound does not
    apply.
    """

    kind: str
    dataset_size: int | None = None
    batch_size: int | float | None = None
    steps: int | None = None
    epochs: int | None = None
    rate: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in SAMPLINGS:
            raise ValueError(f"kind must be one of {SAMPLINGS}, got {self.kind!r}")
        if self.rate is not None:
            self._check_rate()
            return
        if (self.steps is None) == (self.epochs is None):
            raise ValueError(
                f"give exactly one of steps and epochs, got steps={self.steps!r}, "
                f"epochs={self.epochs!r}"
            )
        if self.steps is not None:
            object.__setattr__(self, "steps", check_count(self.steps, "steps"))
        if self.epochs is not None:
            object.__setattr__(self, "epochs", check_count(self.epochs, "epochs"))
        n = self.dataset_size
        if n is not None:
            n = check_count(n, "dataset_size")
            object.__setattr__(self, "dataset_size", n)
        b = self.batch_size
        if b is not None:
            if self.kind == "poisson":
                b = check_positive(b, "batch_size")
                b = int(b) if b.is_integer() else b
            else:
                b = check_count(b, "batch_size")
            if n is None:
                raise ValueError(f"batch_size={b!r} needs dataset_size, got None")
            if b > n:
                raise ValueError(f"batch_size {b!r} exceeds dataset_size {n!r}")
            if self.kind == "none" and b != n:
                raise ValueError(
                    f"kind 'none' uses the whole dataset each step: batch_size {b!r} must "
                    f"equal dataset_size {n!r} or be omitted"
                )
            object.__setattr__(self, "batch_size", b)
        needs_sizes = self.kind in ("poisson", "without-replacement") or (
            self.kind in ("shuffle", "fixed-order") and self.steps is not None
        )
        if needs_sizes and (n is None or b is None):
            raise ValueError(
                f"kind {self.kind!r} needs dataset_size and batch_size, got "
                f"dataset_size={n!r}, batch_size={b!r}"
            )
        if self.kind in ("poisson", "without-replacement") and self.epochs is not None:
            steps = self.epochs * n / b
            if abs(steps - round(steps)) > 1e-9 * steps:
                raise ValueError(
                    f"epochs={self.epochs!r} * dataset_size {n!r} / batch_size {b!r} = "
                    f"{steps!r} steps is not an integer; give steps instead"
                )

    def _check_rate(self) -> None:
        """The checks of a sampling given by its ``rate`` (Poisson only)."""
        if self.kind != "poisson":
            raise ValueError(f"rate is for Poisson sampling only, got kind {self.kind!r}")
        if self.batch_size is not None:
            raise ValueError(f"give rate or batch_size, not both (rate={self.rate!r}, "
                             f"batch_size={self.batch_size!r})")
        q = check_positive(self.rate, "rate")
        if q > 1:
            raise ValueError(f"rate must lie in (0, 1], got {q!r}")
        object.__setattr__(self, "rate", q)
        if self.dataset_size is not None:
            object.__setattr__(self, "dataset_size", check_count(self.dataset_size,
                                                                 "dataset_size"))
        if self.steps is not None:
            object.__setattr__(self, "steps", check_count(self.steps, "steps"))
        if self.epochs is not None:
            object.__setattr__(self, "epochs", check_count(self.epochs, "epochs"))
            steps = self.epochs / q
            if abs(steps - round(steps)) > 1e-9 * steps:
                raise ValueError(f"epochs={self.epochs!r} / rate {q!r} = {steps!r} steps is "
                                 "not an integer; give steps instead")

    @property
    def sampling_rate(self) -> float | None:
        """q = B / N, or the given ``rate`` (1.0 for ``none``); None when the sizes were not
        given."""
        if self.rate is not None:
            return self.rate
        if self.kind == "none":
            return 1.0
        if self.dataset_size is None or self.batch_size is None:
            return None
        return self.batch_size / self.dataset_size

    @property
    def num_steps(self) -> int | None:
        """Number of noisy steps; None for ``shuffle`` / ``fixed-order`` given in epochs
        without sizes."""
        if self.steps is not None:
            return self.steps
        if self.kind == "none":
            return self.epochs
        if self.rate is not None:
            return round(self.epochs / self.rate)
        if self.dataset_size is None or self.batch_size is None:
            return None
        if self.kind in ("poisson", "without-replacement"):
            return round(self.epochs * self.dataset_size / self.batch_size)
        return self.epochs * math.ceil(self.dataset_size / self.batch_size)

    @property
    def passes(self) -> float:
        """Passes over the data: for ``shuffle`` / ``fixed-order`` the number of times
        each record is touched (a partial pass counts as one), for ``none`` the steps,
        for ``poisson`` / ``without-replacement`` the expected passes ``steps * B / N``."""
        if self.kind in ("shuffle", "fixed-order"):
            if self.epochs is not None:
                return self.epochs
            return math.ceil(self.steps / math.ceil(self.dataset_size / self.batch_size))
        if self.kind == "none":
            return self.num_steps
        if self.rate is not None:
            return self.num_steps * self.rate
        return self.num_steps * self.batch_size / self.dataset_size

    def to_dict(self) -> dict[str, Any]:
        """The fields plus ``sampling_rate``, ``num_steps`` and ``passes``."""
        fields = asdict(self)
        if fields["rate"] is None:  # a plan given by sizes: the fields it always had
            del fields["rate"]
        return {
            **fields,
            "sampling_rate": self.sampling_rate,
            "num_steps": self.num_steps,
            "passes": self.passes,
        }

    def accounting_note(self, noise_multiplier: float, relation: str) -> str:
        """:meth:`describe` and what the noise multiplier is relative to: the note of an
        accounting result (:func:`dpclaims.analysis.accounting.account`)."""
        return (
            f"{self.describe(relation)} Noise multiplier sigma = {noise_multiplier:g} is "
            f"relative to the L2 sensitivity of the un-sampled query under {relation} (for "
            "sums clipped to norm C: C under add-remove, 2C under replace-one)."
        )

    def describe(self, relation: str) -> str:
        """One paragraph: what the sampling is and how it is accounted."""
        n, b = self.dataset_size, self.batch_size
        if self.kind == "poisson":
            q = (f"q = {self.rate:.6g}" if self.rate is not None
                 else f"q = B/N = {b}/{n} = {self.sampling_rate:.6g}")
            text = (
                f"Poisson sampling: each record joins each batch independently with "
                f"probability {q}; {self.num_steps} steps."
            )
        elif self.kind == "without-replacement" and relation == "add-remove":
            text = (
                f"Sampling without replacement: each batch is a uniformly random subset of "
                f"exactly B = {b} of the records, N = {n} here and N - 1 or N + 1 in a "
                f"neighbouring dataset; {self.num_steps} steps. Accounted under add-remove "
                f"as Poisson sampling at rate {_fixed_size_rate(n, b):.6g} with half the "
                "noise multiplier: an added record that enters a batch pushes another "
                "out, so the batch changes by a replacement (dpclaims.analysis.accounting."
                "fixed_size_add_remove_event)."
            )
        elif self.kind == "without-replacement":
            text = (
                f"Sampling without replacement: each batch is a uniformly random subset of "
                f"exactly B = {b} of the N = {n} records (N public); {self.num_steps} steps."
            )
        elif self.kind == "none":
            text = (
                f"Full batch: every step touches every record; {self.num_steps}-fold "
                f"composition of the Gaussian mechanism (exact)."
            )
        else:
            text = (
                f"{self.passes} pass(es), each touching each record exactly once (this is "
                f"not subsampling): composition of {self.passes} unamplified Gaussian "
                f"mechanisms, one per pass. "
            )
            if self.kind == "fixed-order":
                text += "Exact (tight) for a fixed order the adversary knows."
            else:
                text += (
                    "For a hidden shuffle this is an upper bound that ignores "
                    "amplification by shuffling."
                )
            if relation == "add-remove":
                text += (
                    " Under add-remove this assumes adding or removing a record changes "
                    "only the batch that holds it; if batches are re-formed by position, "
                    "an insertion shifts every later batch and the bound does not apply."
                )
        return text


def _fixed_size_rate(n: int, b: int) -> float:
    """B / N, or N / (N + 1) when B = N: the rate at which fixed-size batches are
    accounted under add-remove (dpclaims.analysis.accounting.fixed_size_add_remove_rate)."""
    return b / n if b < n else n / (n + 1)
