"""Fitting the query-side adapter (agentic_rag/retrieval/adapter.py applies it at run time; this is training code and
stays out of the runtime package): a softmax over every article of the index, AdamW whose weight decay pulls W back
to 0, early stopping on an inner validation part of the training questions (R@100 + MRR@10)."""
from __future__ import annotations

import numpy as np

from agentic_rag.eval.metrics import mrr_at, recall_at
from agentic_rag.retrieval.adapter import ADAPTER_FILE, AdapterMismatchError, QueryAdapter, adapt  # noqa: F401

TAU = 0.05
LR = 3e-4
WEIGHT_DECAY = 0.01
BATCH = 64
MAX_EPOCHS = 40
VAL_EVERY = 7  # every 7th training question validates (≈ 14 %)
PATIENCE = 5
DEPTH = 100


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
