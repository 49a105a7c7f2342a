"""Online VB for LDA (Hoffman et al. 2010) and its private version, VIPS-LDA (Algorithm 3).

References: Park, Foulds, Chaudhuri & Welling, "Variational Bayes In Private
Settings (VIPS)", Sec. 4 (LDA), Algorithm 2 (generic private VIPS), Algorithm 3
(VIPS for LDA), Appendix Sec. 2 (eq. 74); Hoffman, Bach & Blei (2010), "Online
learning for latent Dirichlet allocation"; Blei, Ng & Jordan (2003).

Notation (the paper's Table 2)
------------------------------
D documents, V vocabulary words, K topics, minibatch of S documents, N = the
fixed document length: "we preprocess all documents to have the same fixed
length N. We accomplish this by sampling N words with replacement from each
document's bag of words. In our experiments, we use N = 500" (Sec. 4.2). So N
is neither the corpus size nor a data-dependent maximum: it is a public
constant, every (resampled) document has exactly N tokens
(:func:`resample_documents`), and a document's contribution has L1 norm N/S.

The E-step (eq. 26 and the gamma update) runs per document behind the privacy
wall; the expected sufficient statistics of the minibatch are
``s_bar[k, v] = (1/S) sum_d sum_n phi_dn^k w_dn^v`` (eq. 27), a sum of
per-document K x V contributions s_bar^d. Their norm ``|s_bar^d|`` is the
Frobenius (L2 over all K V entries) norm: eq. 28 writes the sensitivity as
``sqrt(sum_k sum_v (...)^2)`` and the worked example has
``|s_bar^d| = sqrt(2) ~= 1.41`` for the 2 x 2 matrix [[1, 0], [1, 0]].

Private step (Algorithm 3): clip each s_bar^d to Frobenius norm a N / S (eq. 29),
sum, add N(0, sigma^2 (a N / S)^2) to every entry ("Gaussian noise given in
Eq. 27, but using clipped sensitivity a N/S"), release that, then "Clip negative
entries of s~ to 0" and take the M-step ``lambda_hat = eta + D s~``, ``lambda <-
(1 - rho_t) lambda + rho_t lambda_hat`` with ``rho_t = (tau0 + t)^(-kappa)``. The
minibatch is drawn without replacement each iteration ("Draw a minibatch of S
documents, without replacement"), independently across iterations.

The sensitivity reading (why :class:`VIPSLDA` has a ``calibration``)
--------------------------------------------------------------------
The paper assumes replace-one neighbours (Sec. 2.1) and states the clipped
sensitivity a N / S ("the sensitivity of the clipped expected sufficient
statistics matrix becomes a Delta s_bar (i.e., a N/S)"). Eq. 74's step "the
worst case per k, v entry is where one of the terms is 0" bounds each entry of
s^S - s'^S separately, then takes the maximum over one document only; the
worst cases of different entries come from different documents. Two clipped
contributions with disjoint supports (e.g. two documents of one repeated word
type each, different types) have ``|c - c'| = sqrt(|c|^2 + |c'|^2) = sqrt(2) a
N / S``; since all entries are >= 0, ``<c, c'> >= 0`` and this is also the
maximum. So under replace-one the L2 sensitivity is sqrt(2) a N / S (and
sqrt(2) N / S without clipping); a N / S holds under add-remove with the 1/S
normalisation held fixed. ``calibration="paper"`` uses a N / S as printed,
``"replace-one"`` calibrates the noise to sqrt(2) a N / S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, psi

from dpclaims.analysis.accounting import Sampling
from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
    check_probability,
)
from dpclaims.analysis.vocabulary import RELATIONS, check_relation  # noqa: F401

CALIBRATIONS = ("paper", "replace-one")


# --------------------------------------------------------------------------- checks


def as_count_matrix(counts, name: str = "counts", vocabulary_size: int | None = None):
    """``counts`` (D, V), dense or ``scipy.sparse``, as a float64 CSR matrix, checked.

    Raises
    ------
    ValueError
        Not two-dimensional, a NaN / infinite / negative / non-integer entry
        (naming the first one), or V different from ``vocabulary_size``.
    """
    if sp.issparse(counts):
        mat = sp.csr_matrix(counts, dtype=float)
        mat.sum_duplicates()
        values = mat.data
        if mat.ndim != 2:
            raise ValueError(f"{name} must be two-dimensional (D, V), got shape {mat.shape}")
    else:
        arr = np.asarray(counts)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be two-dimensional (D, V), got shape {arr.shape}")
        arr = check_finite_array(arr, name, ndim=2)
        mat = sp.csr_matrix(arr)
        values = arr.ravel()
    bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
    if bad.any():
        first = values[np.flatnonzero(bad)[0]]
        raise ValueError(f"{name} must hold non-negative integer word counts; found "
                         f"{int(bad.sum())} bad value(s), e.g. {first!r}")
    if vocabulary_size is not None and mat.shape[1] != vocabulary_size:
        raise ValueError(f"{name} has {mat.shape[1]} columns but lambda_ has {vocabulary_size} "
                         "(vocabulary size V)")
    mat.eliminate_zeros()
    mat.sort_indices()
    return mat


def _check_lambda(lambda_) -> np.ndarray:
    lam = check_finite_array(lambda_, "lambda_", ndim=2)
    if lam.size == 0 or (lam <= 0).any():
        bad = lam[lam <= 0]
        raise ValueError(f"lambda_ (K, V) must be non-empty with entries > 0, got shape "
                         f"{lam.shape}" + (f" and value {bad[0]!r}" if bad.size else ""))
    return lam


def _dirichlet_expectation(param: np.ndarray) -> np.ndarray:
    """E[log x] under Dirichlet(param), row-wise: psi(param) - psi(sum param)."""
    return psi(param) - psi(param.sum(axis=-1, keepdims=True))


# --------------------------------------------------------------------------- E-step


def _e_step(counts: sp.csr_matrix, exp_elog_beta: np.ndarray, alpha: float, max_iter: int,
            tol: float):
    """Vectorised variational E-step (eq. 26 and the gamma update) for all documents.

    Returns gamma (S, K), contrib (nnz, K) with contrib[j, k] = n_dv phi_dv^k for
    the j-th non-zero (d, v) of ``counts``, the row index of each non-zero, the
    number of sweeps, and Elog theta (S, K).
    """
    n_docs = counts.shape[0]
    k_topics = exp_elog_beta.shape[0]
    rows = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
    cols, cts = counts.indices, counts.data
    eb = exp_elog_beta[:, cols].T  # (nnz, K)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    # Blei et al. (2003) initialisation, deterministic: gamma_dk = alpha + N_d / K.
    gamma = np.repeat((alpha + lengths / k_topics)[:, None], k_topics, axis=1)
    # Each document stops at its own convergence (as in Hoffman et al.'s per-document
    # loop): a joint stopping rule would make one document's statistics depend on the
    # others' and break the per-document sensitivity argument.
    active = np.ones(n_docs, dtype=bool)
    sweeps = 0
    for _ in range(max_iter):
        sweeps += 1
        elog_theta = _dirichlet_expectation(gamma)
        et = np.exp(elog_theta)
        phinorm = np.einsum("nk,nk->n", et[rows], eb) + 1e-100
        ratio = sp.csr_matrix((cts / phinorm, cols, counts.indptr), shape=counts.shape)
        new_gamma = alpha + et * (ratio @ exp_elog_beta.T)
        change = np.abs(new_gamma - gamma).mean(axis=1)
        gamma = np.where(active[:, None], new_gamma, gamma)
        active &= change >= tol
        if not active.any():
            break
    elog_theta = _dirichlet_expectation(gamma)
    et = np.exp(elog_theta)
    weights = et[rows] * eb  # unnormalised phi (nnz, K)
    phinorm = weights.sum(axis=1) + 1e-100
    contrib = weights * (cts / phinorm)[:, None]
    return gamma, contrib, rows, sweeps, elog_theta, np.log(phinorm)


def _sum_over_documents(contrib: np.ndarray, cols: np.ndarray, vocabulary_size: int):
    """(K, V) matrix sum_j contrib[j] placed at column cols[j]."""
    nnz = cols.size
    scatter = sp.csr_matrix((np.ones(nnz), (cols, np.arange(nnz))), shape=(vocabulary_size, nnz))
    return np.asarray((scatter @ contrib).T)


def _document_norms(contrib: np.ndarray, rows: np.ndarray, n_docs: int) -> np.ndarray:
    return np.sqrt(np.bincount(rows, weights=np.einsum("nk,nk->n", contrib, contrib),
                               minlength=n_docs))


def _clip_factors(norms: np.ndarray, clip_norm: float) -> np.ndarray:
    """Eq. 29: scale min(1, clip_norm / |s^d|) per document (1 for a zero contribution)."""
    safe = np.where(norms > 0, norms, 1.0)
    return np.where(norms > clip_norm, clip_norm / safe, 1.0)


def lda_expected_statistics(counts, lambda_, alpha: float, *, per_document: bool = False,
                            max_iter: int = 100, tol: float = 1e-3):
    """Expected sufficient statistics of LDA for a minibatch (eq. 27), and gamma.

    For each document the mean-field E-step alternates eq. 26,
    ``phi_dn^k ∝ exp(E[log beta_kv] + E[log theta_dk])`` for the word v of token n,
    and ``gamma_d = alpha 1_K + sum_n phi_dn`` until the mean absolute change of
    gamma_d is below ``tol`` for every document (Hoffman et al. 2010's criterion,
    applied to all documents jointly), starting from gamma_dk = alpha + N_d / K.
    All documents advance together; phi is never stored per token (tokens of one
    word type share phi).

    Parameters
    ----------
    counts : array or scipy.sparse matrix, shape (S, V)
        Word counts of the S minibatch documents.
    lambda_ : ndarray, shape (K, V)
        Variational Dirichlet parameters of the topics, entries > 0.
    alpha : float
        Dirichlet hyperparameter of the topic proportions, > 0.
    per_document : bool
        Return the per-document contributions s_bar^d (S, K, V) instead of their sum.
    max_iter : int
        Maximum E-step sweeps.
    tol : float
        Convergence threshold on the mean absolute change of gamma_d.

    Returns
    -------
    stats : ndarray, shape (K, V), or (S, K, V) if ``per_document``
        ``s_bar[k, v] = (1/S) sum_d sum_n phi_dn^k w_dn^v`` (eq. 27), or its terms
        ``s_bar^d[k, v] = (1/S) sum_n phi_dn^k w_dn^v`` (Sec. 4.2); the sum over k
        and v of s_bar^d is N_d / S.
    gamma : ndarray, shape (S, K)
        Variational Dirichlet parameters of the documents' topic proportions.

    Raises
    ------
    ValueError
        Bad counts (see :func:`as_count_matrix`), ``lambda_`` not (K, V) with
        positive finite entries, a vocabulary mismatch, alpha <= 0, S = 0.
    """
    lam = _check_lambda(lambda_)
    mat = as_count_matrix(counts, "counts", vocabulary_size=lam.shape[1])
    alpha = check_positive(alpha, "alpha")
    max_iter = check_count(max_iter, "max_iter")
    tol = check_positive(tol, "tol")
    n_docs = mat.shape[0]
    if n_docs < 1:
        raise ValueError("counts has no documents (S = 0)")
    exp_elog_beta = np.exp(_dirichlet_expectation(lam))
    gamma, contrib, rows, _, _, _ = _e_step(mat, exp_elog_beta, alpha, max_iter, tol)
    contrib = contrib / n_docs
    if per_document:
        out = np.zeros((n_docs, lam.shape[0], lam.shape[1]))
        out[rows, :, mat.indices] = contrib
        return out, gamma
    return _sum_over_documents(contrib, mat.indices, lam.shape[1]), gamma


def clip_document_statistics(per_document, clip_norm: float):
    """Project each per-document contribution onto the Frobenius ball of radius ``clip_norm``.

    Eq. 29 / Algorithm 3: "``if |s_bar^d| > aN/S then s_bar^d := (aN/S) s_bar^d /
    |s_bar^d|``", with ``|.|`` the Frobenius norm of the K x V matrix and clip_norm =
    a N / S. Contributions inside the ball are unchanged.

    Parameters
    ----------
    per_document : ndarray, shape (S, K, V)
        Per-document contributions s_bar^d, entries >= 0.
    clip_norm : float
        a N / S > 0.

    Returns
    -------
    clipped : ndarray, shape (S, K, V)
    norms : ndarray, shape (S,)
        Frobenius norms before clipping (clipped documents: norms > clip_norm).

    Raises
    ------
    ValueError
        Not three-dimensional, a non-finite or negative entry, clip_norm <= 0.
    """
    stats = check_finite_array(per_document, "per_document", ndim=3)
    if (stats < 0).any():
        raise ValueError(f"per_document statistics must be >= 0, found {stats[stats < 0][0]!r}")
    clip_norm = check_positive(clip_norm, "clip_norm")
    norms = np.sqrt(np.einsum("skv,skv->s", stats, stats))
    return stats * _clip_factors(norms, clip_norm)[:, None, None], norms


def resample_documents(counts, doc_length: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Resample every document to exactly ``doc_length`` tokens, with replacement (Sec. 4.2).

    "we preprocess all documents to have the same fixed length N. We accomplish
    this by sampling N words with replacement from each document's bag of
    words." Token j of document d is a uniform draw from d's tokens, i.e. row d
    becomes Multinomial(N, n_d / sum(n_d)). All documents in one vectorised draw
    (memory D x N integers). An empty document (no in-vocabulary token) stays
    empty, as in the authors' preprocessing script; its contribution is 0.

    Parameters
    ----------
    counts : array or scipy.sparse matrix, shape (D, V)
    doc_length : int >= 1
        N.
    rng : numpy.random.Generator

    Returns
    -------
    scipy.sparse.csr_matrix, shape (D, V), float64 counts; non-empty rows sum to N.

    Raises
    ------
    ValueError
        Bad counts or doc_length.
    """
    mat = as_count_matrix(counts, "counts")
    n = check_count(doc_length, "doc_length")
    lengths = np.asarray(mat.sum(axis=1)).ravel().astype(np.int64)
    keep = np.flatnonzero(lengths > 0)
    cum = np.cumsum(mat.data.astype(np.int64))  # token positions, document after document
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = starts[keep, None] + np.floor(rng.random((keep.size, n)) * lengths[keep, None]).astype(
        np.int64)
    entry = np.searchsorted(cum, pos, side="right")
    out = sp.csr_matrix((np.ones(entry.size), (np.repeat(keep, n), mat.indices[entry.ravel()])),
                        shape=mat.shape)
    out.sum_duplicates()
    out.sort_indices()
    return out


# --------------------------------------------------------------------------- perplexity


def perplexity_bound(held_out, lambda_, alpha: float, eta: float | None = None, *,
                     n_train_documents: int | None = None, max_iter: int = 100,
                     tol: float = 1e-3) -> float:
    """Per-word perplexity upper bound on held-out documents (eq. 32; Hoffman et al. 2010).

    Runs the E-step on ``held_out`` at fixed ``lambda_`` ("performing the first
    step in our algorithm using the test data") and returns

        exp( -sum_d ELBO_d / sum_{d,v} n_dv ),

    ELBO_d = sum_v n_dv log sum_k exp(E[log theta_dk] + E[log beta_kv])
             + sum_k (alpha - gamma_dk) E[log theta_dk] + gammaln(gamma_dk) - gammaln(alpha)
             + gammaln(K alpha) - gammaln(sum_k gamma_dk),

    the per-document terms of Hoffman et al.'s ``approx_bound`` (phi at its
    optimum given gamma). Eq. 32 conditions on lambda and has no topic term;
    with ``n_train_documents`` = D the topic term of Hoffman et al.'s code,
    sum_k [sum_v (eta - lambda_kv) E[log beta_kv] + gammaln(lambda_kv) - gammaln(eta)
    + gammaln(V eta) - gammaln(sum_v lambda_kv)], is added with weight
    D_held_out / D, as their ``onlinewikipedia.py`` does.

    Parameters
    ----------
    held_out : array or scipy.sparse matrix, shape (I, V)
    lambda_ : ndarray, shape (K, V)
    alpha : float > 0
    eta : float > 0, optional
        Needed only with ``n_train_documents``.
    n_train_documents : int, optional
    max_iter, tol : E-step controls (:func:`lda_expected_statistics`).

    Returns
    -------
    float
        The perplexity bound in nats-based units (>= 1 up to the looseness of the bound).

    Raises
    ------
    ValueError
        Bad inputs, no held-out tokens, or ``n_train_documents`` without ``eta``.
    """
    lam = _check_lambda(lambda_)
    mat = as_count_matrix(held_out, "held_out", vocabulary_size=lam.shape[1])
    alpha = check_positive(alpha, "alpha")
    total = float(mat.sum())
    if total <= 0:
        raise ValueError("held_out has no tokens: the per-word perplexity is undefined")
    k_topics = lam.shape[0]
    elog_beta = _dirichlet_expectation(lam)
    gamma, _, _, _, elog_theta, log_phinorm = _e_step(
        mat, np.exp(elog_beta), alpha, check_count(max_iter, "max_iter"),
        check_positive(tol, "tol"))
    score = float(mat.data @ log_phinorm)
    score += float(np.sum((alpha - gamma) * elog_theta + gammaln(gamma) - gammaln(alpha)))
    score += float(np.sum(gammaln(alpha * k_topics) - gammaln(gamma.sum(axis=1))))
    if n_train_documents is not None:
        if eta is None:
            raise ValueError("n_train_documents needs eta (the topic term uses the prior)")
        eta = check_positive(eta, "eta")
        d_train = check_count(n_train_documents, "n_train_documents")
        topic = float(np.sum((eta - lam) * elog_beta + gammaln(lam) - gammaln(eta)))
        topic += float(np.sum(gammaln(eta * lam.shape[1]) - gammaln(lam.sum(axis=1))))
        score += topic * mat.shape[0] / d_train
    return math.exp(-score / total)


# --------------------------------------------------------------------------- the algorithm


@dataclass(frozen=True)
class VIPSLDA:
    """Online VB for LDA (noise_multiplier None) or private VIPS-LDA (Algorithm 3).

    Parameters
    ----------
    n_topics : int
        K (the paper: 50).
    batch_size : int
        S documents per iteration, drawn without replacement (the paper:
        5,000 / 10,000 / 20,000).
    n_iterations : int
        J (the paper: one epoch, J = D / S).
    doc_length : int, optional
        N: documents are resampled once to exactly N tokens before training
        (:func:`resample_documents`; the paper: 500). Required when clipping or
        noise is used.
    noise_multiplier : float, optional
        sigma > 0 (the paper: 1.0, 1.1, 1.24, 1.5, 2). None: no noise (SVI).
    clip_fraction : float, optional
        a in (0, 1]: per-document contributions are clipped to Frobenius norm
        a N / S (eq. 29; the paper: 0.1). None: no clipping (a = 1 in the
        sensitivity; the paper's "no clipping" baseline).
    alpha, eta : float
        Dirichlet hyperparameters (not stated in the paper; the authors' code
        uses 1/K for both, the default here when None).
    tau0, kappa : float
        rho_t = (tau0 + t)^(-kappa), t = 1, ..., J (not stated for LDA; the
        authors' code uses tau0 = 1024, kappa = 0.7). kappa in (0, 1].
    calibration : {"paper", "replace-one"}
        Noise std sigma * a N / S as printed, or sigma * sqrt(2) a N / S, the
        replace-one sensitivity (module notes).
    e_step_max_iter, e_step_tol : E-step controls.

    Raises
    ------
    ValueError
        On any parameter outside its range, or clipping / noise without doc_length.
    """

    n_topics: int
    batch_size: int
    n_iterations: int
    doc_length: int | None = None
    noise_multiplier: float | None = None
    clip_fraction: float | None = None
    alpha: float | None = None
    eta: float | None = None
    tau0: float = 1024.0
    kappa: float = 0.7
    calibration: str = "paper"
    e_step_max_iter: int = 100
    e_step_tol: float = 1e-3

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_topics", check_count(self.n_topics, "n_topics"))
        object.__setattr__(self, "batch_size", check_count(self.batch_size, "batch_size"))
        object.__setattr__(self, "n_iterations", check_count(self.n_iterations, "n_iterations"))
        if self.doc_length is not None:
            object.__setattr__(self, "doc_length", check_count(self.doc_length, "doc_length"))
        if self.noise_multiplier is not None:
            check_positive(self.noise_multiplier, "noise_multiplier")
        if self.clip_fraction is not None:
            a = check_probability(self.clip_fraction, "clip_fraction", open_interval=False)
            if a <= 0:
                raise ValueError(f"clip_fraction must lie in (0, 1], got {self.clip_fraction!r}")
        if self.doc_length is None and (self.noise_multiplier is not None
                                        or self.clip_fraction is not None):
            raise ValueError("clipping and noise are calibrated to a N / S: doc_length (N) "
                             "must be set when noise_multiplier or clip_fraction is given")
        for name in ("alpha", "eta"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, 1.0 / self.n_topics)
            else:
                check_positive(getattr(self, name), name)
        tau0 = float(self.tau0)
        if not (math.isfinite(tau0) and tau0 >= 0):
            raise ValueError(f"tau0 must be a finite number >= 0, got {self.tau0!r}")
        kappa = check_probability(self.kappa, "kappa", open_interval=False)
        if kappa <= 0:
            raise ValueError(f"kappa must lie in (0, 1], got {self.kappa!r}")
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {CALIBRATIONS}, got "
                             f"{self.calibration!r}")
        check_count(self.e_step_max_iter, "e_step_max_iter")
        check_positive(self.e_step_tol, "e_step_tol")

    @property
    def private(self) -> bool:
        return self.noise_multiplier is not None

    @property
    def clip_norm(self) -> float | None:
        """a N / S, the per-document Frobenius clipping norm (None without clipping)."""
        if self.clip_fraction is None:
            return None
        return self.clip_fraction * self.doc_length / self.batch_size

    def claimed_sensitivity(self) -> float:
        """The paper's L2 sensitivity of the minibatch statistic: a N / S (eq. 28, Sec. 4.2)."""
        if self.doc_length is None:
            raise ValueError("the sensitivity needs doc_length (N)")
        a = 1.0 if self.clip_fraction is None else self.clip_fraction
        return a * self.doc_length / self.batch_size

    def true_sensitivity_bound(self, relation: str = "replace-one") -> float:
        """Exact L2 sensitivity of the clipped minibatch statistic under ``relation``.

        replace-one: sqrt(2) a N / S (two non-negative contributions of norm <= a N / S,
        attained by disjoint supports); add-remove with S fixed: a N / S.
        """
        check_relation(relation)
        factor = math.sqrt(2.0) if relation == "replace-one" else 1.0
        return factor * self.claimed_sensitivity()

    def noise_std(self) -> float:
        """Std of each entry of Y (eq. 27 with the clipped sensitivity); 0 without noise."""
        if not self.private:
            return 0.0
        sens = (self.claimed_sensitivity() if self.calibration == "paper"
                else self.true_sensitivity_bound("replace-one"))
        return self.noise_multiplier * sens

    def sampling(self, n_documents: int) -> Sampling:
        """The sampling the algorithm performs: S of D without replacement, J times."""
        return Sampling("without-replacement", dataset_size=n_documents,
                        batch_size=self.batch_size, steps=self.n_iterations)

    def run(self, train, *, seed: int = 0, held_out=None, eval_every: int | None = None,
            lambda_init=None, keep_trace: bool = True) -> VIPSLDARun:
        """Run J iterations of Algorithm 3 (or online VB) on ``train``.

        Parameters
        ----------
        train : array or scipy.sparse matrix, shape (D, V)
            Training word counts; D >= S.
        seed : int
            ``numpy.random.SeedSequence(seed)`` is spawned into four streams:
            lambda initialisation, resampling, minibatches, noise (so a private and
            a non-private run with one seed see the same minibatches).
        held_out : array or sparse (I, V), optional
            If given, :func:`perplexity_bound` is recorded before the first
            iteration, every ``eval_every`` iterations and after the last.
        eval_every : int, optional
            Default: only before and after.
        lambda_init : ndarray (K, V), optional
            Default Gamma(100, 1/100) entries (Hoffman et al.'s initialisation;
            data-independent).
        keep_trace : bool
            Record every released statistic and every lambda (J x K x V each).

        Returns
        -------
        VIPSLDARun

        Raises
        ------
        ValueError
            Bad counts, D < S, a lambda_init of the wrong shape, bad eval_every.
        """
        mat = as_count_matrix(train, "train")
        n_docs, vocab = mat.shape
        if n_docs < self.batch_size:
            raise ValueError(f"batch_size S={self.batch_size} exceeds the number of training "
                             f"documents D={n_docs}")
        if eval_every is not None:
            eval_every = check_count(eval_every, "eval_every")
        held = None if held_out is None else as_count_matrix(held_out, "held_out", vocab)
        rng_init, rng_resample, rng_batch, rng_noise = (
            np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))
        k = self.n_topics
        if lambda_init is None:
            lam = rng_init.gamma(100.0, 1.0 / 100.0, (k, vocab))
        else:
            lam = _check_lambda(lambda_init).copy()
            if lam.shape != (k, vocab):
                raise ValueError(f"lambda_init must have shape (K, V) = {(k, vocab)}, got "
                                 f"{lam.shape}")
        if self.doc_length is not None:
            mat = resample_documents(mat, self.doc_length, rng_resample)
        s, j_iter = self.batch_size, self.n_iterations
        std = self.noise_std()
        clip_norm = self.clip_norm
        released = np.empty((j_iter, k, vocab)) if keep_trace else None
        lambdas = np.empty((j_iter + 1, k, vocab)) if keep_trace else None
        if keep_trace:
            lambdas[0] = lam
        batches = np.empty((j_iter, s), dtype=np.int64)
        rho = (self.tau0 + np.arange(1, j_iter + 1)) ** (-self.kappa)
        n_clipped = np.zeros(j_iter, dtype=np.int64)
        n_negative = np.zeros(j_iter, dtype=np.int64)
        e_sweeps = np.zeros(j_iter, dtype=np.int64)
        evals: list[tuple[int, float]] = []

        def evaluate(t):
            if held is not None:
                evals.append((t, perplexity_bound(held, lam, self.alpha, max_iter=
                                                  self.e_step_max_iter, tol=self.e_step_tol)))

        evaluate(0)
        for t in range(j_iter):
            batch = rng_batch.choice(n_docs, size=s, replace=False)
            batches[t] = batch
            sub = mat[batch]
            exp_elog_beta = np.exp(_dirichlet_expectation(lam))
            _, contrib, rows, sweeps, _, _ = _e_step(sub, exp_elog_beta, self.alpha,
                                                     self.e_step_max_iter, self.e_step_tol)
            e_sweeps[t] = sweeps
            contrib = contrib / s
            if clip_norm is not None:
                norms = _document_norms(contrib, rows, s)
                n_clipped[t] = int((norms > clip_norm).sum())
                contrib = contrib * _clip_factors(norms, clip_norm)[rows, None]
            s_bar = _sum_over_documents(contrib, sub.indices, vocab)
            if self.private:
                s_tilde = s_bar + std * rng_noise.standard_normal((k, vocab))
                negative = s_tilde < 0
                n_negative[t] = int(negative.sum())
                s_used = np.where(negative, 0.0, s_tilde)  # "Clip negative entries of s~ to 0"
            else:
                s_tilde = s_used = s_bar
            if keep_trace:
                released[t] = s_tilde
            lam = (1.0 - rho[t]) * lam + rho[t] * (self.eta + n_docs * s_used)
            if keep_trace:
                lambdas[t + 1] = lam
            if eval_every is not None and (t + 1) % eval_every == 0 and t + 1 < j_iter:
                evaluate(t + 1)
        evaluate(j_iter)
        return VIPSLDARun(
            lambda_=lam, released=released, lambdas=lambdas, rho=rho, batches=batches,
            n_clipped=n_clipped, n_negative=n_negative, e_step_sweeps=e_sweeps,
            perplexity_iterations=np.array([e[0] for e in evals], dtype=np.int64),
            perplexity=np.array([e[1] for e in evals]),
            info={"n_documents": n_docs, "vocabulary_size": vocab, "noise_std": std,
                  "clip_norm": clip_norm, "seed": seed, "calibration": self.calibration},
        )


@dataclass
class VIPSLDARun:
    """Result of :meth:`VIPSLDA.run`.

    Attributes
    ----------
    lambda_ : ndarray (K, V)
        Final variational topic parameters; E[beta_k] = lambda_k / sum_v lambda_kv.
    released : ndarray (J, K, V) or None
        Per iteration, the released statistic s~ = sum_d clip(s_bar^d) + Y (before
        negative entries are mapped to 0); the noiseless s_bar for online VB.
    lambdas : ndarray (J + 1, K, V) or None
        lambda before the first and after every iteration.
    rho : ndarray (J,)
        Step sizes (tau0 + t)^(-kappa).
    batches : ndarray (J, S)
        Minibatch document indices (into the training matrix).
    n_clipped : ndarray (J,)
        Documents whose contribution was clipped, per iteration.
    n_negative : ndarray (J,)
        Entries of s~ mapped from < 0 to 0, per iteration.
    e_step_sweeps : ndarray (J,)
    perplexity_iterations, perplexity : ndarray
        Held-out perplexity bound (eq. 32) after that many iterations.
    """

    lambda_: np.ndarray
    released: np.ndarray | None
    lambdas: np.ndarray | None
    rho: np.ndarray
    batches: np.ndarray
    n_clipped: np.ndarray
    n_negative: np.ndarray
    e_step_sweeps: np.ndarray
    perplexity_iterations: np.ndarray
    perplexity: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def topics(self) -> np.ndarray:
        """E_q[beta] (K, V): rows of ``lambda_`` normalised to sum 1."""
        return self.lambda_ / self.lambda_.sum(axis=1, keepdims=True)
