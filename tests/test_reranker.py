"""Cross-encoder reranking with a tiny random-weight BERT built in the test (no download), and its selection."""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from agentic_rag.config import Settings
from agentic_rag.retrieval.rerank import CrossEncoderReranker, make_reranker
from agentic_rag.weights import ModelNotAvailableError

CHARS = ("个人信息处理者同意未成年人儿童孩子父母监护删除保护法条规定敏感的是我要吗岁收集应当取得单独书面"
         "公司手机号码卖给别合吗国家机关跨境提供安全评估，。？、：；（）0123456789")
QUERY = "我家孩子才10岁，App收集他的信息要我同意吗？"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("rerankers") / "tiny-cross-encoder"
    folder.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(CHARS), "app"]
    # transformers 5 ignores vocab_file= (every character would be [UNK]): the vocabulary is passed as a dict
    BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(folder)
    torch.manual_seed(1234)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, num_labels=1, max_position_embeddings=512)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def _settings(**kw) -> Settings:
    return Settings(_env_file=None, **kw)


@pytest.fixture(scope="module")
def reranker(tiny_cross_encoder):
    r = make_reranker(_settings(reranker="cross-encoder", reranker_model=str(tiny_cross_encoder),
                                models_dir=tiny_cross_encoder.parent / "no-models-here"))
    assert isinstance(r, CrossEncoderReranker)
    return r


def test_scores_one_float_per_passage(reranker):
    assert reranker.name == "tiny-cross-encoder"
    passages = ["个人信息处理者应当取得个人的同意", "不满十四周岁未成年人的个人信息", "国家机关处理个人信息",
                "跨境提供个人信息应当通过安全评估" * 60]  # longer than the model's 512 positions: truncated
    scores = reranker.score(QUERY, passages)
    assert len(scores) == len(passages)
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
    assert len(set(scores)) > 1  # random weights still tell different passages apart
    assert reranker.score(QUERY, passages) == scores  # deterministic
    assert reranker.score(QUERY, passages[::-1]) == pytest.approx(scores[::-1], abs=1e-6)  # per passage
    assert reranker.score(QUERY, []) == []


def test_reranker_model_by_name_under_models_dir(tiny_cross_encoder):
    r = make_reranker(_settings(reranker="cross-encoder", reranker_model=tiny_cross_encoder.name,
                                models_dir=tiny_cross_encoder.parent))
    assert r is not None and r.name == "tiny-cross-encoder"


def test_auto_uses_a_downloaded_bge_reranker_and_none_disables_it(tiny_cross_encoder, tmp_path):
    models_dir = tmp_path / "models"
    shutil.copytree(tiny_cross_encoder, models_dir / "bge-reranker-v2-m3")
    r = make_reranker(_settings(reranker="auto", models_dir=models_dir))
    assert isinstance(r, CrossEncoderReranker) and r.name == "bge-reranker-v2-m3"
    assert make_reranker(_settings(reranker="none", models_dir=models_dir)) is None


def test_cross_encoder_required_but_unavailable(tmp_path):
    with pytest.raises(ModelNotAvailableError, match="download_models.py"):
        make_reranker(_settings(reranker="cross-encoder", models_dir=tmp_path))
    with pytest.raises(ModelNotAvailableError):
        make_reranker(_settings(reranker="cross-encoder", reranker_model="missing-ce", models_dir=tmp_path))
    assert make_reranker(_settings(reranker="auto", models_dir=tmp_path)) is None


def test_retriever_orders_by_rerank_score(retriever, pipl_settings, reranker):
    from agentic_rag.retrieval.retriever import LocalRetriever

    reranked = LocalRetriever(retriever.index, retriever.embedder, retriever.tokenizer, reranker, pipl_settings)
    assert pipl_settings.rerank_top_n == 10 and pipl_settings.top_k == 5

    fused = reranked.retrieve(QUERY, top_k_=10, rerank=False)  # the fusion head the reranker sees
    assert fused.query_type == "semantic" and len(fused.articles) == 10
    assert all(a.rerank_score is None for a in fused.articles)
    scores = reranker.score(QUERY, [reranked.documents[reranked._by_article[a.article][0]].index_text
                                    for a in fused.articles])
    expected = [a.id for a, _ in sorted(zip(fused.articles, scores), key=lambda p: -p[1])][:5]

    result = reranked.retrieve(QUERY)
    assert [a.id for a in result.articles] == expected
    got = [a.rerank_score for a in result.articles]
    assert all(s is not None for s in got)
    assert got == sorted(got, reverse=True)
    assert got == pytest.approx(sorted(scores, reverse=True)[:5], abs=1e-6)
    assert all(a.score == a.rerank_score for a in result.articles)
    assert all(a.rrf_score > 0 for a in result.articles)


def test_pinned_lookup_stays_first_and_is_not_reranked(retriever, pipl_settings, reranker):
    from agentic_rag.retrieval.retriever import LocalRetriever

    reranked = LocalRetriever(retriever.index, retriever.embedder, retriever.tokenizer, reranker, pipl_settings)
    result = reranked.retrieve("第二十八条和孩子的信息有什么关系", matcher="bm25")
    assert result.articles[0].article == 28 and "lookup" in result.articles[0].channels
    assert result.articles[0].rerank_score is None and result.articles[0].score > 1.0
    rest = [a.rerank_score for a in result.articles[1:]]
    assert rest and all(s is not None for s in rest) and rest == sorted(rest, reverse=True)
    assert 28 not in [a.article for a in result.articles[1:]]
