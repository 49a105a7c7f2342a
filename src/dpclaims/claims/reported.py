"""A privacy number a paper reports, with the parameters it states (data only).

Each :class:`ReportedPrivacy` is one reported epsilon of a paper, its ``statement``
quoted exactly from the paper's text (passages joined by ``[...]`` are each verbatim),
and every parameter an accountant needs: delta, the noise multiplier in this project's
convention, dataset size, batch size, number of noisy steps, the sampling the paper's
accountant assumed, the neighbouring relation, and the sampling the algorithm really
performs. Where the paper leaves a parameter out, the entry says so (``*_stated``
False, ``missing``) and gives plausible values, or none.

Noise-multiplier convention (as in :mod:`dpclaims.analysis.accounting`): sigma is the
Gaussian noise standard deviation divided by the L2 sensitivity of the *un-sampled*
query (the statistic of one batch) under ``paper_relation``. Where a paper's stated
sensitivity is not the true worst case, or one step makes several Gaussian releases,
``noise_multipliers`` lists several readings, the paper's own reading first, and
``sigma_note`` says which is which.

The papers' own entries live with each paper (``dpclaims.papers.<id>``); claims files
(:mod:`dpclaims.claims.claims_file`) build them from TOML.
"""

# ruff: noqa: E501  (the ReportedPrivacy field comments are kept verbatim)
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportedPrivacy:
    """One privacy number a paper reports, with the parameters it states (or plausible ones)."""
    id: str                         # e.g. "vips/eps-lda", "vips/eps-mnist-s400", "dpvim/eps-adult-1"
    paper: str                      # "VIPS (vips.txt)" or "DPVIm (dpvim.txt)"
    location: str                   # section / figure / table, e.g. "Sec. 5.1, Fig. 3 caption"
    statement: str                  # the sentence quoted EXACTLY from the paper text
    reported_epsilon: float
    deltas: tuple                   # (delta,) if stated; else the plausible values to try
    delta_stated: bool
    noise_multipliers: tuple        # sigma(s) in OUR convention: noise std / L2 sensitivity of the un-sampled query under paper_relation; () if the paper does not state sigma
    sigma_stated: bool
    sigma_note: str                 # how the paper's noise parameter maps to ours (quote the paper's noise definition, e.g. "N(0, sigma^2 Delta^2)" -> sigma as is; DP-SGD noise std sigma*C on a sum of per-example gradients clipped to C: sensitivity C under add-remove, 2C under replace-one, so ours = sigma under add-remove, sigma/2 under replace-one)
    dataset_size: int | None        # N (training records) as stated (or derived from the paper's data description: say how in `missing`/`sigma_note`)
    batch_size: int | None          # S / B
    steps: tuple                    # (K,) number of noisy steps if stated or derivable (e.g. one epoch = ceil(N/S)); else plausible values
    steps_stated: bool
    paper_accounting: str           # what the paper says it used to get epsilon, quoted where possible (e.g. "analytical moments account method (Wang et al., 2019)")
    paper_sampling: str             # the sampling its accountant assumed: one of "poisson", "without-replacement", "shuffle", "fixed-order", "none"
    paper_relation: str             # "replace-one" or "add-remove" as the paper defines neighbours (quote in sigma_note or missing if unclear)
    real_sampling: str              # what the algorithm really does (same vocabulary): e.g. a minibatch of S drawn without replacement each step -> "without-replacement"; passes over shuffled data -> "shuffle"
    missing: str = ""               # parameters the paper leaves out or that are ambiguous, and which plausible values were chosen and why
    reported_epsilon_text: str | None = None  # the epsilon exactly as printed ("2.38", "1.0"); None: an integral value is exact ("1"), any other its shortest repr

    @property
    def printed_epsilon(self) -> str:
        """The reported epsilon as printed, which fixes the precision it is read at
        (:class:`dpclaims.claims.kernel.Claimed`): ``reported_epsilon_text`` when given,
        else "1" for 1.0 (an integral epsilon is a target, exact) and the shortest repr
        otherwise ("2.38")."""
        if self.reported_epsilon_text is not None:
            return self.reported_epsilon_text
        v = float(self.reported_epsilon)
        return str(int(v)) if v.is_integer() else repr(v)

    def claim(self):
        """The number as a catalogue claim (kind ``privacy-number``), the statement quoted."""
        from dpclaims.claims.core import Claim

        return Claim(self.id, self.paper, self.location, self.statement,
                     "accounting recomputation", kind="privacy-number")
