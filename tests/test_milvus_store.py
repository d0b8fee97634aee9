"""Milvus store (Milvus Lite 2.5.1 in tmp dirs, the fast bigram fake embedder over the real PIPL text): build, load,
dense = FAISS, Milvus BM25, in-engine hybrid, one-law updates, clean, atomicity, one-process rule, retriever + stage,
and the server path through a Milvus Lite engine listening on a local port."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import SecretStr

from agentic_rag.config import PROJECT_ROOT, Settings
from agentic_rag.knowledge.corpus import file_sha256, load_corpus
from agentic_rag.knowledge.index import (
    MANIFEST,
    IndexError_,
    StoreUnavailableError,
    build_index,
    clean_index,
    load_index,
    read_manifest,
)
from agentic_rag.knowledge.stores import StoreOptions
from agentic_rag.knowledge.stores.milvus_store import LITE_FILE, connect
from agentic_rag.knowledge.update import update_law
from agentic_rag.retrieval.retriever import LocalRetriever
from agentic_rag.retrieval.tokenizer import LegalTokenizer
from tests import hermetic
from tests.fakes.retriever import CORPUS, STRUCTURE, BigramEmbedder

PIPL = "中华人民共和国个人信息保护法"
OTHER = "中华人民共和国测试数据法"
OTHER_LINES = [f"《{OTHER}》第一条规定，为了规范数据处理活动，保障数据安全，促进数据开发利用，制定本法。",
               f"《{OTHER}》第二条规定，在中华人民共和国境内开展数据处理活动及其安全监管，适用本法。",
               f"《{OTHER}》第三条规定，数据处理者应当建立健全全流程数据安全管理制度，组织开展数据安全教育培训。"]
QUESTIONS = ["不满十四周岁未成年人的个人信息", "公司把我的手机号卖给别人合法吗", "个人信息出境需要什么条件",
             "敏感个人信息包括哪些", "国家机关处理个人信息", "自动化决策拒绝", "删除个人信息的权利",
             "个人信息保护影响评估"]


class CountingEmbedder(BigramEmbedder):
    """The bigram fake, remembering every article text it embedded (the law map's entries are not articles)."""

    def __init__(self):
        self.seen: list[str] = []

    def encode_documents(self, texts, show_progress=False):
        self.seen.extend(t for t in texts if "》第" in t[:40])
        return super().encode_documents(texts)


def build(data_dir: Path, corpus: Path = CORPUS, embedder=None, **kw):
    docs = load_corpus(corpus, structure=STRUCTURE if corpus == CORPUS else None)
    return build_index(docs, embedder or BigramEmbedder(), LegalTokenizer(), data_dir, corpus_source=str(corpus),
                       corpus_file_sha256=file_sha256(corpus), store="milvus", **kw)


@pytest.fixture(scope="module")
def milvus_dir(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("milvus_index")
    build(data_dir)
    return data_dir


@pytest.fixture(scope="module")
def milvus_index(milvus_dir):
    return load_index(milvus_dir)


@pytest.fixture(scope="module")
def milvus_retriever(milvus_index, milvus_dir):
    settings = Settings(_env_file=None, data_dir=milvus_dir, reranker="none", min_vector_score=0.0,
                        milvus_hybrid="engine")
    return LocalRetriever(milvus_index, BigramEmbedder(), LegalTokenizer(), None, settings)


@pytest.fixture
def two_laws(tmp_path) -> Path:
    path = tmp_path / "two_laws.txt"
    pipl = CORPUS.read_text(encoding="utf-8").splitlines()[:12]
    path.write_text("\n".join(pipl + OTHER_LINES) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------- build and search
def test_manifest_records_store_and_collection_and_no_token(tmp_path, caplog):
    secret = "root:Sekr1t-token-value"
    manifest = build(tmp_path / "data", store_options=StoreOptions(token=SecretStr(secret)))
    assert manifest.store == "milvus" and manifest.store_uri is None  # Lite: the file is in the index folder
    assert manifest.collection == "arag_" + manifest.index_dir.replace("-", "_")
    assert sorted(Path(f).name for f in manifest.files) == ["documents.jsonl", "law_vectors.npy", "laws.json",
                                                            "milvus.db", "milvus.json", "tokens.jsonl"]
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "data").rglob("*.json"))
    assert secret not in written and secret not in caplog.text
    info = json.loads((tmp_path / "data" / manifest.index_dir / "milvus.json").read_text(encoding="utf-8"))
    assert info == {"uri": None, "collection": manifest.collection, "dense_index": "FLAT"}


def test_settings_select_milvus_and_keep_the_token_secret():
    settings = Settings(_env_file=None, vector_store="milvus", milvus_uri="http://milvus:19530",
                        milvus_token="root:pw-Secret-42")
    assert "pw-Secret-42" not in repr(settings) and "root:pw-Secret-42" in settings.secrets()  # log redaction
    options = StoreOptions.from_settings(settings)
    assert options.uri == "http://milvus:19530" and "pw-Secret-42" not in repr(options)
    assert StoreOptions.from_settings(Settings(_env_file=None, milvus_uri="./data/milvus.db")).uri is None  # Lite


def test_dense_search_equals_faiss_on_the_same_vectors(milvus_index, fake_data_dir):
    faiss_index = load_index(fake_data_dir)  # the same corpus and embedder, FAISS IndexFlatIP
    assert [d.id for d in faiss_index.documents] == [d.id for d in milvus_index.documents]
    queries = BigramEmbedder().encode_queries(QUESTIONS)
    f_scores, f_ids = faiss_index.store.search(queries, 10)
    m_scores, m_ids = milvus_index.store.search(queries, 10)
    np.testing.assert_allclose(m_scores, f_scores, rtol=1e-4, atol=1e-5)
    assert m_ids.tolist() == f_ids.tolist()
    np.testing.assert_allclose(milvus_index.store.vectors([3, 0]), faiss_index.store.vectors([3, 0]), atol=1e-6)


def test_bm25_ranks_the_article_with_the_query_terms_first(milvus_index):
    hits = milvus_index.store.bm25(["监护人 同意 未满十四周岁", "", "跨境 提供 境外"], 5)
    top = milvus_index.documents[hits[0][0][0]]
    assert top.article == 31 and "监护人" in top.text  # 不满十四周岁未成年人 … 父母或者其他监护人的同意
    assert hits[1] == []  # an empty query has no hits instead of an error
    assert all("境外" in milvus_index.documents[d].text for d, _ in hits[2][:3])
    assert [s for _, s in hits[0]] == sorted((s for _, s in hits[0]), reverse=True)


def test_hybrid_is_the_engines_rrf_of_dense_and_bm25(milvus_index):
    store, k = milvus_index.store, 10
    text = "未成年人 监护人 同意"
    vec = BigramEmbedder().encode_queries(["不满十四周岁的孩子的信息要家长同意吗"])
    dense, bm25 = store.dense(vec, k)[0], store.bm25([text], k)[0]
    fused = store.hybrid(vec, [text], k, rrf_k=60)[0]
    rank_d = {d: r for r, (d, _) in enumerate(dense, start=1)}
    rank_b = {d: r for r, (d, _) in enumerate(bm25, start=1)}
    expected = {d: sum(1 / (60 + r[d]) for r in (rank_d, rank_b) if d in r) for d in set(rank_d) | set(rank_b)}
    assert len(fused) == k and {d for d, _ in fused} <= set(expected)
    for doc, score in fused:
        assert score == pytest.approx(expected[doc], rel=1e-4)
    assert fused[0][0] in rank_d and fused[0][0] in rank_b  # the top is in both lists


# ---------------------------------------------------------------------------------------------- retriever and stage
def test_retriever_uses_milvus_bm25_and_the_in_engine_hybrid(milvus_retriever):
    assert type(milvus_retriever.channels["bm25"]).__name__ == "StoreBm25Channel"
    milvus_retriever.warm_up()  # the app's warm-up: one keyword query
    hybrid = milvus_retriever.retrieve("不满十四周岁未成年人的个人信息要谁同意", matcher="hybrid")
    assert hybrid.articles[0].article == 31
    assert set(hybrid.articles[0].channels) == {"milvus_rrf"}
    assert hybrid.max_vector_score is not None and 0 < hybrid.max_vector_score <= 1.0
    ensemble = milvus_retriever.retrieve("不满十四周岁未成年人的个人信息要谁同意", matcher="ensemble")
    assert {"vector", "bm25"} <= set(ensemble.articles[0].channels)
    assert milvus_retriever.retrieve("第二十八条是什么", matcher="bm25").articles[0].article == 28  # exact lookup


def test_by_default_hybrid_is_the_weighted_client_fusion_over_milvus_channels(milvus_index, milvus_dir):
    settings = Settings(_env_file=None, data_dir=milvus_dir, reranker="none")
    retriever = LocalRetriever(milvus_index, BigramEmbedder(), LegalTokenizer(), None, settings)
    result = retriever.retrieve("敏感个人信息包括哪些", matcher="hybrid")
    assert "milvus_rrf" not in retriever.channels and "vector" in result.articles[0].channels
    assert type(retriever.channels["bm25"]).__name__ == "StoreBm25Channel"  # still Milvus's own BM25


def test_retrieve_stage_and_eval_work_on_the_milvus_index(milvus_retriever, fake_settings):
    from agentic_rag.eval.retrieval import evaluate, load_dataset
    from tests.stages.test_stage_retrieve import retrieve

    result = retrieve(fake_settings, milvus_retriever, "第四十五条是什么内容")
    assert result.articles[0].article == 45 and any(a.role == "follow_up" for a in result.articles)
    rows = [r for r in load_dataset(PROJECT_ROOT / "eval" / "pipl_eval.jsonl") if r["gold"]][:6]
    metrics = evaluate(milvus_retriever, rows, ["bm25", "hybrid", "ensemble"])
    assert set(metrics["matchers"]) == {"bm25", "hybrid", "ensemble"}


# ---------------------------------------------------------------------------------------------- updates of one law
def _amend(two_laws: Path, tmp_path: Path) -> Path:
    """PIPL amended: 第二条 and 第三条 reworded, 第四条 repealed, 第十三条 added; the other law untouched."""
    pipl = [line for line in two_laws.read_text(encoding="utf-8").splitlines() if PIPL in line]
    lines = [line for line in pipl if "第四条" not in line]
    lines = [line + "量子加密条款同样适用。" if ("第二条" in line or "第三条" in line) else line for line in lines]
    lines.append(f"《{PIPL}》第十三条规定，星际数据传输应当经过专门评估。")
    path = tmp_path / "amended.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _update(data_dir: Path, amended: Path, embedder=None):
    articles = [d for d in load_corpus(amended) if d.law == PIPL]
    return update_law(data_dir, PIPL, articles, embedder or BigramEmbedder(), LegalTokenizer())


def test_amendment_is_visible_after_reopening_without_rebuilding_other_laws(two_laws, tmp_path):
    data_dir = tmp_path / "data"
    before = build(data_dir, corpus=two_laws)
    old_reader = load_index(data_dir)
    embedder = CountingEmbedder()
    manifest, change = _update(data_dir, _amend(two_laws, tmp_path), embedder)
    assert len(embedder.seen) == 3 and all(PIPL in t for t in embedder.seen)  # 2 amended + 1 new, nothing else
    assert (len(change.replaced), len(change.deleted), len(change.added)) == (2, 1, 1)
    assert manifest.generation == 1 and manifest.index_dir == before.index_dir
    assert manifest.collection == before.collection and manifest.doc_count == before.doc_count
    assert manifest.updates[0]["law"] == PIPL and manifest.corpus_file_sha256 is None
    assert not (data_dir / before.index_dir / "documents.jsonl").exists()

    old_reader.store.close()
    reopened = load_index(data_dir)
    docs = reopened.documents
    assert len(reopened.store) == len(docs) == manifest.doc_count == len(reopened.tokens)
    assert not [d for d in docs if d.law == PIPL and d.article == 4]
    assert [d.article for d in docs if d.law == OTHER] == [1, 2, 3]
    store = reopened.store
    assert {docs[i].article for i, _ in store.bm25(["量子加密"], 5)[0]} == {2, 3}
    assert docs[store.bm25(["星际 数据 传输"], 1)[0][0][0]].article == 13
    other = BigramEmbedder().encode_queries([next(d.index_text for d in docs if d.law == OTHER)])
    assert store.dense(other, 1)[0][0][1] == pytest.approx(1.0, abs=1e-5)  # its row was never rewritten


def test_a_reader_of_the_previous_generation_keeps_its_view(two_laws, tmp_path):
    data_dir = tmp_path / "data"
    build(data_dir, corpus=two_laws)
    reader = load_index(data_dir)
    repealed = next(d for d in reader.documents if d.law == PIPL and d.article == 4)
    _update(data_dir, _amend(two_laws, tmp_path))
    assert reader.store.bm25(["量子加密"], 5)[0] == []  # the new rows are not this reader's
    assert len(reader.store) == len(reader.documents)
    hits = reader.store.bm25([" ".join(LegalTokenizer().tokenize(repealed.text))], 1)[0]
    assert reader.documents[hits[0][0]].id == repealed.id


def test_failed_update_leaves_the_previous_index_and_can_be_rerun(two_laws, tmp_path, monkeypatch):
    from agentic_rag.knowledge import update

    data_dir = tmp_path / "data"
    before = build(data_dir, corpus=two_laws)
    amended = _amend(two_laws, tmp_path)

    def crash(*_):
        raise RuntimeError("killed before the manifest switch")

    monkeypatch.setattr(update, "write_manifest", crash)
    with pytest.raises(RuntimeError):
        _update(data_dir, amended)
    monkeypatch.undo()
    still = load_index(data_dir)  # rows of generation 1 exist, but this manifest is generation 0
    assert still.manifest == before and len(still.store) == before.doc_count
    assert still.store.bm25(["量子加密"], 5)[0] == []
    still.store.close()
    manifest, _ = _update(data_dir, amended)
    assert manifest.generation == 1 and len(load_index(data_dir).store) == manifest.doc_count


def test_second_update_deletes_rows_that_ended_before_and_delete_law_works(two_laws, tmp_path):
    data_dir = tmp_path / "data"
    build(data_dir, corpus=two_laws)
    _update(data_dir, _amend(two_laws, tmp_path))
    manifest, change = update_law(data_dir, OTHER, [], BigramEmbedder(), LegalTokenizer())
    assert manifest.generation == 2 and len(change.deleted) == 3
    index = load_index(data_dir)
    assert {d.law for d in index.documents} == {PIPL} and len(index.store) == manifest.doc_count
    client = index.store.client
    total = client.query(index.store.collection, filter="", output_fields=["count(*)"])[0]["count(*)"]
    assert total == manifest.doc_count + 3  # generation 1's repealed/amended rows are gone; the other law's remain


def test_update_errors_are_clear(two_laws, tmp_path, fake_data_dir):
    data_dir = tmp_path / "data"
    build(data_dir, corpus=two_laws)
    with pytest.raises(IndexError_, match="did you mean 中华人民共和国个人信息保护法"):
        update_law(data_dir, "中华人民共和国个人信息保护", [], BigramEmbedder(), LegalTokenizer())
    with pytest.raises(IndexError_, match="must all belong"):
        update_law(data_dir, OTHER, load_corpus(two_laws)[:1], BigramEmbedder(), LegalTokenizer())
    with pytest.raises(IndexError_, match="need a Milvus index; this one is faiss"):
        update_law(fake_data_dir, PIPL, [], BigramEmbedder(), LegalTokenizer())


def test_init_index_cli_builds_updates_and_deletes(two_laws, tmp_path, monkeypatch, capsys):
    import clean_index
    import init_index

    embedder = CountingEmbedder()
    monkeypatch.setattr(init_index, "resolve_embedder", lambda explicit, models_dir: None)
    monkeypatch.setattr(init_index, "load_embedder", lambda *args, **kwargs: embedder)
    data = ["--data-dir", str(tmp_path / "data")]
    assert init_index.main(["--corpus", str(two_laws), "--store", "milvus", *data]) == 0
    assert "Milvus collection arag_index_" in capsys.readouterr().out
    assert init_index.main(["--corpus", str(two_laws), "--store", "milvus", *data]) == 0  # up to date: kept
    assert len(embedder.seen) == 15
    amended = _amend(two_laws, tmp_path)
    assert init_index.main(["--update-law", PIPL, "--corpus", str(amended), *data]) == 0
    assert "2 replaced, 1 deleted" in capsys.readouterr().out and len(embedder.seen) == 18
    assert init_index.main(["--delete-law", OTHER, *data]) == 0
    assert init_index.main(["--update-law", "没有这部法", "--corpus", str(amended), *data]) == 1
    assert "has no articles of 《没有这部法》" in capsys.readouterr().err
    assert clean_index.main(data) == 0
    assert not list((tmp_path / "data").glob("index-*")) and not (tmp_path / "data" / MANIFEST).exists()


# ---------------------------------------------------------------------------------------------- lifecycle
def test_clean_removes_the_lite_file_and_a_rebuild_replaces_the_old_one(tmp_path):
    data_dir = tmp_path / "data"
    first = build(data_dir)
    load_index(data_dir)  # this process now runs the Lite engine on the file
    second = build(data_dir, force=True)
    assert second.index_dir != first.index_dir and not (data_dir / first.index_dir).exists()
    assert len(load_index(data_dir).store) == 74
    removed = clean_index(data_dir)
    assert data_dir / second.index_dir / LITE_FILE in removed
    assert not (data_dir / second.index_dir).exists() and read_manifest(data_dir) is None


def test_failed_build_leaves_the_previous_index_usable(tmp_path):
    data_dir = tmp_path / "data"
    good = build(data_dir)

    class Broken(BigramEmbedder):
        def encode_documents(self, texts, show_progress=False):
            raise RuntimeError("embedder died")

    with pytest.raises(RuntimeError):
        build(data_dir, embedder=Broken(), force=True)
    assert read_manifest(data_dir) == good
    kept = list(data_dir.glob(".build-*"))  # a failed build keeps only its embedding checkpoint, never a store
    assert all(not (b / LITE_FILE).exists() and not (b / "milvus.json").exists() for b in kept)
    index = load_index(data_dir)
    assert len(index.store) == 74 and index.store.bm25(["监护人"], 1)[0]


KILLED_BUILD = textwrap.dedent("""
    import sys, time
    from dataclasses import replace
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from agentic_rag.knowledge.corpus import load_corpus
    from agentic_rag.knowledge.index import build_index
    from agentic_rag.retrieval.tokenizer import LegalTokenizer
    from tests.fakes.retriever import BigramEmbedder

    class Slow(BigramEmbedder):
        calls = 0
        def encode_documents(self, texts, show_progress=False):
            Slow.calls += 1
            if Slow.calls == 3:  # the articles are in Milvus; the law map is being embedded
                Path(sys.argv[3]).write_text("inserting")
                time.sleep(300)
            return super().encode_documents(texts)

    docs = [replace(d, id=f"{{d.id}}-{{i}}") for i, d in enumerate(load_corpus(Path(sys.argv[2])) * 4)]
    build_index(docs, Slow(), LegalTokenizer(), Path(sys.argv[1]), corpus_source="x", store="milvus", force=True)
""")


def test_killed_build_leaves_the_previous_index_usable(tmp_path):
    data_dir = tmp_path / "data"
    good = build(data_dir)
    script, flag = tmp_path / "killed.py", tmp_path / "inserting.flag"
    script.write_text(KILLED_BUILD.format(root=str(PROJECT_ROOT)), encoding="utf-8")
    proc = hermetic.popen([sys.executable, str(script), str(data_dir), str(CORPUS), str(flag)], cwd=tmp_path,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the build never reached its second batch"
            time.sleep(0.1)
        assert (next(data_dir.glob(".build-*")) / LITE_FILE).exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert read_manifest(data_dir) == good
    index = load_index(data_dir)
    assert len(index.store) == 74 and index.documents[index.store.bm25(["监护人 同意"], 1)[0][0][0]].article == 31
    index.store.close()
    build(data_dir, force=True)  # the next build removes the killed one's folder
    assert not list(data_dir.glob(".build-*"))


SECOND_PROCESS = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from agentic_rag.knowledge.index import StoreUnavailableError, load_index
    try:
        load_index(Path(sys.argv[1]))
    except StoreUnavailableError as e:
        print(e)
""")


def test_a_second_process_on_the_same_lite_file_gets_a_clear_error(milvus_index, milvus_dir, tmp_path):
    assert len(milvus_index.store) == 74  # this process holds the file
    script = tmp_path / "second.py"
    script.write_text(SECOND_PROCESS.format(root=str(PROJECT_ROOT)), encoding="utf-8")
    out = hermetic.run([sys.executable, str(script), str(milvus_dir)], capture_output=True, text=True,
                       timeout=120).stdout
    assert "another process has it open" in out and "one process per file" in out
    assert "scripts/milvus_server.py" in out and "MILVUS_URI=http://127.0.0.1:19530" in out


# ---------------------------------------------------------------------------------------------- server path
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def milvus_server(tmp_path):
    """A Milvus Lite engine serving gRPC on a free local port (milvus-lite 2.5.1 has no `server` command)."""
    port = _free_port()
    proc = hermetic.popen([sys.executable, str(PROJECT_ROOT / "scripts" / "milvus_server.py"), "--db",
                           str(tmp_path / "server" / "milvus.db"), "--port", str(port)], cwd=PROJECT_ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env_extra={"PYTHONPATH": str(PROJECT_ROOT)})
    try:
        assert proc.stdout.readline().startswith("serving "), proc.stderr.read()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_server_path_build_search_update_clean(milvus_server, two_laws, tmp_path):
    options = StoreOptions(uri=milvus_server, token=SecretStr("root:Milvus"))
    data_dir = tmp_path / "data"
    first = build(data_dir, corpus=two_laws, store_options=options)
    assert first.store_uri == milvus_server and "root:Milvus" not in (data_dir / MANIFEST).read_text()
    assert sorted(Path(f).name for f in first.files) == ["documents.jsonl", "law_vectors.npy", "laws.json", "milvus.json", "tokens.jsonl"]
    second = build(data_dir, corpus=two_laws, store_options=options, force=True)
    client = connect(milvus_server, options.token)
    assert client.has_collection(second.collection) and not client.has_collection(first.collection)

    index = load_index(data_dir, store_options=options)
    assert len(index.store) == 15 and index.documents[index.store.bm25(["数据安全 教育培训"], 1)[0][0][0]].law == OTHER
    manifest, _ = update_law(data_dir, PIPL, [d for d in load_corpus(_amend(two_laws, tmp_path)) if d.law == PIPL],
                             BigramEmbedder(), LegalTokenizer(), options)
    again = load_index(data_dir, store_options=options)
    assert again.manifest.generation == 1 and {again.documents[i].article for i, _ in
                                               again.store.bm25(["量子加密"], 5)[0]} == {2, 3}

    removed = clean_index(data_dir, store_options=options)
    assert f"milvus collection {second.collection} on {milvus_server}" in removed
    assert not client.has_collection(second.collection) and read_manifest(data_dir) is None


@pytest.mark.slow
def test_server_path_drops_a_killed_builds_collection(milvus_server, tmp_path):
    options = StoreOptions(uri=milvus_server)
    data_dir = tmp_path / "data"
    stale = data_dir / ".build-1-killed"
    stale.mkdir(parents=True)
    from agentic_rag.knowledge.stores.milvus_store import MilvusStore

    MilvusStore.create(16, stale, "arag_killed_build", options).close()  # what a killed build leaves behind
    client = connect(milvus_server)
    assert client.has_collection("arag_killed_build")
    build(data_dir, store_options=options)
    assert not client.has_collection("arag_killed_build") and not stale.exists()


def test_unreachable_server_is_a_clear_error(tmp_path):
    with pytest.raises(StoreUnavailableError, match="cannot reach the Milvus server"):
        connect(f"http://127.0.0.1:{_free_port()}")
