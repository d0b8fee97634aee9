"""Index lifecycle with a tiny fake embedder: build, idempotency, --force, load checks, atomicity, cleaning."""
from __future__ import annotations

import hashlib
import json
import logging
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.knowledge.corpus import corpus_sha256, file_sha256, load_corpus
from agentic_rag.knowledge.embedding import CHECKPOINT_DIR, PROGRESS_FILE, build_dir_name
from agentic_rag.knowledge.index import (
    MANIFEST,
    IndexError_,
    IndexMismatchError,
    IndexNotFoundError,
    build_index,
    clean_index,
    load_index,
    read_manifest,
)
from agentic_rag.retrieval.tokenizer import char_bigrams
from tests import hermetic

BUILD_CALLS = 2  # one encode_documents call for the articles, one for the law map
CORPUS_LINES = (PROJECT_ROOT / "chinese_law.txt").read_text(encoding="utf-8").splitlines()[:6]


class FakeEmbedder:
    """Deterministic unit vectors from a hash of the text; counts its calls."""

    def __init__(self, model_id: str = "fake-embedder", dim: int = 16, fail_after: int | None = None):
        self.model_id = model_id
        self.dim = dim
        self.calls = 0
        self.texts: list[str] = []  # every article text embedded, in order (not the law map's entries)
        self.fail_after = fail_after  # raise on the call after this many documents (a simulated kill)

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(f"{self.model_id}:{text}".encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if self.fail_after is not None and len(self.texts) >= self.fail_after:
            raise KeyboardInterrupt("simulated kill")
        self.calls += 1
        self.texts.extend(t for t in texts if "：" in t[:30])  # articles are 《law》第X条：text; law-map entries not
        return np.stack([self._vec(t) for t in texts])

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts])


class FakeTokenizer:
    version = "fake-tokenizer-1"

    @staticmethod
    def tokenize(text: str) -> list[str]:
        return char_bigrams(text)


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "law.txt"
    path.write_text("\n".join(CORPUS_LINES) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path) -> Path:
    return tmp_path / "data"


def _build(corpus_file: Path, data_dir: Path, embedder=None, tokenizer=None, force: bool = False):
    docs = load_corpus(corpus_file)
    return build_index(docs, embedder or FakeEmbedder(), tokenizer or FakeTokenizer(), data_dir,
                       corpus_source=str(corpus_file), corpus_file_sha256=file_sha256(corpus_file), force=force)


# ---------------------------------------------------------------------------------------------- build
def test_build_writes_manifest_and_files(corpus_file, data_dir):
    docs = load_corpus(corpus_file)
    embedder = FakeEmbedder()
    manifest = build_index(docs, embedder, FakeTokenizer(), data_dir, corpus_source=str(corpus_file),
                           corpus_file_sha256=file_sha256(corpus_file))
    assert manifest.embedder_id == "fake-embedder" and manifest.embedder_dim == 16
    assert manifest.doc_count == 6
    assert manifest.corpus_sha256 == corpus_sha256(docs)
    assert manifest.corpus_file_sha256 == file_sha256(corpus_file)
    assert manifest.corpus_source == str(corpus_file)
    assert manifest.tokenizer_version == "fake-tokenizer-1"
    assert manifest.index_dir.startswith("index-") and (data_dir / manifest.index_dir).is_dir()
    assert sorted(Path(f).name for f in manifest.files) == ["documents.jsonl", "law_vectors.npy", "laws.json", "tokens.jsonl",
                                                                    "vectors.faiss"]
    for rel in manifest.files:
        assert rel.startswith(manifest.index_dir + "/")
        assert (data_dir / rel).is_file() and (data_dir / rel).stat().st_size > 0
    assert read_manifest(data_dir) == manifest  # what is on disk is what was returned
    assert json.loads((data_dir / MANIFEST).read_text(encoding="utf-8"))["doc_count"] == 6
    assert not list(data_dir.glob(".build-*")) and not list(data_dir.glob(".manifest*.tmp"))
    assert embedder.calls == BUILD_CALLS

    loaded = load_index(data_dir, "fake-embedder", 16)
    assert [d.to_dict() for d in loaded.documents] == [d.to_dict() for d in docs]
    assert loaded.tokens == [FakeTokenizer.tokenize(d.keyword_text) for d in docs]
    assert len(loaded.store) == 6
    np.testing.assert_allclose(loaded.store.vectors([2])[0], embedder._vec(docs[2].index_text), atol=1e-6)


def test_no_pickle_files_are_written(corpus_file, data_dir):
    manifest = _build(corpus_file, data_dir)
    everything = [p for p in data_dir.rglob("*") if p.is_file()]
    assert everything
    assert not [p for p in everything if p.suffix in (".pkl", ".pickle", ".joblib")]
    for p in everything:  # numpy files are plain arrays: they load with pickles refused
        if p.suffix == ".npy":
            assert np.load(p, allow_pickle=False).dtype == np.float32
    for rel in manifest.files:  # the non-FAISS files are JSON lines
        if rel.endswith(".jsonl"):
            lines = (data_dir / rel).read_text(encoding="utf-8").splitlines()
            assert len(lines) == 6 and all(json.loads(line) is not None for line in lines)


def test_second_build_with_same_inputs_is_skipped(corpus_file, data_dir):
    first = _build(corpus_file, data_dir)
    embedder = FakeEmbedder()
    second = _build(corpus_file, data_dir, embedder=embedder)
    assert second.index_dir == first.index_dir
    assert second.created_at == first.created_at
    assert embedder.calls == 0  # nothing was embedded again
    assert [p.name for p in data_dir.glob("index-*")] == [first.index_dir]


def test_changed_inputs_rebuild_and_remove_the_old_index(corpus_file, data_dir):
    first = _build(corpus_file, data_dir)
    other_tokenizer = type("Tok2", (FakeTokenizer,), {"version": "fake-tokenizer-2"})()
    second = _build(corpus_file, data_dir, tokenizer=other_tokenizer)
    assert second.index_dir != first.index_dir and second.tokenizer_version == "fake-tokenizer-2"
    corpus_file.write_text("\n".join(CORPUS_LINES[:4]) + "\n", encoding="utf-8")
    third = _build(corpus_file, data_dir, tokenizer=other_tokenizer)
    assert third.doc_count == 4 and third.index_dir != second.index_dir
    assert [p.name for p in data_dir.glob("index-*")] == [third.index_dir]


def test_force_rebuilds_and_removes_the_old_index_dir(corpus_file, data_dir):
    first = _build(corpus_file, data_dir)
    embedder = FakeEmbedder()
    second = _build(corpus_file, data_dir, embedder=embedder, force=True)
    assert embedder.calls == BUILD_CALLS
    assert second.index_dir != first.index_dir
    assert not (data_dir / first.index_dir).exists()
    assert (data_dir / second.index_dir).is_dir()
    assert read_manifest(data_dir).index_dir == second.index_dir
    assert load_index(data_dir).manifest.index_dir == second.index_dir


def test_empty_document_list_is_refused(data_dir):
    with pytest.raises(IndexError_, match="no documents"):
        build_index([], FakeEmbedder(), FakeTokenizer(), data_dir, corpus_source="empty.txt")
    assert not (data_dir / MANIFEST).exists()


# ---------------------------------------------------------------------------------------------- load checks
def test_load_missing_index_names_init_index(tmp_path):
    with pytest.raises(IndexNotFoundError) as exc:
        load_index(tmp_path / "nowhere")
    assert "init_index.py" in str(exc.value)


def test_load_with_other_embedder_is_a_mismatch(corpus_file, data_dir):
    _build(corpus_file, data_dir)
    with pytest.raises(IndexMismatchError) as exc:
        load_index(data_dir, embedder_id="bge-m3", embedder_dim=16)
    assert "fake-embedder" in str(exc.value) and "bge-m3" in str(exc.value)
    assert load_index(data_dir, embedder_id="fake-embedder").manifest.doc_count == 6


def test_load_with_other_dimension_is_an_error(corpus_file, data_dir):
    _build(corpus_file, data_dir)
    with pytest.raises(IndexMismatchError, match="dims"):
        load_index(data_dir, embedder_id="fake-embedder", embedder_dim=1024)


def test_manifest_dimension_disagreeing_with_the_vectors_is_an_error(corpus_file, data_dir):
    _build(corpus_file, data_dir)
    raw = json.loads((data_dir / MANIFEST).read_text(encoding="utf-8"))
    raw["embedder_dim"] = 768
    (data_dir / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(IndexMismatchError):
        load_index(data_dir)


def test_load_with_a_deleted_file_is_an_error(corpus_file, data_dir):
    manifest = _build(corpus_file, data_dir)
    victim = next(f for f in manifest.files if f.endswith("tokens.jsonl"))
    (data_dir / victim).unlink()
    with pytest.raises(IndexNotFoundError) as exc:
        load_index(data_dir)
    assert victim in str(exc.value) and "--force" in str(exc.value)


def test_corrupt_manifest_is_a_mismatch(data_dir):
    data_dir.mkdir()
    (data_dir / MANIFEST).write_text("{not json", encoding="utf-8")
    with pytest.raises(IndexMismatchError, match="not a valid index manifest"):
        load_index(data_dir)


def test_changed_corpus_file_logs_a_warning(corpus_file, data_dir, caplog):
    _build(corpus_file, data_dir)
    with caplog.at_level(logging.WARNING, logger="agentic_rag.knowledge.index"):
        load_index(data_dir, corpus_file=corpus_file)
    assert not [r for r in caplog.records if "changed since" in r.getMessage()]

    corpus_file.write_text(corpus_file.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agentic_rag.knowledge.index"):
        loaded = load_index(data_dir, corpus_file=corpus_file)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "changed since" in r.getMessage()]
    assert len(warnings) == 1 and "init_index.py" in warnings[0].getMessage()
    assert loaded.manifest.doc_count == 6  # still usable


# ---------------------------------------------------------------------------------------------- atomic build
SLOW_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from agentic_rag.knowledge.corpus import load_corpus
    from agentic_rag.knowledge.index import build_index
    from agentic_rag.retrieval.tokenizer import char_bigrams

    class Tok:
        version = "fake-tokenizer-1"
        tokenize = staticmethod(char_bigrams)

    class SlowEmbedder:
        model_id, dim = "fake-embedder", 16
        def encode_documents(self, texts, show_progress=False):
            Path(sys.argv[3]).write_text("embedding")
            time.sleep(300)

    data_dir, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    build_index(load_corpus(corpus), SlowEmbedder(), Tok(), data_dir, corpus_source=str(corpus), force=True)
""")


def test_killed_build_leaves_the_previous_index_usable(corpus_file, data_dir, tmp_path):
    good = _build(corpus_file, data_dir)
    manifest_bytes = (data_dir / MANIFEST).read_bytes()
    script = tmp_path / "slow_build.py"
    script.write_text(SLOW_BUILD.format(root=str(PROJECT_ROOT)), encoding="utf-8")
    flag = tmp_path / "embedding.flag"
    proc = hermetic.popen([sys.executable, str(script), str(data_dir), str(corpus_file), str(flag)],
                          cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (flag.exists() and list(data_dir.glob(".build-*"))):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the build subprocess never reached the embedding step"
            time.sleep(0.05)
        partial = list(data_dir.glob(".build-*"))
        assert len(partial) == 1 and (partial[0] / "tokens.jsonl").exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    assert (data_dir / MANIFEST).read_bytes() == manifest_bytes
    loaded = load_index(data_dir, "fake-embedder", 16)
    assert loaded.manifest.index_dir == good.index_dir and len(loaded.documents) == 6
    assert list(data_dir.glob(".build-*")) == partial  # the stale folder is still there …

    rebuilt = _build(corpus_file, data_dir, force=True)  # … until the next build, which holds the lock, cleans it
    assert not list(data_dir.glob(".build-*"))
    assert load_index(data_dir).manifest.index_dir == rebuilt.index_dir


# ---------------------------------------------------------------------------------------------- resumable embedding
def _lrb_corpus(tmp_path, n: int = 23) -> Path:
    """A small LawRefBook-style corpus (more documents than the 6-line law file, for several chunks)."""
    import gzip

    path = tmp_path / "lrb.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"law": f"测试法{i % 3}", "category": "法律", "path": f"法律/测试法{i % 3}.md",
                                "article": f"第{i + 1}条", "seq": i, "text": f"第{i}号测试条文，规定第{i}种情形的处理。"},
                               ensure_ascii=False) + "\n")
    return path


def _vectors(data_dir: Path) -> np.ndarray:
    store = load_index(data_dir).store
    return store.vectors(list(range(len(store))))


def test_killed_embedding_resumes_from_the_last_chunk(tmp_path):
    corpus = _lrb_corpus(tmp_path)
    docs = load_corpus(corpus)
    assert len(docs) == 23

    one_shot = tmp_path / "one_shot"
    build_index(docs, FakeEmbedder(), FakeTokenizer(), one_shot, corpus_source=str(corpus), chunk_size=5)

    data_dir = tmp_path / "data"
    dying = FakeEmbedder(fail_after=10)  # chunks of 5: two finished chunks (10 docs), the third dies
    with pytest.raises(KeyboardInterrupt):
        build_index(docs, dying, FakeTokenizer(), data_dir, corpus_source=str(corpus), chunk_size=5)
    assert not (data_dir / MANIFEST).exists()
    build = data_dir / build_dir_name(corpus_sha256(docs), "fake-embedder")
    progress = json.loads((build / CHECKPOINT_DIR / PROGRESS_FILE).read_text(encoding="utf-8"))
    assert progress["done"] == [0, 1] and progress["n_chunks"] == 5
    assert progress["key"]["embedder_id"] == "fake-embedder" and progress["key"]["corpus_sha256"] == corpus_sha256(docs)
    assert sorted(p.name for p in (build / CHECKPOINT_DIR).glob("*.npy")) == ["chunk-00000.npy", "chunk-00001.npy"]

    resumed = FakeEmbedder()
    manifest = build_index(docs, resumed, FakeTokenizer(), data_dir, corpus_source=str(corpus), chunk_size=5)
    assert resumed.texts == [d.index_text for d in docs[10:]]  # only the remaining chunks were embedded
    assert manifest.doc_count == 23
    np.testing.assert_array_equal(_vectors(data_dir), _vectors(one_shot))
    assert (data_dir / manifest.index_dir / "documents.jsonl").read_bytes() == \
        (one_shot / read_manifest(one_shot).index_dir / "documents.jsonl").read_bytes()
    assert not list(data_dir.glob(".build-*"))  # the checkpoint went with the finished build
    assert [p.name for p in data_dir.rglob("*.npy")] == ["law_vectors.npy"]  # no checkpoint chunk left behind


def test_checkpoint_of_another_embedder_or_chunking_is_not_reused(tmp_path):
    corpus = _lrb_corpus(tmp_path, n=12)
    docs = load_corpus(corpus)
    data_dir = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        build_index(docs, FakeEmbedder(fail_after=4), FakeTokenizer(), data_dir, corpus_source="x", chunk_size=4)
    other = FakeEmbedder(model_id="other-embedder")
    build_index(docs, other, FakeTokenizer(), data_dir, corpus_source="x", chunk_size=4)
    assert len(other.texts) == 12  # another embedder's vectors are never mixed in
    assert not list(data_dir.glob(".build-*"))  # and the stale checkpoint was removed

    data_dir2 = tmp_path / "data2"
    with pytest.raises(KeyboardInterrupt):
        build_index(docs, FakeEmbedder(fail_after=4), FakeTokenizer(), data_dir2, corpus_source="x", chunk_size=4)
    rechunked = FakeEmbedder()
    build_index(docs, rechunked, FakeTokenizer(), data_dir2, corpus_source="x", chunk_size=3)
    assert len(rechunked.texts) == 12  # other chunk boundaries: start over


def test_a_torn_chunk_file_is_embedded_again(tmp_path):
    corpus = _lrb_corpus(tmp_path, n=12)
    docs = load_corpus(corpus)
    data_dir = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        build_index(docs, FakeEmbedder(fail_after=8), FakeTokenizer(), data_dir, corpus_source="x", chunk_size=4)
    ckpt = data_dir / build_dir_name(corpus_sha256(docs), "fake-embedder") / CHECKPOINT_DIR
    (ckpt / "chunk-00001.npy").write_bytes(b"\x93NUMPY torn")
    again = FakeEmbedder()
    build_index(docs, again, FakeTokenizer(), data_dir, corpus_source="x", chunk_size=4)
    assert again.texts == [d.index_text for d in docs[4:]]
    np.testing.assert_allclose(_vectors(data_dir)[5], FakeEmbedder()._vec(docs[5].index_text), atol=1e-6)


def test_embedding_progress_is_logged_with_rate_and_eta(tmp_path, caplog):
    corpus = _lrb_corpus(tmp_path, n=9)
    docs = load_corpus(corpus)
    with caplog.at_level(logging.INFO, logger="agentic_rag.knowledge.embedding"):
        build_index(docs, FakeEmbedder(), FakeTokenizer(), tmp_path / "data", corpus_source="x", chunk_size=4)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("embedded chunk")]
    assert len(lines) == 3 and "3/3 (9/9 documents)" in lines[-1]
    assert all("docs/s" in line and "ETA" in line for line in lines)


RESUMABLE_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    sys.path.insert(0, {tests!r})
    from agentic_rag.knowledge.corpus import load_corpus
    from agentic_rag.knowledge.index import build_index
    from test_index import FakeEmbedder, FakeTokenizer

    class HangingEmbedder(FakeEmbedder):  # embeds two chunks, then hangs in the third until killed
        def encode_documents(self, texts, show_progress=False):
            if len(self.texts) >= 10:
                Path(sys.argv[3]).write_text("hanging")
                time.sleep(300)
            return super().encode_documents(texts)

    data_dir, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    build_index(load_corpus(corpus), HangingEmbedder(), FakeTokenizer(), data_dir, corpus_source=str(corpus),
                chunk_size=5)
""")


def test_sigkilled_build_resumes_from_its_checkpoint(tmp_path):
    corpus = _lrb_corpus(tmp_path)
    docs = load_corpus(corpus)
    data_dir = tmp_path / "data"
    script = tmp_path / "resumable_build.py"
    script.write_text(RESUMABLE_BUILD.format(root=str(PROJECT_ROOT), tests=str(Path(__file__).parent)),
                      encoding="utf-8")
    flag = tmp_path / "hanging.flag"
    proc = hermetic.popen([sys.executable, str(script), str(data_dir), str(corpus), str(flag)], cwd=tmp_path,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the build subprocess never reached the third chunk"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert not (data_dir / MANIFEST).exists()

    resumed = FakeEmbedder()
    build_index(docs, resumed, FakeTokenizer(), data_dir, corpus_source=str(corpus), chunk_size=5)
    assert resumed.texts == [d.index_text for d in docs[10:]]
    one_shot = tmp_path / "one_shot"
    build_index(docs, FakeEmbedder(), FakeTokenizer(), one_shot, corpus_source=str(corpus), chunk_size=5)
    np.testing.assert_array_equal(_vectors(data_dir), _vectors(one_shot))


# ---------------------------------------------------------------------------------------------- clean_index
def test_clean_removes_exactly_the_manifest_files(corpus_file, data_dir):
    manifest = _build(corpus_file, data_dir)
    (data_dir / "notes.txt").write_text("mine", encoding="utf-8")
    (data_dir / "other").mkdir()
    (data_dir / "other" / "keep.bin").write_bytes(b"\x00")
    removed = clean_index(data_dir)
    assert sorted(removed) == sorted([(data_dir / f).resolve() for f in manifest.files] + [data_dir.resolve() / MANIFEST])
    assert all(not p.exists() for p in removed)
    assert not (data_dir / manifest.index_dir).exists()  # emptied, so removed
    assert (data_dir / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (data_dir / "other" / "keep.bin").exists()
    assert clean_index(data_dir) == []  # nothing left to remove
    with pytest.raises(IndexNotFoundError):
        load_index(data_dir)


def test_clean_keeps_an_index_folder_holding_foreign_files(corpus_file, data_dir):
    manifest = _build(corpus_file, data_dir)
    (data_dir / manifest.index_dir / "README.txt").write_text("not ours", encoding="utf-8")
    clean_index(data_dir)
    assert (data_dir / manifest.index_dir / "README.txt").exists()
    assert not (data_dir / manifest.files[0]).exists()


def test_clean_dry_run_removes_nothing(corpus_file, data_dir):
    manifest = _build(corpus_file, data_dir)
    before = sorted(p for p in data_dir.rglob("*"))
    listed = clean_index(data_dir, dry_run=True)
    assert len(listed) == len(manifest.files) + 1
    assert sorted(p for p in data_dir.rglob("*")) == before
    assert load_index(data_dir).manifest == manifest


def test_clean_refuses_paths_outside_the_data_dir(corpus_file, data_dir, tmp_path):
    manifest = _build(corpus_file, data_dir)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious", encoding="utf-8")
    raw = json.loads((data_dir / MANIFEST).read_text(encoding="utf-8"))
    raw["files"] = raw["files"] + ["../outside.txt"]
    (data_dir / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(IndexError_, match="outside the data dir"):
        clean_index(data_dir)
    assert outside.read_text(encoding="utf-8") == "precious"
    assert all((data_dir / f).exists() for f in manifest.files)  # refused before removing anything
    assert (data_dir / MANIFEST).exists()


# ---------------------------------------------------------------------------------------------- the scripts
def _run_script(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return hermetic.run([sys.executable, *args], cwd=cwd, env_extra={"PYTHONPATH": str(PROJECT_ROOT)},
                        capture_output=True, text=True, timeout=120)


def test_init_index_script_on_malformed_corpus_exits_1_with_line_number(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(CORPUS_LINES[0] + "\n这一行没有法律名称\n" + CORPUS_LINES[1] + "\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    proc = _run_script(str(PROJECT_ROOT / "init_index.py"), "--corpus", str(bad), "--data-dir", str(data_dir),
                       cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "line 2:" in proc.stderr and "--allow-malformed" in proc.stderr
    assert "line 1:" not in proc.stderr and "line 3:" not in proc.stderr
    assert not (data_dir / MANIFEST).exists()


def test_clean_index_script_dry_run_lists_files(corpus_file, data_dir, tmp_path):
    manifest = _build(corpus_file, data_dir)
    proc = _run_script(str(PROJECT_ROOT / "clean_index.py"), "--data-dir", str(data_dir), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(manifest.files) + 1 and all(line.startswith("would remove ") for line in lines)
    assert any(line.endswith(MANIFEST) for line in lines)
    assert all((data_dir / f).exists() for f in manifest.files)

    proc = _run_script(str(PROJECT_ROOT / "clean_index.py"), "--data-dir", str(data_dir), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.count("removed ") == len(manifest.files) + 1
    assert not (data_dir / MANIFEST).exists()


def test_init_index_main_builds_then_skips(corpus_file, data_dir, monkeypatch, capsys):
    import init_index

    embedder = FakeEmbedder()
    monkeypatch.setattr(init_index, "resolve_embedder", lambda explicit, models_dir: None)
    monkeypatch.setattr(init_index, "load_embedder", lambda resolved, *args, **kwargs: embedder)
    args = ["--corpus", str(corpus_file), "--data-dir", str(data_dir)]
    assert init_index.main(args) == 0
    first = read_manifest(data_dir)
    assert "index: 6 documents (中华人民共和国个人信息保护法), embedder fake-embedder (16 dims)" in capsys.readouterr().out
    assert first.corpus_file_sha256 == file_sha256(corpus_file)
    assert first.tokenizer_version.startswith("jieba-")
    assert init_index.main(args) == 0
    assert read_manifest(data_dir).index_dir == first.index_dir and embedder.calls == BUILD_CALLS
    assert init_index.main([*args, "--force"]) == 0
    assert read_manifest(data_dir).index_dir != first.index_dir and embedder.calls == 2 * BUILD_CALLS
