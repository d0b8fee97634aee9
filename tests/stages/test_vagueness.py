"""The vague-opener model (stages/contextualise/vagueness.py): it decides with the embedder it was fitted for, the
lexical rule decides with any other, and what no model decides stays decided (long, article, law, definition,
greeting). With the shipped EmbeddingGemma: openers that say nothing happened are asked back, short clear ones not."""
from __future__ import annotations

import numpy as np
import pytest

from agentic_rag.stages.contextualise import signals
from agentic_rag.stages.contextualise.vagueness import OpenerModel, shipped, vague
from tests.conftest import MODELS_DIR, require_embedder


class FixedEmbedder:
    """A stand-in whose every message has the same vector."""

    def __init__(self, vector, model_id="fake-embedder"):
        self.vector, self.model_id, self.dim = np.asarray(vector, np.float32), model_id, len(vector)

    def encode_queries(self, texts):
        return np.stack([self.vector for _ in texts])


MODEL = OpenerModel("fake-embedder", np.array([1.0, 0.0], np.float32), 0.0, 0.6)


@pytest.mark.parametrize("vector, asked", [([3.0, 0.0], True), ([-3.0, 0.0], False), ([0.3, 5.0], False)])
def test_the_model_decides_with_its_own_embedder(vector, asked):
    # 押金不退咋办 names its case (the lexical rule would not ask back): here only the model's probability counts
    assert (vague("押金不退咋办", FixedEmbedder(vector), MODEL) is not None) is asked


@pytest.mark.parametrize("embedder", [None, FixedEmbedder([3.0, 0.0], "another-embedder"), FixedEmbedder([3.0, 0, 0])])
def test_with_another_embedder_the_lexical_rule_decides(embedder):
    for message in ("这样合法吗？", "押金不退咋办"):
        assert vague(message, embedder, MODEL) == signals.vague(message)


@pytest.mark.parametrize("message", [
    "我上个月在一家网店买的衣服退货以后，商家一直拖着不给退款，客服也不回消息，我该怎么办？",  # over 40 characters
    "第十三条怎么理解？", "个人信息保护法怎么说？", "什么是敏感个人信息", "你好"])
def test_what_no_model_decides(message):
    assert vague(message, FixedEmbedder([9.0, 0.0]), MODEL) is None


def test_the_shipped_model_belongs_to_the_shipped_embedder():
    model = shipped()
    assert model is not None and model.embedder_id == "embeddinggemma-300m" and model.weights.shape == (768,)
    assert 0.5 <= model.threshold < 1


@pytest.fixture(scope="module")
def gemma():
    require_embedder()
    from agentic_rag.retrieval.embedder import load_embedder
    from agentic_rag.weights import resolve_embedder

    return load_embedder(resolve_embedder(None, MODELS_DIR))


@pytest.mark.slow  # loads the shipped embedder
@pytest.mark.parametrize("message, asked", [
    ("有点事想请教，这种情况违法吗？", True), ("唉，烦死了，能帮我看看怎么维权吗", True), ("请问这种事该找谁？", True),
    ("公司不给交社保合法吗？", False), ("快递员把我的地址告诉了别人，能告吗", False), ("被辞退了能拿多少补偿", False)])
def test_with_the_shipped_embedder(gemma, message, asked):
    assert gemma.model_id == shipped().embedder_id
    assert (vague(message, gemma) is not None) is asked
