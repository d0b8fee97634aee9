"""Model resolution: explicit setting > models/bge-m3 > models/embeddinggemma-300m; clear errors otherwise."""
from __future__ import annotations

from pathlib import Path

import pytest

from agentic_rag.weights import ModelNotAvailableError, resolve_embedder, resolve_reranker


def _model(folder: Path, marker: str = "config.json") -> Path:
    folder.mkdir(parents=True)
    (folder / marker).write_text("{}", encoding="utf-8")
    return folder


@pytest.fixture
def models_dir(tmp_path) -> Path:
    d = tmp_path / "models"
    d.mkdir()
    return d


def test_bge_m3_is_preferred_over_the_offline_pack(models_dir):
    _model(models_dir / "embeddinggemma-300m", ".complete.json")
    _model(models_dir / "bge-m3")
    r = resolve_embedder(None, models_dir)
    assert (r.model_id, r.path) == ("bge-m3", str(models_dir / "bge-m3"))


def test_offline_pack_when_bge_m3_is_absent(models_dir):
    _model(models_dir / "embeddinggemma-300m", ".complete.json")
    r = resolve_embedder(None, models_dir)
    assert (r.model_id, r.path) == ("embeddinggemma-300m", str(models_dir / "embeddinggemma-300m"))


def test_incomplete_bge_m3_folder_is_skipped(models_dir):
    (models_dir / "bge-m3").mkdir()  # an interrupted download: neither config.json nor the marker
    (models_dir / "bge-m3" / "model.safetensors").write_bytes(b"\x00")
    _model(models_dir / "embeddinggemma-300m", ".complete.json")
    assert resolve_embedder(None, models_dir).model_id == "embeddinggemma-300m"


def test_explicit_path_beats_everything(models_dir, tmp_path):
    _model(models_dir / "bge-m3")
    _model(models_dir / "embeddinggemma-300m", ".complete.json")
    mine = _model(tmp_path / "elsewhere" / "my-embedder")
    r = resolve_embedder(str(mine), models_dir)
    assert (r.model_id, r.path) == ("my-embedder", str(mine))


def test_explicit_name_under_models_dir(models_dir):
    _model(models_dir / "bge-m3")
    _model(models_dir / "text2vec-base-chinese")
    r = resolve_embedder("text2vec-base-chinese", models_dir)
    assert (r.model_id, r.path) == ("text2vec-base-chinese", str(models_dir / "text2vec-base-chinese"))


def test_explicit_single_file_counts_as_complete(models_dir):
    f = models_dir / "tiny.gguf"
    f.write_bytes(b"GGUF")
    assert resolve_embedder("tiny.gguf", models_dir).path == str(f)


def test_explicit_incomplete_folder_is_an_error(models_dir):
    (models_dir / "half-model").mkdir()
    with pytest.raises(ModelNotAvailableError, match="incomplete"):
        resolve_embedder("half-model", models_dir)


def test_explicit_missing_name_is_an_error_even_if_others_exist(models_dir):
    _model(models_dir / "bge-m3")
    with pytest.raises(ModelNotAvailableError) as exc:
        resolve_embedder("no-such-model", models_dir)
    assert "no-such-model" in str(exc.value) and "download_models.py" in str(exc.value)


def test_explicit_hub_id_not_in_the_cache_is_an_error(models_dir):
    with pytest.raises(ModelNotAvailableError, match="Hugging Face cache"):
        resolve_embedder("no-such-org/no-such-model-xyz", models_dir)


def test_nothing_found_names_download_models(models_dir):
    with pytest.raises(ModelNotAvailableError) as exc:
        resolve_embedder(None, models_dir)
    assert "download_models.py" in str(exc.value) and str(models_dir) in str(exc.value)


def test_reranker_resolution(models_dir):
    assert resolve_reranker(None, models_dir) is None  # nothing: the caller decides (auto → no reranker)
    _model(models_dir / "bge-reranker-v2-m3")
    r = resolve_reranker(None, models_dir)
    assert (r.model_id, r.path) == ("bge-reranker-v2-m3", str(models_dir / "bge-reranker-v2-m3"))
    with pytest.raises(ModelNotAvailableError, match="RERANKER_MODEL"):
        resolve_reranker("missing-reranker", models_dir)
