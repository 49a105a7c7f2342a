"""Bag-of-words corpora for LDA: the VIPS Wikipedia excerpt and a synthetic corpus (known topics).

The VIPS paper (Park, Foulds, Chaudhuri & Welling, Sec. 4.3) fits LDA to "a random
D=400,000 documents from Wikipedia" with "a vocabulary set of approximately 8000
terms". The shared data folder (``../shared/data/wikipedia``, see its README) holds a
206-page MediaWiki XML export (bz2) and the 7702-word vocabulary list
``vocabulary_vips.txt`` (Hoffman et al.'s stop-word-free dictionary, one word a line).
Nothing is copied into the repository; :func:`load_wikipedia` reads from a path.

A :class:`Corpus` holds word-count matrices (``scipy.sparse`` CSR, documents x
vocabulary) for a training and a held-out split, the vocabulary, and a
``preprocessing`` sentence that reports quote verbatim.
"""

from __future__ import annotations

import bz2
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpclaims.analysis.validation import check_count, check_positive, check_probability

VOCABULARY_FILE = "vocabulary_vips.txt"
_TOKEN = re.compile(r"[a-z]+")


@dataclass(frozen=True, eq=False)
class Corpus:
    """Word counts of a training and a held-out split over one vocabulary.

    Attributes
    ----------
    name : str
    train : scipy.sparse.csr_matrix, shape (D_train, V)
        ``train[d, v]`` is the number of tokens of word type v in document d
        (integer-valued, stored as int64).
    held_out : scipy.sparse.csr_matrix, shape (D_held_out, V)
        Same for the held-out documents (D_held_out may be 0).
    vocabulary : tuple of str, length V
        Column v of the count matrices is ``vocabulary[v]``.
    preprocessing : str
        What was done to the raw text, for reports.
    source : str
        Where the data came from (a path, or "synthetic").
    topics : ndarray, shape (K, V), optional
        The generating topics (rows sum to 1), for a synthetic corpus; None for
        real data.
    train_titles, held_out_titles : tuple of str
        Page titles (empty for a synthetic corpus).
    """

    name: str
    train: sp.csr_matrix
    held_out: sp.csr_matrix
    vocabulary: tuple[str, ...]
    preprocessing: str
    source: str
    topics: np.ndarray | None = None
    train_titles: tuple[str, ...] = ()
    held_out_titles: tuple[str, ...] = ()

    @property
    def n_train(self) -> int:
        return self.train.shape[0]

    @property
    def vocabulary_size(self) -> int:
        return len(self.vocabulary)


# --------------------------------------------------------------------------- vocabulary


def read_vocabulary(source: str | Path | Sequence[str]) -> tuple[str, ...]:
    """A vocabulary from a file (one word a line) or a sequence of words.

    Each entry is stripped and lower-cased, as in Hoffman et al.'s
    ``onlineldavb.py`` (the list holds e.g. "None", which becomes "none"). Blank
    lines of a file are skipped.

    Raises
    ------
    FileNotFoundError
        ``source`` is a path that is not a file (naming it).
    ValueError
        An entry that is not letters a-z after lower-casing, a duplicate entry,
        or an empty vocabulary.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"vocabulary file not found: {path}")
        raw = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        where = str(path)
    else:
        raw = list(source)
        where = "vocabulary"
    words = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, str):
            raise ValueError(f"{where}: entry {i} is not a string: {entry!r}")
        word = entry.strip().lower()
        if not _TOKEN.fullmatch(word):
            raise ValueError(f"{where}: entry {i} ({entry!r}) is not a word of letters a-z")
        words.append(word)
    if not words:
        raise ValueError(f"{where}: the vocabulary is empty")
    seen: dict[str, int] = {}
    for i, word in enumerate(words):
        if word in seen:
            raise ValueError(f"{where}: duplicate entry {word!r} at positions {seen[word]} and {i}")
        seen[word] = i
    return tuple(words)


def tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and return its maximal runs of letters a-z.

    Plain tokenisation: no wiki-markup removal. Hoffman et al.'s parser instead
    deletes every character other than a-z, space and '-', which joins e.g.
    "don't" into "dont"; here it splits into "don", "t".
    """
    return _TOKEN.findall(text.lower())


def counts_matrix(documents: Sequence[Sequence[str]], vocabulary: Sequence[str]) -> sp.csr_matrix:
    """CSR word-count matrix (D, V) of tokenised documents; out-of-vocabulary words dropped."""
    index = {w: i for i, w in enumerate(vocabulary)}
    indptr = [0]
    indices: list[np.ndarray] = []
    data: list[np.ndarray] = []
    for doc in documents:
        ids = np.fromiter((index[t] for t in doc if t in index), dtype=np.int64)
        cols, cts = np.unique(ids, return_counts=True)
        indices.append(cols)
        data.append(cts.astype(np.int64))
        indptr.append(indptr[-1] + cols.size)
    empty = np.zeros(0, dtype=np.int64)
    return sp.csr_matrix(
        (np.concatenate(data) if data else empty, np.concatenate(indices) if indices else empty,
         np.asarray(indptr, dtype=np.int64)),
        shape=(len(documents), len(vocabulary)),
    )


# --------------------------------------------------------------------------- Wikipedia


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _iter_articles(path: Path):
    """(title, text) of every main-namespace, non-redirect page of a bz2 MediaWiki export."""
    with bz2.open(path, "rb") as handle:
        try:
            for _, elem in ET.iterparse(handle, events=("end",)):
                if _local(elem.tag) != "page":
                    continue
                title = ns = text = None
                redirect = False
                for child in elem.iter():
                    tag = _local(child.tag)
                    if tag == "title":
                        title = child.text or ""
                    elif tag == "ns":
                        ns = (child.text or "").strip()
                    elif tag == "redirect":
                        redirect = True
                    elif tag == "text":
                        text = child.text or ""
                elem.clear()
                if ns == "0" and not redirect and text is not None:
                    yield title, text
        except (ET.ParseError, OSError, EOFError) as exc:
            raise ValueError(f"cannot parse MediaWiki XML export {path}: {exc}") from exc


def load_wikipedia(data_dir, vocabulary=None, max_documents: int | None = None,
                   held_out_fraction: float = 0.1, seed: int = 0) -> Corpus:
    """The VIPS Wikipedia excerpt as a bag-of-words :class:`Corpus`.

    Reads every ``*.bz2`` MediaWiki XML export in ``<data_dir>/wikipedia`` (sorted
    by name) with ``bz2`` and ``xml.etree.ElementTree.iterparse``, keeps articles
    (namespace 0, not redirects), tokenises with :func:`tokenize` (lower-case,
    maximal runs of letters a-z, no markup removal), maps tokens to the
    vocabulary and drops out-of-vocabulary tokens. Documents left with no
    in-vocabulary token are dropped (their number is stated in
    ``preprocessing``). The documents are then split at random into training
    and held-out sets.

    Documents keep their own lengths here; VIPS's resampling to a fixed length
    N (Sec. 4.2) is :func:`dpclaims.algorithms.vips.lda.resample_documents`.

    Parameters
    ----------
    data_dir : path
        The shared data folder (containing ``wikipedia/``).
    vocabulary : path or sequence of str, optional
        Default ``<data_dir>/wikipedia/vocabulary_vips.txt``; see
        :func:`read_vocabulary`.
    max_documents : int, optional
        Keep only the first ``max_documents`` non-empty articles in file order
        (parsing stops there).
    held_out_fraction : float
        In [0, 1): round(fraction * D) documents, chosen by a seeded permutation,
        form the held-out split.
    seed : int
        Seed of the split.

    Returns
    -------
    Corpus
        ``train`` (D_train, V) and ``held_out`` (D_held_out, V) CSR int64 counts.

    Raises
    ------
    FileNotFoundError
        The folder, the vocabulary file or every ``.bz2`` export is missing
        (naming the path).
    ValueError
        A bad ``max_documents`` / ``held_out_fraction``, an unparsable export,
        a bad vocabulary, or fewer than one training document.
    """
    folder = Path(data_dir) / "wikipedia"
    if not folder.is_dir():
        raise FileNotFoundError(f"Wikipedia data folder not found: {folder}")
    if max_documents is not None:
        max_documents = check_count(max_documents, "max_documents", minimum=1)
    held_out_fraction = check_probability(held_out_fraction, "held_out_fraction",
                                          open_interval=False)
    if held_out_fraction >= 1.0:
        raise ValueError(f"held_out_fraction must lie in [0, 1), got {held_out_fraction!r}")
    vocab_source = folder / VOCABULARY_FILE if vocabulary is None else vocabulary
    vocab = read_vocabulary(vocab_source)
    exports = sorted(folder.glob("*.bz2"))
    if not exports:
        raise FileNotFoundError(f"no MediaWiki export (*.bz2) found in {folder}")

    index = {w: i for i, w in enumerate(vocab)}
    titles: list[str] = []
    docs: list[list[str]] = []
    n_articles = n_empty = 0
    for path in exports:
        for title, text in _iter_articles(path):
            n_articles += 1
            tokens = [t for t in tokenize(text) if t in index]
            if not tokens:
                n_empty += 1
                continue
            titles.append(title)
            docs.append(tokens)
            if max_documents is not None and len(docs) >= max_documents:
                break
        if max_documents is not None and len(docs) >= max_documents:
            break
    if not docs:
        raise ValueError(f"no article with an in-vocabulary token in {[str(p) for p in exports]}")
    counts = counts_matrix(docs, vocab)
    n_docs = counts.shape[0]
    perm = np.random.default_rng(seed).permutation(n_docs)
    n_held = int(round(held_out_fraction * n_docs))
    held, train = np.sort(perm[:n_held]), np.sort(perm[n_held:])
    if train.size < 1:
        raise ValueError(f"no training documents: {n_docs} non-empty article(s) in "
                         f"{[str(p) for p in exports]} with held_out_fraction "
                         f"{held_out_fraction!r}")
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    return Corpus(
        name="wikipedia",
        train=counts[train],
        held_out=counts[held],
        vocabulary=vocab,
        preprocessing=(
            f"{n_articles} articles (namespace 0, redirects skipped) read from "
            f"{len(exports)} MediaWiki export(s); text lower-cased, tokens = maximal runs of "
            f"letters a-z (no markup removal), tokens outside the {len(vocab)}-word vocabulary "
            f"dropped; {n_empty} article(s) with no in-vocabulary token dropped"
            + (f"; first {max_documents} kept" if max_documents is not None else "")
            + f"; {n_docs} documents, in-vocabulary length min {int(lengths.min())} / "
            f"median {float(np.median(lengths)):.0f} / max "
            f"{int(lengths.max())} tokens; random {held_out_fraction:.0%} held-out "
            f"split (seed {seed}): {train.size} train / {held.size} held-out."
        ),
        source=str(folder),
        train_titles=tuple(titles[i] for i in train),
        held_out_titles=tuple(titles[i] for i in held),
    )


# --------------------------------------------------------------------------- synthetic


def tiny_corpus(seed: int = 0, *, n_documents: int = 300, n_topics: int = 3,
                vocabulary_size: int = 30, document_length: int = 60, alpha: float = 0.2,
                off_block_mass: float = 0.02, held_out_fraction: float = 0.2) -> Corpus:
    """A small LDA corpus drawn from known, well-separated topics (for tests).

    Topic k puts mass 1 - ``off_block_mass`` on its own block of
    V / K word types (weights within the block drawn from Dirichlet(5 * 1)) and
    spreads ``off_block_mass`` uniformly over the other words. Each document
    draws theta_d ~ Dirichlet(alpha 1_K) and ``document_length`` tokens from
    the mixture theta_d^T beta (LDA's generative process with z marginalised;
    Blei et al. 2003), so every document has exactly ``document_length`` tokens.

    Parameters
    ----------
    seed : int
    n_documents : int >= 2
    n_topics : int >= 1
    vocabulary_size : int, a multiple of ``n_topics``
    document_length : int >= 1
    alpha : float > 0
    off_block_mass : float in [0, 1)
    held_out_fraction : float in [0, 1)

    Returns
    -------
    Corpus
        With ``topics`` (K, V), words named "w0", "w1", ...

    Raises
    ------
    ValueError
        A bad count, a vocabulary size that is not a multiple of the number of
        topics, or a fraction outside its range.
    """
    n_documents = check_count(n_documents, "n_documents", minimum=2)
    n_topics = check_count(n_topics, "n_topics", minimum=1)
    vocabulary_size = check_count(vocabulary_size, "vocabulary_size", minimum=n_topics)
    document_length = check_count(document_length, "document_length", minimum=1)
    alpha = check_positive(alpha, "alpha")
    off_block_mass = check_probability(off_block_mass, "off_block_mass", open_interval=False)
    held_out_fraction = check_probability(held_out_fraction, "held_out_fraction",
                                          open_interval=False)
    if off_block_mass >= 1.0:
        raise ValueError(f"off_block_mass must lie in [0, 1), got {off_block_mass!r}")
    if held_out_fraction >= 1.0:
        raise ValueError(f"held_out_fraction must lie in [0, 1), got {held_out_fraction!r}")
    if vocabulary_size % n_topics:
        raise ValueError(f"vocabulary_size ({vocabulary_size}) must be a multiple of n_topics "
                         f"({n_topics})")
    rng = np.random.default_rng(seed)
    block = vocabulary_size // n_topics
    topics = np.zeros((n_topics, vocabulary_size))
    for k in range(n_topics):
        inside = np.zeros(vocabulary_size, dtype=bool)
        inside[k * block:(k + 1) * block] = True
        topics[k, inside] = (1.0 - off_block_mass) * rng.dirichlet(np.full(block, 5.0))
        if (~inside).any():
            topics[k, ~inside] = off_block_mass / (~inside).sum()
        else:
            topics[k] /= topics[k].sum()
    theta = rng.dirichlet(np.full(n_topics, alpha), size=n_documents)
    probs = theta @ topics
    probs /= probs.sum(axis=1, keepdims=True)
    counts = sp.csr_matrix(rng.multinomial(document_length, probs).astype(np.int64))
    perm = rng.permutation(n_documents)
    n_held = int(round(held_out_fraction * n_documents))
    held, train = np.sort(perm[:n_held]), np.sort(perm[n_held:])
    return Corpus(
        name="tiny-lda",
        train=counts[train],
        held_out=counts[held],
        vocabulary=tuple(f"w{v}" for v in range(vocabulary_size)),
        preprocessing=(
            f"synthetic LDA corpus (seed {seed}): K={n_topics} block topics over V="
            f"{vocabulary_size} words (off-block mass {off_block_mass}), alpha={alpha}, "
            f"{n_documents} documents of {document_length} tokens; {train.size} train / "
            f"{held.size} held-out."
        ),
        source="synthetic",
        topics=topics,
    )
