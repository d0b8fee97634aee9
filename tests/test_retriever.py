"""LocalRetriever on the real PIPL index with the offline embedder (conftest fixtures: built once per session)."""
from __future__ import annotations

import threading

import pytest

from agentic_rag.retrieval.channels import MATCHERS as MATCHER_CHANNELS
from agentic_rag.retrieval.retriever import LocalRetriever, QueryError
from agentic_rag.retrieval.tokenizer import LegalTokenizer

CHILD = "我家孩子才10岁，App收集他的信息要我同意吗？"
KEYWORD = "敏感个人信息 单独同意"
SEMANTIC = "公司把我的手机号卖给别人合法吗？"
VAGUE = "我想问个问题"
VARIANT = "个人信息出境 安全评估"


def _articles(result) -> list[int]:
    return [a.article for a in result.articles]


def test_child_question_finds_the_minor_articles(retriever):
    result = retriever.retrieve(CHILD)
    assert result.query_type == "semantic" and result.refs == []
    assert len(result.articles) == retriever.settings.top_k == 5
    assert {31, 28} & set(_articles(result)[:3]), _articles(result)
    assert all("lookup" not in a.channels for a in result.articles)
    scores = [a.score for a in result.articles]
    assert scores == sorted(scores, reverse=True) and all(a.rerank_score is None for a in result.articles)
    assert {"embed", "faiss", "bm25", "gram", "fusion"} <= set(result.timings_ms)


def test_exact_reference_is_pinned_first(retriever):
    result = retriever.retrieve("第五十七条")
    assert result.query_type == "exact" and result.refs == [57]
    first = result.articles[0]
    assert first.article == 57 and first.article_cn == "第五十七条"
    assert first.channels["lookup"] == {"rank": 1, "score": 1.0}
    assert first.score > 1.0 > max(a.score for a in result.articles[1:])
    assert [a.article for a in result.articles].count(57) == 1
    assert first.chapter.startswith("第五章")
    assert all("lookup" not in a.channels for a in result.articles[1:])


def test_named_law_reference(retriever):
    result = retriever.retrieve("个人信息保护法第29条怎么规定的", matcher="bm25")
    assert _articles(result)[0] == 29 and "lookup" in result.articles[0].channels
    assert "单独同意" in result.articles[0].text


def test_reference_to_another_law_is_not_looked_up(retriever):
    result = retriever.retrieve("刑法第28条", matcher="bm25")
    assert result.query_type == "exact" and result.refs == [28]
    assert all("lookup" not in a.channels for a in result.articles)


@pytest.mark.parametrize("matcher", ["ensemble", "hybrid", "bm25", "vector", "gram"])
def test_every_matcher_returns_its_channels(retriever, matcher):
    allowed = set(MATCHER_CHANNELS[matcher])
    for query in (KEYWORD, SEMANTIC):
        result = retriever.retrieve(query, matcher=matcher)
        assert result.matcher == matcher
        assert len(result.articles) == 5, (matcher, query)
        seen = set()
        for a in result.articles:
            assert a.channels and set(a.channels) <= allowed, (matcher, a.channels)
            seen |= set(a.channels)
        if query == KEYWORD:  # a keyword query gives every channel of the matcher a say
            assert seen == allowed, (matcher, seen)
        else:
            assert seen >= allowed - {"gram"}  # gram does not weigh on semantic questions in a fusion …
        if len(allowed) == 1:  # … but a single-channel matcher ranks by its channel alone, in channel order
            (channel,) = allowed
            assert [a.channels[channel]["rank"] for a in result.articles] == [1, 2, 3, 4, 5]
            raw = [a.channels[channel]["score"] for a in result.articles]
            assert raw[0] > 0
            assert raw == sorted(raw, reverse=True)
        assert result.max_vector_score is not None  # the gate weighs the dense similarity whatever the matcher


def test_out_of_scope_question_scores_lower(retriever):
    outside = retriever.retrieve("离婚后房产怎么分割？", matcher="vector")
    inside = retriever.retrieve(CHILD, matcher="vector")
    assert outside.max_vector_score is not None and inside.max_vector_score is not None
    assert outside.max_vector_score < inside.max_vector_score
    assert -1.0 <= outside.max_vector_score <= 1.0 and inside.max_vector_score <= 1.0
    # the gate reads the ranking's own cosines (the adapted question's); the floor and the router the plain best
    assert inside.signals.best_cosine == pytest.approx(inside.articles[0].channels["vector"]["score"])
    assert inside.max_vector_score == pytest.approx(retriever.similarity(CHILD)[0])


@pytest.mark.parametrize("query", ["", "   \n ", None])
def test_empty_query_is_refused(retriever, query):
    with pytest.raises(QueryError, match="问题为空"):
        retriever.retrieve(query)


def test_overlong_query_and_unknown_matcher_are_refused(retriever):
    limit = retriever.settings.max_query_chars
    with pytest.raises(QueryError, match="问题过长"):
        retriever.retrieve("个" * (limit + 1))
    assert retriever.retrieve("个人信息" + "的" * (limit - 4), matcher="bm25").articles  # at the limit: fine
    with pytest.raises(QueryError, match="unknown matcher"):
        retriever.retrieve(SEMANTIC, matcher="elastic")


def test_variants_and_main_query_are_searched(retriever):
    # Ten articles each: in the fusion an article both texts find outranks each text's own first ones.
    alone = set(_articles(retriever.retrieve(VAGUE, matcher="vector", top_k_=10)))
    rewrite = set(_articles(retriever.retrieve(VARIANT, matcher="vector", top_k_=10))) - alone
    assert rewrite  # the rewrite finds articles the vague question does not …
    with_variant = retriever.retrieve(VAGUE, variants=[VARIANT], matcher="vector", top_k_=10)
    assert with_variant.query == VAGUE
    assert set(_articles(with_variant)) & rewrite  # … and they come in with the variant
    with_main = retriever.retrieve(VAGUE, main_query=VARIANT, matcher="vector", top_k_=10)
    assert set(_articles(with_main)) & rewrite


def test_keywords_feed_the_keyword_channel(fake_retriever):
    plain = fake_retriever.retrieve(VAGUE, matcher="bm25")
    with_kw = fake_retriever.retrieve(VAGUE, keywords=["出境", "安全评估"], matcher="bm25")
    top = with_kw.articles[0]
    assert "安全评估" in top.text and "境外" in top.text  # the keywords pull up a cross-border transfer article …
    assert top.id not in [a.id for a in plain.articles[:1]]  # … which the vague question alone did not rank first
    assert top.channels["bm25"]["rank"] == 1


def test_duplicate_query_texts_are_searched_once(retriever):
    base = retriever.retrieve(KEYWORD, matcher="bm25")
    dup = retriever.retrieve(KEYWORD, main_query=KEYWORD + " ", variants=[KEYWORD, ""], matcher="bm25")
    assert [(a.id, a.rrf_score) for a in dup.articles] == [(a.id, a.rrf_score) for a in base.articles]


def test_top_k_argument(retriever):
    assert len(retriever.retrieve(KEYWORD, matcher="bm25", top_k_=3).articles) == 3
    assert len(retriever.retrieve(KEYWORD, matcher="bm25", top_k_=12).articles) == 12


def _signature(result) -> list[tuple]:
    return [(a.id, round(a.score, 9), tuple(sorted((c, v["rank"]) for c, v in a.channels.items())))
            for a in result.articles]


def test_concurrent_retrieval_equals_sequential(retriever, pipl_settings):
    queries = [CHILD, "第五十七条", KEYWORD, SEMANTIC] * 2
    expected = {q: _signature(retriever.retrieve(q)) for q in set(queries)}
    # A fresh retriever and tokenizer, so that the lazy jieba and 2-gram initialisations race too.
    fresh = LocalRetriever(retriever.index, retriever.embedder, LegalTokenizer(), None, pipl_settings,
                           retriever.adapter)
    barrier = threading.Barrier(len(queries))
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(i: int, q: str) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = _signature(fresh.retrieve(q))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, q)) for i, q in enumerate(queries)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert len(results) == len(queries)
    for i, q in enumerate(queries):
        assert results[i] == expected[q], q


def test_fusion_weights_setting_overrides_the_default_per_query_type(fake_data_dir):
    from agentic_rag.config import Settings
    from agentic_rag.knowledge.index import load_index
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.retrieval.tokenizer import LegalTokenizer
    from tests.fakes.retriever import BigramEmbedder

    def ranked(matcher="hybrid", **kw):
        settings = Settings(_env_file=None, data_dir=fake_data_dir, reranker="none", **kw)
        r = LocalRetriever(load_index(fake_data_dir), BigramEmbedder(), LegalTokenizer(), None, settings)
        res = r.retrieve(SEMANTIC, matcher=matcher, top_k_=10, rerank=False)
        return res.query_type, [a.article for a in res.articles]

    qtype, default = ranked()
    assert default == ranked("vector")[1]  # the cross-validated default keeps the dense order
    other = next(t for t in ("semantic", "keyword", "exact") if t != qtype)
    assert ranked(fusion_weights={other: {"vector": 0.0, "bm25": 1.0}})[1] == default  # other types untouched
    assert ranked(fusion_weights={qtype: {"vector": 0.0, "bm25": 1.0, "gram": 0.0}})[1] == ranked("bm25")[1]


def test_warm_up_builds_the_lazy_keyword_matrices(fake_data_dir):
    """So that the first question over a large index does not pay for the 2-gram matrix (35 s at 64k articles)."""
    from tests.fakes.retriever import fake_retriever as make

    fresh = make.__wrapped__(fake_data_dir)  # not the cached one the other tests have searched
    assert fresh.channels["gram"]._scorer is None
    fresh.warm_up()
    assert fresh.channels["gram"]._scorer is not None


def test_the_process_wide_retriever_is_per_settings(monkeypatch, tmp_path):
    # One process may hold agents over two knowledge bases (the evals, an app serving two DATA_DIRs): the second must
    # not answer from the first one's index.
    from agentic_rag.config import Settings
    from agentic_rag.retrieval import retriever as module

    monkeypatch.setattr(module, "_shared", {})
    monkeypatch.setattr(module.LocalRetriever, "from_settings", classmethod(lambda cls, s: ("loaded", s.data_dir)))
    a = Settings(_env_file=None, data_dir=tmp_path / "a")
    b = Settings(_env_file=None, data_dir=tmp_path / "b")
    assert module.get_retriever(a) == ("loaded", tmp_path / "a")
    assert module.get_retriever(b) == ("loaded", tmp_path / "b")
    assert module.get_retriever(a) is module.get_retriever(a.model_copy())  # loaded once per settings


def test_a_follow_up_beyond_what_was_asked_retrieves_the_rest(retriever):
    """「除了删掉，我还能要求它干点啥？」: with 删掉 in the rule form the deletion article (第四十七条) comes first again;
    without it (`signals.beyond`) the other rights of the individual (第四十五条 查阅、复制) lead."""
    from agentic_rag.stages.contextualise.signals import beyond

    root, follow_up = "App可以随便读我手机通讯录吗？", "除了删掉，我还能要求它干点啥？"
    kept = retriever.retrieve(f"上一问题：{root}；追问：{follow_up}").articles
    left_out = retriever.retrieve(f"上一问题：{root}；追问：{beyond(follow_up)[1]}").articles
    assert kept[0].article == 47 and left_out[0].article != 47 and 47 not in [a.article for a in left_out[:3]]
    assert {45, 48} & {a.article for a in left_out[:3]}
