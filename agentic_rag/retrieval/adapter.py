"""A query-side adapter: a learned linear correction of the question's vector; the articles' vectors stay as built.

    q' = normalise(q + s·q·W)      W: dim × dim; W = 0 (or s = 0) is the embedder as it is

Lay questions ("欠钱不还怎么办") and statute text ("借款人应当按照约定的期限返还借款") sit in different regions of an
embedder's space. A correction fitted on labelled lay questions moves a question towards the kind of article that
answers it, without re-embedding the collection. It is trained with a softmax over every article of the index
(each gold article against all the others, temperature `TAU`) by AdamW, whose weight decay pulls W back to 0, and
stopped where an inner validation part of the training questions stops improving. Fitted on one kind of question
(STARD's), the full correction also pulls other kinds towards that kind's laws; the strength s is therefore chosen
on questions of several kinds it was not fitted on (bench/stard_adapter.py).

`bench/stard_adapter.py` measures it on STARD out of fold (new topics included) and on questions it was not trained
for, and writes the one a national index uses: `<DATA_DIR>/query_adapter.npy` with `query_adapter.json` beside it
(the embedder it was fitted for, on which questions, how it scored), picked up by the retriever (QUERY_ADAPTER).
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..eval.metrics import mrr_at, recall_at
from ..knowledge.errors import IndexMismatchError, IndexNotFoundError

log = logging.getLogger(__name__)

ADAPTER_FILE = "query_adapter.npy"
TAU = 0.05
LR = 3e-4
WEIGHT_DECAY = 0.01
BATCH = 64
MAX_EPOCHS = 40
VAL_EVERY = 7  # every 7th training question validates (≈ 14 %)
PATIENCE = 5
DEPTH = 100


class AdapterMismatchError(IndexMismatchError):
    """The adapter was fitted for another embedder: its correction means nothing for these vectors."""


@dataclass
class QueryAdapter:
    weights: np.ndarray
    embedder_id: str
    provenance: dict = field(default_factory=dict)
    strength: float = 1.0  # q + strength·qW: how far questions are moved (chosen on held-out questions)

    def apply(self, q: np.ndarray) -> np.ndarray:
        return adapt(q, self.strength * self.weights)

    def save(self, path: Path) -> None:
        """`path` (.npy) and its .json sidecar, each written to a temporary file and renamed into place."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            np.save(f, self.weights.astype(np.float32), allow_pickle=False)
        meta = {"embedder_id": self.embedder_id, "dim": int(self.weights.shape[0]), "strength": self.strength,
                **self.provenance}
        tmp_meta = path.with_suffix(".json.tmp")
        tmp_meta.write_text(json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8")
        os.replace(tmp, path)
        os.replace(tmp_meta, path.with_suffix(".json"))

    @classmethod
    def load(cls, path: Path, embedder_id: str, dim: int) -> QueryAdapter:
        path = Path(path)
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        weights = np.load(path, allow_pickle=False)
        if meta.get("embedder_id") != embedder_id or weights.shape != (dim, dim):
            raise AdapterMismatchError(
                f"query adapter {path.name} was fitted for embedder {meta.get('embedder_id')!r} "
                f"({weights.shape[0]} dims), the index uses {embedder_id!r} ({dim} dims): refit it "
                "(bench/stard_adapter.py --save) or set QUERY_ADAPTER=none")
        return cls(weights.astype(np.float32), embedder_id, meta, float(meta.get("strength", 1.0)))


class AdaptedEmbedder:
    """The embedder with the adapter on its query side; documents, id and dimension are the embedder's own."""

    def __init__(self, embedder, adapter: QueryAdapter):
        self._embedder, self.adapter = embedder, adapter
        self.model_id, self.dim = embedder.model_id, embedder.dim

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.adapter.apply(self._embedder.encode_queries(texts))

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self._embedder.encode_documents(texts, show_progress)


def with_adapter(embedder, settings):
    """The embedder, with the query adapter QUERY_ADAPTER names (default: <DATA_DIR>/query_adapter.npy when there
    is one; "none": never)."""
    choice = (settings.query_adapter or "").strip()
    if choice.lower() == "none":
        return embedder
    path = Path(choice) if choice else Path(settings.data_dir) / ADAPTER_FILE
    if not path.exists():
        if choice:
            raise IndexNotFoundError(f"QUERY_ADAPTER={choice}: no such file (unset it, or set it to none)")
        return embedder
    adapter = QueryAdapter.load(path, embedder.model_id, embedder.dim)
    log.info("query adapter %s (%s)", path.name, adapter.provenance.get("fitted_on", "provenance unknown"))
    return AdaptedEmbedder(embedder, adapter)


def adapt(q: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    if w is None:
        return q
    out = q + q @ w
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def top_rows(q: np.ndarray, docs: np.ndarray, depth: int = DEPTH, chunk: int = 256) -> np.ndarray:
    """(n, depth) document rows by cosine, best first."""
    depth = min(depth, len(docs))
    out = np.zeros((len(q), depth), dtype=np.int64)
    for s in range(0, len(q), chunk):
        sims = q[s:s + chunk] @ docs.T
        part = np.argpartition(-sims, depth - 1, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable")
        out[s:s + chunk] = np.take_along_axis(part, order, axis=1)
    return out


def validation_score(q: np.ndarray, gold_rows: list[list[int]], docs: np.ndarray, w: np.ndarray | None) -> float:
    """Recall@100 + MRR@10 over these questions (what the epochs are chosen by)."""
    total = 0.0
    for ranked, gold in zip(top_rows(adapt(q, w), docs), gold_rows):
        ranked, gold = list(map(int, ranked)), set(gold)
        total += recall_at(ranked, gold, DEPTH) + mrr_at(ranked, gold, 10)
    return total / max(1, len(gold_rows))


def train(q: np.ndarray, gold_rows: list[list[int]], docs: np.ndarray, seed: int = 0) -> tuple:
    """W fitted on these questions (rows of `docs` are their gold articles); (W or None, what happened)."""
    import torch

    idx = np.arange(len(q))
    val, fit = idx[idx % VAL_EVERY == VAL_EVERY - 1], idx[idx % VAL_EVERY != VAL_EVERY - 1]
    d, qt = torch.from_numpy(np.ascontiguousarray(docs)), torch.from_numpy(np.ascontiguousarray(q))
    w = torch.zeros((q.shape[1], q.shape[1]), requires_grad=True)
    opt = torch.optim.AdamW([w], lr=LR, weight_decay=WEIGHT_DECAY)
    rng = np.random.default_rng(seed)
    val_gold = [gold_rows[i] for i in val]
    best = (validation_score(q[val], val_gold, docs, None), 0, None)
    history = [{"epoch": 0, "val": round(best[0], 4)}]
    for epoch in range(1, MAX_EPOCHS + 1):
        order = rng.permutation(fit)
        for batch in (order[s:s + BATCH] for s in range(0, len(order), BATCH)):
            x = qt[batch] + qt[batch] @ w
            logp = torch.log_softmax((x / x.norm(dim=1, keepdim=True)) @ d.T / TAU, dim=1)
            loss = -torch.stack([logp[i, gold_rows[b]].mean() for i, b in enumerate(batch)]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        current = w.detach().numpy().copy()
        score = validation_score(q[val], val_gold, docs, current)
        history.append({"epoch": epoch, "val": round(score, 4), "loss": round(loss.item(), 4)})
        if score > best[0]:
            best = (score, epoch, current)
        elif epoch - best[1] >= PATIENCE:
            break
    return best[2], {"best_epoch": best[1], "history": history, "n_fit": len(fit), "n_val": len(val),
                     "config": {"tau": TAU, "lr": LR, "weight_decay": WEIGHT_DECAY, "batch": BATCH,
                                "max_epochs": MAX_EPOCHS, "val_every": VAL_EVERY, "patience": PATIENCE}}
