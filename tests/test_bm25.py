"""BM25 scorers: SparseBM25 (okapi idf) must reproduce rank_bm25.BM25Okapi; RankBM25 (which wraps BM25Okapi) and
both SparseBM25 idfs must equal an independent reference written here and hand-computed scores; top_k; edge cases."""
from __future__ import annotations

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from agentic_rag.retrieval.bm25 import RankBM25, SparseBM25, make_bm25, top_k


def _random_corpus(seed: int, n_docs: int = 60, vocab_size: int = 40) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    vocab = [f"t{i}" for i in range(vocab_size)]
    # Zipf-like term frequencies so that some terms occur in most documents (negative okapi idf, epsilon floor).
    p = 1.0 / np.arange(1, vocab_size + 1)
    p /= p.sum()
    docs = [[str(t) for t in rng.choice(vocab, size=int(rng.integers(1, 25)), p=p)] for _ in range(n_docs)]
    for i, doc in enumerate(docs):
        if i % 5 and "t0" not in doc:  # t0 in at least 4/5 of the documents
            doc.append("t0")
    docs[0] = ["t0"] * 7 + ["t39"]  # a repeated term, and a rare one
    return docs


def reference_bm25(corpus: list[list[str]], query: list[str], idf: str = "okapi", k1: float = 1.5, b: float = 0.75,
                   epsilon: float = 0.25) -> list[float]:
    """Okapi BM25 from its definition, one loop per document and query term (no library, nothing shared with the
    code under test). okapi idf = ln((N - n + .5) / (n + .5)), a negative one replaced by epsilon × the mean idf of
    the vocabulary (rank-bm25's rule); lucene idf = ln(1 + (N - n + .5) / (n + .5))."""
    n_docs = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n_docs
    vocab = {t for d in corpus for t in d}
    df = {t: sum(t in d for d in corpus) for t in vocab}
    if idf == "okapi":
        raw = {t: math.log(n_docs - n + 0.5) - math.log(n + 0.5) for t, n in df.items()}
        floor = epsilon * sum(raw.values()) / len(raw)
        weight = {t: v if v >= 0 else floor for t, v in raw.items()}
    else:
        weight = {t: math.log(1 + (n_docs - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    scores = []
    for doc in corpus:
        score = 0.0
        for term in query:  # a repeated query term counts each time
            tf = doc.count(term)
            if tf:
                score += weight[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


# N = 3, avgdl = 2, k1 = 1.5, b = 0.75: length factors K = k1·(1 - b + b·len/avgdl) = 2.0625, 0.9375, 1.5.
# df x = 2, y = z = 1. okapi idf: x ln(1.5/2.5) = -0.5108 → floored to 0.25 × mean(-0.5108, 0.5108, 0.5108) = 0.04257;
# y = z = ln(2.5/1.5) = 0.5108. lucene idf: x ln(1 + 1.5/2.5) = 0.4700, y = z = ln(1 + 2.5/1.5) = 0.9808.
# score = idf · tf·2.5 / (tf + K): y in doc 0 = 0.5108 · 5/4.0625 = 0.62871 (okapi), 0.9808 · 5/4.0625 = 1.20717 …
HAND_CORPUS = [["x", "y", "y"], ["x"], ["z", "z"]]
HAND_SCORES = {  # query: (okapi, lucene)
    ("x",): ([0.034750, 0.054927, 0.0], [0.383676, 0.606456, 0.0]),
    ("y",): ([0.628708, 0.0, 0.0], [1.207174, 0.0, 0.0]),
    ("z",): ([0.0, 0.0, 0.729751], [0.0, 0.0, 1.401185]),
    ("x", "y"): ([0.663459, 0.054927, 0.0], [1.590851, 0.606456, 0.0]),
    ("y", "y"): ([1.257417, 0.0, 0.0], [2.414349, 0.0, 0.0]),
}


@pytest.mark.parametrize("query", list(HAND_SCORES))
def test_hand_computed_scores_on_three_documents(query):
    okapi, lucene = HAND_SCORES[query]
    np.testing.assert_allclose(reference_bm25(HAND_CORPUS, list(query)), okapi, atol=2e-6)  # the reference itself
    np.testing.assert_allclose(reference_bm25(HAND_CORPUS, list(query), idf="lucene"), lucene, atol=2e-6)
    np.testing.assert_allclose(RankBM25(HAND_CORPUS).get_scores(list(query)), okapi, atol=2e-6)
    np.testing.assert_allclose(SparseBM25(HAND_CORPUS, idf="okapi").get_scores(list(query)), okapi, atol=2e-6)
    np.testing.assert_allclose(SparseBM25(HAND_CORPUS).get_scores(list(query)), lucene, atol=2e-6)


QUERIES = [
    ["t0"],  # in most documents: negative okapi idf, floored
    ["t1", "t5", "t17"],
    ["t3", "t3", "t3", "t8"],  # repeated query terms count each time
    ["unknown", "t2", "never-seen"],  # unknown terms contribute nothing
    ["t39"],
    [f"t{i}" for i in range(40)],
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_okapi_equals_rank_bm25(seed):
    corpus = _random_corpus(seed)
    reference = BM25Okapi(corpus)
    sparse = SparseBM25(corpus, idf="okapi")
    for q in QUERIES:
        expected = reference.get_scores(q)
        got = sparse.get_scores(q)
        assert got.shape == (len(corpus),)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert np.any(reference.get_scores(["t1", "t5", "t17"]) > 0)  # the comparison is not between zeros


def test_epsilon_floor_is_exercised():
    """The corpus really has terms with df > N/2, so the okapi epsilon rule is part of the comparison."""
    corpus = _random_corpus(0)
    df_t0 = sum("t0" in d for d in corpus)
    assert df_t0 > len(corpus) / 2
    reference = BM25Okapi(corpus)
    assert reference.idf["t0"] == pytest.approx(reference.epsilon * reference.average_idf)


@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (1.5, 0.0), (2.0, 1.0)])
def test_sparse_okapi_equals_rank_bm25_for_other_parameters(k1, b):
    corpus = _random_corpus(7)
    reference = BM25Okapi(corpus, k1=k1, b=b)
    sparse = SparseBM25(corpus, k1=k1, b=b, idf="okapi")
    for q in QUERIES:
        np.testing.assert_allclose(sparse.get_scores(q), reference.get_scores(q), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 3])
def test_every_scorer_equals_the_independent_reference(seed):
    corpus = _random_corpus(seed)
    wrapper, okapi, lucene = RankBM25(corpus), SparseBM25(corpus, idf="okapi"), SparseBM25(corpus)
    for q in QUERIES:
        expected = reference_bm25(corpus, q)
        np.testing.assert_allclose(wrapper.get_scores(q), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(okapi.get_scores(q), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(lucene.get_scores(q), reference_bm25(corpus, q, idf="lucene"), rtol=1e-5, atol=1e-5)
    assert any(v > 0 for v in reference_bm25(corpus, ["t1", "t5", "t17"]))  # not a comparison between zeros


@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (1.5, 0.0), (2.0, 1.0)])
def test_rank_bm25_wrapper_passes_its_parameters_on(k1, b):
    corpus = _random_corpus(7)
    for q in QUERIES:
        np.testing.assert_allclose(RankBM25(corpus, k1=k1, b=b).get_scores(q), reference_bm25(corpus, q, k1=k1, b=b),
                                   rtol=1e-5, atol=1e-5)


def test_a_document_without_tokens_does_not_change_the_scores():
    """An article whose tokens are all stopwords is an empty document; it must not shift avgdl."""
    corpus = _random_corpus(5)
    corpus[10] = []
    for q in QUERIES:
        expected = reference_bm25(corpus, q)
        np.testing.assert_allclose(RankBM25(corpus).get_scores(q), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(SparseBM25(corpus, idf="okapi").get_scores(q), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(SparseBM25(corpus).get_scores(q), reference_bm25(corpus, q, idf="lucene"),
                                   rtol=1e-5, atol=1e-5)
        assert SparseBM25(corpus).get_scores(q)[10] == 0


def test_lucene_idf_is_never_negative():
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["common", "a", "d"]]
    lucene = SparseBM25(corpus)  # default idf
    common = lucene.get_scores(["common"])
    assert np.all(common > 0)  # a term in every document still counts a little
    assert lucene.get_scores(["d"])[3] > common[3]  # rarer terms still weigh more than ubiquitous ones
    # when every term is in most documents, okapi's floor (epsilon x mean idf) is itself negative; lucene is not
    everywhere = [["a", "b"], ["a", "b"], ["a", "b", "c"], ["a", "b"]]
    assert np.all(SparseBM25(everywhere, idf="okapi").get_scores(["a", "b"]) < 0)
    assert np.all(SparseBM25(everywhere).get_scores(["a", "b"]) > 0)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = list(rng.choice([f"t{i}" for i in range(40)], size=5))
        assert np.all(SparseBM25(_random_corpus(int(rng.integers(100)))).get_scores(q) >= 0)


def test_scores_prefer_matching_documents():
    corpus = [["个人信息", "处理者"], ["敏感", "个人信息", "单独同意"], ["国家机关"]]
    scores = SparseBM25(corpus).get_scores(["单独同意"])
    assert scores[1] > 0 and scores[0] == 0 and scores[2] == 0


def test_empty_corpus_and_empty_query_return_zeros():
    for scorer in (SparseBM25([]), RankBM25([]), SparseBM25([], idf="okapi")):
        out = scorer.get_scores(["a"])
        assert out.shape == (0,)
    corpus = [["a", "b"], ["c"]]
    for scorer in (SparseBM25(corpus), RankBM25(corpus), SparseBM25(corpus, idf="okapi")):
        assert np.array_equal(scorer.get_scores([]), np.zeros(2))
        assert np.array_equal(scorer.get_scores(["zzz"]), np.zeros(2))
    # every document empty: no division by zero, zero scores
    for scorer in (SparseBM25([[], []]), RankBM25([[], []])):
        assert np.array_equal(scorer.get_scores(["a"]), np.zeros(2))


def test_make_bm25_backends():
    corpus = _random_corpus(1)
    assert isinstance(make_bm25(corpus), SparseBM25)
    assert isinstance(make_bm25(corpus, "rank_bm25"), RankBM25)
    with pytest.raises(ValueError, match="unknown BM25 backend"):
        make_bm25(corpus, "elastic")


# ---------------------------------------------------------------------------------------------- top_k
def test_top_k_order_ties_and_min_score():
    scores = np.array([0.5, 2.0, 2.0, 0.0, -1.0, 1.0, 2.0], dtype=np.float32)
    assert top_k(scores, 3) == [(1, 2.0), (2, 2.0), (6, 2.0)]  # ties broken by index
    assert top_k(scores, 4) == [(1, 2.0), (2, 2.0), (6, 2.0), (5, 1.0)]
    assert top_k(scores, 100) == [(1, 2.0), (2, 2.0), (6, 2.0), (5, 1.0), (0, 0.5)]  # zero and below dropped
    assert top_k(scores, 100, min_score=1.0) == [(1, 2.0), (2, 2.0), (6, 2.0)]  # strictly above min_score
    assert top_k(scores, 100, min_score=-5.0)[-2:] == [(3, 0.0), (4, -1.0)]
    assert top_k(scores, 0) == [] and top_k(scores, -1) == []
    assert top_k(np.array([], dtype=np.float32), 5) == []
    assert top_k(np.zeros(10, dtype=np.float32), 5) == []
    assert top_k(np.array([np.inf, np.nan, 1.0, -np.inf, 2.0]), 5) == [(4, 2.0), (2, 1.0)]  # non-finite dropped


def test_top_k_matches_a_full_sort_on_random_scores():
    rng = np.random.default_rng(3)
    scores = rng.integers(-3, 6, size=200).astype(np.float32)  # many ties
    expected = sorted((i for i in range(200) if scores[i] > 0), key=lambda i: (-scores[i], i))[:25]
    assert [i for i, _ in top_k(scores, 25)] == expected
