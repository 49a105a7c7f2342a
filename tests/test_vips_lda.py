"""Tests of online VB / VIPS for LDA (dpclaims.algorithms.vips.lda) and the corpus loaders."""

from __future__ import annotations

import bz2
import math
from pathlib import Path

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import psi

from dpclaims.algorithms.vips.lda import (
    VIPSLDA,
    as_count_matrix,
    clip_document_statistics,
    lda_expected_statistics,
    perplexity_bound,
    resample_documents,
)
from dpclaims.algorithms.vips.step import VIPSLDAStep, lda_step_mechanism
from dpclaims.audits.mechanism import draw_release, replace_one, validate_mechanism
from dpclaims.data.wikipedia import (
    load_wikipedia,
    read_vocabulary,
    tiny_corpus,
    tokenize,
)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_wikipedia = pytest.mark.skipif(
    not (SHARED_DATA / "wikipedia" / "vocabulary_vips.txt").is_file(),
    reason=f"shared Wikipedia data not found at {SHARED_DATA / 'wikipedia'}",
)


def elog_dirichlet(param):
    return psi(param) - psi(param.sum(axis=-1, keepdims=True))


def direct_statistics(counts, lam, alpha, iters=2000):
    """Token-by-token mean-field E-step (eq. 26, gamma update) and s_bar^d (Sec. 4.2)."""
    counts = np.asarray(counts)
    s_docs, k = counts.shape[0], lam.shape[0]
    elog_beta = elog_dirichlet(lam)
    out = np.zeros((s_docs, k, lam.shape[1]))
    gammas = []
    for d in range(s_docs):
        tokens = np.repeat(np.arange(counts.shape[1]), counts[d])
        gamma = np.full(k, alpha + tokens.size / k)
        for _ in range(iters):
            logits = elog_beta[:, tokens].T + elog_dirichlet(gamma)  # (N_d, K)
            phi = np.exp(logits - logits.max(axis=1, keepdims=True))
            phi /= phi.sum(axis=1, keepdims=True)
            gamma = alpha + phi.sum(axis=0)
        for n, v in enumerate(tokens):
            out[d, :, v] += phi[n] / s_docs
        gammas.append(gamma)
    return out, np.array(gammas)


# --------------------------------------------------------------------------- E-step


def test_expected_statistics_match_direct_computation_on_two_documents():
    lam = np.array([[5.0, 1.0, 0.5, 2.0], [0.7, 3.0, 4.0, 1.0]])
    counts = np.array([[3, 0, 1, 2], [0, 2, 5, 1]])
    per_doc, gamma = lda_expected_statistics(counts, lam, 0.3, per_document=True,
                                             max_iter=5000, tol=1e-13)
    want, want_gamma = direct_statistics(counts, lam, 0.3)
    np.testing.assert_allclose(per_doc, want, atol=1e-10)
    np.testing.assert_allclose(gamma, want_gamma, rtol=1e-9)
    total, gamma2 = lda_expected_statistics(sp.csr_matrix(counts), lam, 0.3, max_iter=5000,
                                            tol=1e-13)
    np.testing.assert_allclose(total, per_doc.sum(axis=0), atol=1e-14)
    np.testing.assert_allclose(gamma2, gamma)
    # each document's contribution has L1 norm N_d / S (sum_k phi = 1 for each token)
    np.testing.assert_allclose(per_doc.sum(axis=(1, 2)), counts.sum(axis=1) / 2, rtol=1e-12)
    # a document's contribution does not depend on the other documents of the batch
    alone, _ = lda_expected_statistics(counts[1:], lam, 0.3, per_document=True,
                                       max_iter=5000, tol=1e-13)
    np.testing.assert_allclose(alone[0], 2 * per_doc[1], rtol=1e-12)
    # support only on the document's word types
    assert np.all(per_doc[0][:, 1] == 0) and np.all(per_doc[1][:, 0] == 0)


# --------------------------------------------------------------------------- clipping


def test_clipping_reproduces_the_papers_worked_example():
    # Sec. 4.2: N = V = K = 2, S = 1, a = 0.1, s^d = [[1, 0], [1, 0]] -> 0.2/sqrt(2) s^d
    s = np.array([[[1.0, 0.0], [1.0, 0.0]]])
    clipped, norms = clip_document_statistics(s, 0.1 * 2 / 1)
    assert norms[0] == pytest.approx(math.sqrt(2))
    np.testing.assert_allclose(clipped, 0.2 / math.sqrt(2) * s, rtol=1e-15)
    assert np.linalg.norm(clipped[0]) == pytest.approx(0.2, rel=1e-14)


def test_clipping_bound_holds_and_leaves_small_documents_unchanged():
    rng = np.random.default_rng(3)
    corpus = tiny_corpus(1, n_documents=40, document_length=50)
    lam = rng.gamma(1.0, 1.0, (3, 30)) + 0.1
    s_docs, n_len, a = 20, 50, 0.1
    counts = resample_documents(corpus.train[:s_docs], n_len, rng)
    per_doc, _ = lda_expected_statistics(counts, lam, 0.2, per_document=True)
    bound = a * n_len / s_docs
    clipped, norms = clip_document_statistics(per_doc, bound)
    after = np.sqrt((clipped ** 2).sum(axis=(1, 2)))
    assert np.all(after <= bound * (1 + 1e-12))
    assert np.all(norms <= n_len / s_docs * (1 + 1e-12))  # unclipped worst case N / S
    small = norms <= bound
    np.testing.assert_array_equal(clipped[small], per_doc[small])
    np.testing.assert_allclose(after[~small], bound, rtol=1e-12)
    # a generous threshold clips nothing
    same, _ = clip_document_statistics(per_doc, 10 * n_len / s_docs)
    np.testing.assert_array_equal(same, per_doc)


def test_resampling_gives_exactly_n_tokens_from_the_documents_support():
    rng = np.random.default_rng(0)
    counts = sp.csr_matrix(np.array([[5, 0, 1, 0], [0, 0, 0, 0], [0, 2, 0, 7]]))
    out = resample_documents(counts, 500, rng)
    np.testing.assert_array_equal(np.asarray(out.sum(axis=1)).ravel(), [500, 0, 500])
    assert np.all((out.toarray() > 0) <= (counts.toarray() > 0))
    # frequencies follow the document's own word distribution (binomial, 5 sd)
    assert abs(out[0, 0] - 500 * 5 / 6) < 5 * math.sqrt(500 * 5 / 36)


# --------------------------------------------------------------------------- SVI


def test_online_vb_recovers_the_topics_of_a_tiny_corpus_and_perplexity_improves():
    corpus = tiny_corpus(0)
    alg = VIPSLDA(n_topics=3, batch_size=30, n_iterations=200, alpha=0.2, eta=0.01,
                  tau0=1.0, kappa=0.7)
    run = alg.run(corpus.train, seed=1, held_out=corpus.held_out, eval_every=50)
    tv = 0.5 * np.abs(run.topics[:, None, :] - corpus.topics[None]).sum(axis=-1)
    rows, cols = linear_sum_assignment(tv)
    # Tolerance: 240 training documents x 60 tokens = 14,400 tokens, ~4,800 per topic
    # over 10 main words; the multinomial sampling error alone gives a total-variation
    # distance of about 0.5 * 10 * sqrt(0.1 * 0.9 / 4800) ~= 0.02 (observed ~0.03 with
    # the eta smoothing). 0.08 leaves room for that and fails for any mixed-up topic
    # (two merged block topics are at TV >= 0.45 from a true one).
    assert tv[rows, cols].max() < 0.08
    assert run.perplexity[-1] < 0.5 * run.perplexity[0]
    assert run.perplexity_iterations.tolist() == [0, 50, 100, 150, 200]
    # near the generating model's own per-word perplexity on the held-out documents
    true_lam = corpus.topics * 1e6
    true_perp = perplexity_bound(corpus.held_out, true_lam, 0.2)
    assert run.perplexity[-1] < 1.05 * true_perp
    np.testing.assert_allclose(run.rho, (1.0 + np.arange(1, 201)) ** -0.7)
    # minibatches: S distinct documents each iteration
    assert all(len(set(b)) == 30 for b in run.batches)
    assert np.all(run.n_clipped == 0) and run.info["noise_std"] == 0.0


def test_perplexity_bound_one_topic_closed_form():
    # K = 1: phi = 1 and E[log theta] = 0, so the bound is exp(-sum n_v E[log beta_v] / sum n)
    lam = np.array([[2.0, 5.0, 1.0]])
    held = np.array([[1, 3, 0], [2, 0, 4]])
    elog_beta = elog_dirichlet(lam)[0]
    want = math.exp(-(held.sum(axis=0) @ elog_beta) / held.sum())
    assert perplexity_bound(held, lam, 0.5) == pytest.approx(want, rel=1e-12)
    with_topic = perplexity_bound(held, lam, 0.5, 0.1, n_train_documents=10)
    assert with_topic > 0 and with_topic != pytest.approx(want)


# --------------------------------------------------------------------------- private runs


def test_private_run_noise_scale_and_negative_map():
    corpus = tiny_corpus(2, n_documents=60, document_length=40)
    alg = VIPSLDA(n_topics=3, batch_size=20, n_iterations=6, doc_length=40,
                  noise_multiplier=1.5, clip_fraction=0.1, alpha=0.2, eta=0.01, tau0=1.0)
    run = alg.run(corpus.train, seed=5)
    assert alg.noise_std() == pytest.approx(1.5 * 0.1 * 40 / 20)
    assert run.n_clipped.sum() > 0 and run.n_negative.sum() > 0
    resampled = resample_documents(
        corpus.train, 40, np.random.default_rng(np.random.SeedSequence(5).spawn(4)[1]))
    residuals = []
    for t in range(6):
        step = lda_step_mechanism(alg, run.lambdas[t])
        q = step.query(resampled[run.batches[t]].toarray())
        residuals.append(run.released[t].ravel() - q)
        # M-step with negatives mapped to 0 (Algorithm 3)
        lam_hat = 0.01 + run.info["n_documents"] * np.maximum(run.released[t], 0.0)
        np.testing.assert_allclose(run.lambdas[t + 1],
                                   (1 - run.rho[t]) * run.lambdas[t] + run.rho[t] * lam_hat)
    res = np.concatenate(residuals)  # 6 x 90 noise draws
    assert abs(res.mean()) < 4 * alg.noise_std() / math.sqrt(res.size)
    assert res.std() == pytest.approx(alg.noise_std(), rel=0.15)


def test_replace_one_calibration_scales_noise_by_sqrt2():
    a = VIPSLDA(3, 10, 1, doc_length=100, noise_multiplier=1.0, clip_fraction=0.1)
    b = VIPSLDA(3, 10, 1, doc_length=100, noise_multiplier=1.0, clip_fraction=0.1,
                calibration="replace-one")
    assert a.claimed_sensitivity() == pytest.approx(1.0)
    assert a.true_sensitivity_bound("add-remove") == pytest.approx(1.0)
    assert b.noise_std() == pytest.approx(math.sqrt(2) * a.noise_std())
    no_clip = VIPSLDA(3, 10, 1, doc_length=100, noise_multiplier=1.0)
    assert no_clip.claimed_sensitivity() == pytest.approx(10.0)  # eq. 28: N / S
    s = a.sampling(200)
    assert s.sampling_rate == pytest.approx(0.05) and s.kind == "without-replacement"


# --------------------------------------------------------------------------- mechanism


def small_step(**kw):
    rng = np.random.default_rng(0)
    lam = rng.gamma(2.0, 1.0, (2, 5)) + 0.1
    args = dict(lambda_=lam, alpha=0.5, doc_length=10, batch_size=4, noise_multiplier=1.2,
                clip_fraction=0.1, delta=1e-5)
    args.update(kw)
    return VIPSLDAStep(**args)


def minibatch():
    return np.array([[4, 3, 0, 2, 1], [0, 0, 10, 0, 0], [1, 1, 1, 1, 6], [2, 2, 2, 2, 2]])


def test_step_mechanism_follows_the_protocol_and_claims_the_gaussian_epsilon():
    caps = validate_mechanism(small_step())
    step = caps.source
    out = draw_release(caps, minibatch(), np.random.default_rng(1), 20000)
    assert out.shape == (20000, 10)
    q = step.query(minibatch())
    assert q.shape == (10,)
    np.testing.assert_allclose(out.mean(axis=0), q, atol=5 * step.noise_std / math.sqrt(20000))
    np.testing.assert_allclose(out.std(axis=0), step.noise_std, rtol=0.05)
    assert step.noise_std == pytest.approx(1.2 * 0.1 * 10 / 4)
    assert step.claim.relation == "replace-one"
    assert step.claim.epsilon == pytest.approx(dp_accounting.get_epsilon_gaussian(1.2, 1e-5))
    assert step.sensitivity.value == pytest.approx(0.1 * 10 / 4) and step.sensitivity.norm == 2
    nonneg = small_step(nonnegative=True).release(minibatch(), np.random.default_rng(1), 50)
    assert nonneg.min() >= 0.0
    # the query is deterministic and every clipped document has norm <= a N / S
    np.testing.assert_array_equal(step.query(minibatch()), q)


def test_papers_sensitivity_is_exceeded_by_sqrt2_under_replace_one():
    """Eq. 74 / Sec. 4.2 claim a N / S; two one-word documents of different types give sqrt(2) x."""
    step = small_step()
    data = minibatch()
    doc_a = np.array([10, 0, 0, 0, 0])
    doc_b = np.array([0, 10, 0, 0, 0])
    pair = replace_one(data, 0, doc_b, baseline_record=doc_a)
    dist = step.sensitivity.distance(step.query(pair.d0), step.query(pair.d1))
    claimed = step.sensitivity.value
    assert dist == pytest.approx(math.sqrt(2) * claimed, rel=1e-9)
    assert dist > claimed
    # ... and sqrt(2) a N / S is a bound: random replacements never exceed it
    rng = np.random.default_rng(7)
    for _ in range(30):
        rec = rng.multinomial(10, rng.dirichlet(np.full(5, 0.3)))
        d1 = step.query(replace_one(data, 2, rec).d1)
        assert np.linalg.norm(d1 - step.query(data)) <= math.sqrt(2) * claimed * (1 + 1e-9)
    fixed = small_step(calibration="replace-one")
    assert fixed.sensitivity.value == pytest.approx(dist, rel=1e-9)
    assert fixed.noise_std == pytest.approx(math.sqrt(2) * step.noise_std)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "counts, match",
    [
        (np.array([[1, -1]]), "non-negative integer"),
        (np.array([[1.5, 0]]), "non-negative integer"),
        (np.array([[np.nan, 0]]), "non-finite"),
        (np.array([1, 2]), "two-dimensional"),
    ],
)
def test_bad_counts_raise(counts, match):
    with pytest.raises(ValueError, match=match):
        as_count_matrix(counts)


def test_bad_arguments_raise_value_errors():
    lam = np.ones((2, 3))
    with pytest.raises(ValueError, match="lambda_"):
        lda_expected_statistics([[1, 0, 0]], np.array([[1.0, 0.0, 1.0]]), 0.1)
    with pytest.raises(ValueError, match="columns"):
        lda_expected_statistics([[1, 0]], lam, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        lda_expected_statistics([[1, 0, 0]], lam, 0.0)
    with pytest.raises(ValueError, match="clip_norm"):
        clip_document_statistics(np.ones((1, 2, 3)), -1.0)
    with pytest.raises(ValueError, match=">= 0"):
        clip_document_statistics(-np.ones((1, 2, 3)), 1.0)
    with pytest.raises(ValueError, match="clip_fraction"):
        VIPSLDA(2, 5, 3, doc_length=10, clip_fraction=0.0)
    with pytest.raises(ValueError, match="clip_fraction"):
        VIPSLDA(2, 5, 3, doc_length=10, clip_fraction=1.5)
    with pytest.raises(ValueError, match="doc_length"):
        VIPSLDA(2, 5, 3, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        VIPSLDA(2, 5, 3, doc_length=10, noise_multiplier=-1.0)
    with pytest.raises(ValueError, match="kappa"):
        VIPSLDA(2, 5, 3, kappa=0.0)
    with pytest.raises(ValueError, match="calibration"):
        VIPSLDA(2, 5, 3, calibration="add-remove")
    with pytest.raises(ValueError, match="batch_size S=5 exceeds"):
        VIPSLDA(2, 5, 3).run(np.ones((4, 3)))
    with pytest.raises(ValueError, match="no tokens"):
        perplexity_bound(np.zeros((2, 3)), lam, 0.1)
    with pytest.raises(ValueError, match="eta"):
        perplexity_bound(np.ones((2, 3)), lam, 0.1, n_train_documents=5)
    with pytest.raises(ValueError, match="rows"):
        small_step().query(minibatch()[:3])
    with pytest.raises(ValueError, match="more than doc_length"):
        small_step().query(minibatch() * 2)
    with pytest.raises(ValueError, match="no privacy claim"):
        lda_step_mechanism(VIPSLDA(2, 5, 3), lam)
    with pytest.raises(ValueError, match="multiple of n_topics"):
        tiny_corpus(0, vocabulary_size=31)


# --------------------------------------------------------------------------- loaders

PAGE = """<page><title>{title}</title><ns>{ns}</ns><id>1</id>{extra}
<revision><text xml:space="preserve">{text}</text></revision></page>"""


def write_export(folder: Path, pages, vocabulary=("apple", "banana", "none")):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocabulary_vips.txt").write_text("\n".join(vocabulary) + "\n")
    body = "".join(PAGE.format(**p) for p in pages)
    xml = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">'
           f"{body}</mediawiki>")
    (folder / "pages.xml.bz2").write_bytes(bz2.compress(xml.encode()))


def test_loader_parses_an_export_with_the_standard_library(tmp_path):
    pages = [
        dict(title="Fruit", ns=0, extra="", text="Apple, apple; BANANA-split! None [[x]]"),
        dict(title="Redirect", ns=0, extra='<redirect title="Fruit" />', text="#REDIRECT apple"),
        dict(title="Talk", ns=1, extra="", text="apple apple"),
        dict(title="Empty", ns=0, extra="", text="cherry only"),
        dict(title="Second", ns=0, extra="", text="banana"),
    ]
    write_export(tmp_path / "wikipedia", pages, vocabulary=("apple", "banana", "None"))
    corpus = load_wikipedia(tmp_path, held_out_fraction=0.0)
    assert corpus.vocabulary == ("apple", "banana", "none")
    assert corpus.train_titles == ("Fruit", "Second")
    np.testing.assert_array_equal(corpus.train.toarray(), [[2, 1, 1], [0, 1, 0]])
    assert corpus.held_out.shape == (0, 3)
    assert "1 article(s) with no in-vocabulary token dropped" in corpus.preprocessing
    assert tokenize("Don't x-ray") == ["don", "t", "x", "ray"]


def test_loader_errors_name_the_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "nowhere" / "wikipedia")):
        load_wikipedia(tmp_path / "nowhere")
    (tmp_path / "wikipedia").mkdir()
    with pytest.raises(FileNotFoundError, match="vocabulary_vips.txt"):
        load_wikipedia(tmp_path)
    (tmp_path / "wikipedia" / "vocabulary_vips.txt").write_text("apple\n")
    with pytest.raises(FileNotFoundError, match=r"\*\.bz2"):
        load_wikipedia(tmp_path)
    with pytest.raises(ValueError, match="held_out_fraction"):
        load_wikipedia(tmp_path, held_out_fraction=1.0)
    with pytest.raises(ValueError, match="duplicate"):
        read_vocabulary(["apple", "Apple"])
    with pytest.raises(ValueError, match="letters"):
        read_vocabulary(["apple pie"])


@needs_wikipedia
def test_load_wikipedia_excerpt():
    corpus = load_wikipedia(SHARED_DATA, max_documents=20, held_out_fraction=0.25, seed=3)
    assert corpus.vocabulary_size == 7702 and corpus.vocabulary[0] == "writings"
    assert corpus.train.shape == (15, 7702) and corpus.held_out.shape == (5, 7702)
    assert isinstance(corpus.train, sp.csr_matrix) and corpus.train.dtype == np.int64
    assert np.all(np.asarray(corpus.train.sum(axis=1)) > 0)
    assert len(corpus.train_titles) == 15 and "Anarchism" in (corpus.train_titles
                                                             + corpus.held_out_titles)
    # a short private run on the real vocabulary goes through (K x V = 3 x 7702)
    alg = VIPSLDA(3, 5, 2, doc_length=100, noise_multiplier=1.0, clip_fraction=0.1)
    run = alg.run(corpus.train, seed=0, held_out=corpus.held_out, keep_trace=False)
    assert run.released is None and np.all(np.isfinite(run.perplexity))
