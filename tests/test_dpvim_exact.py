"""DPVIm eq. (11) / (20) and Cor. 3.1 (issue 38 item 4): the true identities hold by a
sympy proof for every input (the gap 0 at both ends, exact), planted wrong ones leave a
non-zero symbolic difference and are refuted by an interval evaluation at a point; the
interval ELBO is the reference implementation's."""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import iv

from dpclaims.algorithms.dpvi.dpvi import (
    FullRank,
    LinearRegression,
    LogisticRegression,
    MeanField,
    Transform,
    elbo_single_sample,
)
from dpclaims.analysis.enclosures import lower_float, precision, upper_float
from dpclaims.claims.kernel import basis_key
from dpclaims.papers.dpvim import exact
from dpclaims.papers.dpvim.checks import check_aligned_identity, check_corollary31


@pytest.mark.parametrize("full_rank", [False, True])
def test_interval_elbo_encloses_the_reference_elbo(full_rank):
    for p in exact.identity_points(3, full_rank, n=6):
        fam = (FullRank if full_rank else MeanField)(p["d"], Transform(p["transform"]))
        model = LogisticRegression() if p["logistic"] else LinearRegression()
        ref = elbo_single_sample(model, fam, np.array([p["xi"]]), np.array([p["eta"]]),
                                 np.array([p["x"]]), np.array([p["y"]]))[0]
        with precision(exact.PRECISION):
            val = exact._elbo([iv.mpf(v) for v in p["xi"]], p)
        assert lower_float(val) - 1e-9 * (1 + abs(ref)) <= ref <= upper_float(val) + 1e-9 * (
            1 + abs(ref))


@pytest.mark.parametrize("full_rank", [False, True])
def test_the_symbolic_proof_covers_d_1_to_3_and_the_one_coordinate_lemma(full_rank):
    proof = exact.prove_aligned_identity(full_rank)
    assert proof.proved and proof.first_nonzero() is None
    labels = [label for label, _ in proof.residuals]
    scale = (lambda d: d * (d + 1) // 2) if full_rank else (lambda d: d)
    assert len(labels) == sum(scale(d) for d in exact.PROOF_DIMS) + 1
    assert labels[-1].startswith("every d")
    # a planted identity leaves the data term's missing share in every instance
    bad = exact.prove_aligned_identity(full_rank, factor=2.0)
    assert not bad.proved and all(r != "0" for _, r in bad.residuals)
    assert "Derivative(T(" in bad.first_nonzero()[1] or "Subs(" in bad.first_nonzero()[1]


def test_the_symbolic_proof_is_not_vacuous():
    # eq. (11) without T'(s) (the preconditioned eq. 17's data term) is not an identity
    sp = exact._sympy()
    L, m, s, eta, H, _ = exact._elbo_symbolic(2, False)
    diff = sp.diff(L, s[0]) - (eta[0] * sp.diff(L, m[0]) + sp.diff(H, s[0]))
    assert exact._zero(diff) != 0
    # with softplus substituted for T, the proof's identity still reduces to 0
    x = sp.Symbol("x")
    softplus = sp.Lambda(x, sp.log(1 + sp.exp(x)))
    good = sp.diff(L, s[0]) - (eta[0] * sp.diff(sp.Function("T")(s[0]), s[0])
                               * sp.diff(L, m[0]) + sp.diff(H, s[0]))
    assert exact._zero(good.subs(sp.Function("T"), softplus).doit()) == 0


def test_aligned_identity_holds_and_a_wrong_factor_is_refuted():
    good = check_aligned_identity(5, seed=0)
    assert [v.verdict for v in good] == ["holds", "holds"]
    for v in good:
        basis = v.evidence["basis"]
        assert basis["claimed"]["value"] == 0
        assert basis["lower"]["value"] == basis["upper"]["value"] == 0
        assert basis["upper"]["basis"] == "exact" and "sympy" in basis["upper"]["source"]
        assert "exact_gap" not in v.evidence and v.evidence["symbolic"]["proved"]
        assert "d <= 3" in v.sentence and "every d" in v.sentence
        assert "computed = 0 (exact)" in basis_key(basis, limit=400)
        # the finite-difference search: shown, never deciding
        assert basis["estimates"] and "finite-difference" in basis["estimates"][0]["source"]
    bad = check_aligned_identity(5, seed=0, factor=2.0)
    assert [v.verdict for v in bad] == ["refuted", "refuted"]
    for v in bad:
        basis = v.evidence["basis"]
        assert basis["lower"]["value"] > 0.1 and basis["upper"] is None
        assert not v.evidence["symbolic"]["proved"] and "non-zero difference" in v.sentence


def test_the_interval_evaluation_agrees_with_the_proof_at_the_seeded_points():
    # an independent transcription (the reference ELBO in intervals): the true identity's
    # gap encloses 0 at every point (a cross-check of both transcriptions, not evidence)
    for full_rank in (False, True):
        gap = exact.aligned_identity_gap(0, full_rank, n=4)
        assert gap.lower == 0 and gap.upper < 2.0 ** -64


def test_corollary31_symbolic_proof_and_its_planted_variant():
    for variant in ("aligned", "aligned-natural"):
        assert exact.prove_corollary31(variant).proved
        bad = exact.prove_corollary31(variant, plant=True)
        assert not bad.proved and "S1_1 - S2_1" in bad.first_nonzero()[1]


def test_corollary31_holds_and_a_data_reading_scale_update_is_refuted():
    good = check_corollary31(5, seed=0)
    assert [v.verdict for v in good] == ["holds", "holds"]
    assert all(v.evidence["basis"]["upper"]["value"] == 0 and "as transcribed" in v.sentence
               and "dp_step" in v.sentence for v in good)
    bad = check_corollary31(5, seed=0, plant=True)
    assert [v.verdict for v in bad] == ["refuted", "refuted"]
    assert all(v.evidence["basis"]["lower"]["value"] > 0 for v in bad)


def test_without_certify_the_search_decides_alone():
    assert [v.verdict for v in check_aligned_identity(5, seed=0, certify=False)] == [
        "inconclusive", "inconclusive"]
