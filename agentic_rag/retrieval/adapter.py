"""A query-side adapter: a learned linear correction of the question's vector; the articles' vectors stay as built.

    q' = normalise(q + s·q·W)      W: dim × dim; W = 0 (or s = 0) is the embedder as it is

Lay questions ("欠钱不还怎么办") and statute text ("借款人应当按照约定的期限返还借款") sit in different regions of an
embedder's space. A correction fitted on labelled lay questions moves a question towards the kind of article that
answers it, without re-embedding the collection. It is trained with a softmax over every article of the index
(each gold article against all the others, temperature `TAU`) by AdamW, whose weight decay pulls W back to 0, and
stopped where an inner validation part of the training questions stops improving. Fitted on one kind of question
(STARD's), the full correction also pulls other kinds towards that kind's laws; the strength s is therefore chosen
on questions of several kinds it was not fitted on (bench/stard_adapter.py).

It is fitted by `bench/adapter_fit.py` (not part of the runtime package). Two are made with it:
`bench/stard_adapter.py` writes a national index's own (`<DATA_DIR>/query_adapter.npy` + `.json`: the embedder it
was fitted for, on which questions, how it scored), and `bench/lay_adapter.py` the one shipped in `resources/` for
the PIPL and six-law knowledge bases (STARD's lay questions of those laws and this project's dev halves).

The adapter gives the dense channel's hits (retrieval/channels.py): their order and their cosines, which are the
gate's evidence (its weights were fitted on them: eval/calibrate_gate.py). The plain question's cosines stay what
the similarity floor and the router read (their thresholds were chosen on those), and the answer's clause choice
embeds the question itself.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..knowledge.errors import IndexMismatchError, IndexNotFoundError

log = logging.getLogger(__name__)

ADAPTER_FILE = "query_adapter.npy"


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


SHIPPED = Path(__file__).resolve().parent.parent / "resources" / ADAPTER_FILE


def load_adapter(embedder_id: str, dim: int, settings) -> QueryAdapter | None:
    """The query adapter QUERY_ADAPTER names; unset: <DATA_DIR>/query_adapter.npy when there is one (a national
    index's), else the shipped one for lay questions (bench/lay_adapter.py) when it was fitted for this embedder;
    "none": never. An adapter named explicitly, or the index's own, must fit the embedder (an error says so); the
    shipped one is left out for another embedder."""
    choice = (settings.query_adapter or "").strip()
    if choice.lower() == "none":
        return None
    path = Path(choice) if choice else Path(settings.data_dir) / ADAPTER_FILE
    if not path.exists():
        if choice:
            raise IndexNotFoundError(f"QUERY_ADAPTER={choice}: no such file (unset it, or set it to none)")
        return _shipped(embedder_id, dim)
    adapter = QueryAdapter.load(path, embedder_id, dim)
    log.info("query adapter %s (%s)", path.name, adapter.provenance.get("fitted_on", "provenance unknown"))
    return adapter


def _shipped(embedder_id: str, dim: int) -> QueryAdapter | None:
    if not SHIPPED.exists():
        return None
    try:
        return QueryAdapter.load(SHIPPED, embedder_id, dim)
    except AdapterMismatchError:
        log.info("the shipped query adapter is for another embedder: questions are searched as embedded")
        return None


def adapt(q: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    if w is None:
        return q
    out = q + q @ w
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)
