#!/usr/bin/env python3
"""Can the embedded model tell which retrieved article governs when it sees them side by side? (stop 45, a probe)

The gate judges each article alone (logit(是) − logit(否), `stages/grade/prompt.py`) and its best article is always
the retriever's first: the pointwise logit does not reorder. Here, on the gate's own prefix (question + the articles
block), the model is asked once which of the listed articles decides the question, answering with a number; the
probabilities of the digit tokens are read. To take the model's liking for 「1」 out of the reading, the articles
are numbered twice (in retrieval order and reversed) and each article's two probabilities averaged.

    .venv/bin/python eval/listwise_probe.py collect [--out eval/results/listwise_probe.jsonl]   # ~8 s a question
    .venv/bin/python eval/listwise_probe.py report  [--json eval/results/listwise_probe.json]

Rows: the answers set's dev and test halves and the 150 synthetic round-2 questions (`calibrate_gate.py`), each
against its own knowledge base. Report: how often the listwise pick, the retriever's first and the two combined
are gold (where a gold article was retrieved), and the AUROC of "the first article governs" for the listwise
probability of the first article against the pointwise logit.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

import calibrate_gate as cg  # noqa: E402
from report_io import probe_main  # noqa: E402

OUT = ROOT / "eval" / "results" / "listwise_probe.jsonl"
ASK = "【任务】上面检索到的法条中，哪一条直接决定了用户问题的答案？候选：{options}。只回答一个序号。"


def digit_probabilities(llama, system: str, prefix: str, tails: list[str], n: int) -> list[list[float]]:
    """Per tail, the softmax over the tokens 「1」…「n」 at the answer's first position (the prefix evaluated once)."""
    from agentic_rag.llm.scoring import CHATML_TAIL, _tokens, eval_prefix

    digits = [_tokens(llama, str(i + 1))[0] for i in range(n)]
    eval_prefix(llama, system, prefix)
    base, out = llama.n_tokens, []
    for tail in tails:
        llama.n_tokens = base
        llama.eval(_tokens(llama, tail + CHATML_TAIL))
        logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),))[digits]
        p = np.exp(logits - logits.max())
        out.append((p / p.sum()).round(4).tolist())
    return out


def listwise(labels: list[str]) -> tuple[list[str], list[list[int]]]:
    """Two numberings of the articles (retrieval order, reversed): the tails and, per tail, article index → number."""
    orders = [list(range(len(labels))), list(reversed(range(len(labels))))]
    tails = [ASK.format(options="；".join(f"{k + 1}. {labels[i]}" for k, i in enumerate(order))) for order in orders]
    return tails, orders


def collect(out: Path) -> None:
    import time

    from agentic_rag.config import get_settings
    from agentic_rag.llm.local import load_model, local_model_path
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.stages.base import SYSTEM
    from agentic_rag.stages.evidence import label, prompt_articles, shared_prefix

    settings = get_settings().model_copy(update={"reranker": "none"})
    retrievers = {kb: LocalRetriever.from_settings(settings.model_copy(update={"data_dir": ROOT / d}))
                  for kb, d in (("pipl", "data"), ("multilaw", "data-multilaw"))}
    llama = load_model(local_model_path(settings.local_llm, settings), settings).llama
    done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()} if out.exists() else set()
    rows = [*cg.answers_rows("dev"), *cg.answers_rows("test"), *cg.synthetic_rows()]
    for row, kb, gold in (r for r in rows if r[0]["id"] not in done):
        one_law, started = kb == "pipl", time.perf_counter()
        articles = prompt_articles(retrievers[kb].retrieve(row["query"]).articles)
        if len(articles) < 2:
            continue
        tails, orders = listwise([label(a, one_law) for a in articles])
        probs = digit_probabilities(llama, SYSTEM, shared_prefix(row["query"], articles, one_law), tails, len(articles))
        per_article = [round(float(np.mean([p[order.index(i)] for p, order in zip(probs, orders)])), 4)
                       for i in range(len(articles))]
        line = {"id": row["id"], "split": "synthetic" if row["set"] == "synthetic_round2" else row["split"],
                "gold": gold or [], "in_scope": bool(gold), "articles": [cg.article_key(a, one_law) for a in articles],
                "p_list": per_article, "p_by_numbering": probs, "seconds": round(time.perf_counter() - started, 2)}
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
        print(f"{row['id']:12} gold={gold} top={line['articles'][:3]} p={per_article} {line['seconds']}s", flush=True)


def report(out: Path) -> dict:
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = {}
    for split in ("dev", "test", "synthetic"):
        rs = [r for r in rows if r["split"] == split and r["in_scope"] and set(r["gold"]) & set(r["articles"])]
        pick = [r["articles"][int(np.argmax(r["p_list"]))] in r["gold"] for r in rs]
        first = [r["articles"][0] in r["gold"] for r in rs]
        p_first = [r["p_list"][0] for r in rs]
        result[split] = {"n_gold_retrieved": len(rs), "first_is_gold": int(sum(first)),
                         "listwise_pick_is_gold": int(sum(pick)),
                         "pick_agrees_with_first": int(sum(int(np.argmax(r["p_list"])) == 0 for r in rs)),
                         "gold_when_they_agree": int(sum(f for f, r in zip(first, rs) if np.argmax(r["p_list"]) == 0)),
                         "auroc_first_governs_p_list": cg.auroc([p for p, f in zip(p_first, first) if f],
                                                                [p for p, f in zip(p_first, first) if not f])}
    return result


def main() -> int:
    return probe_main(__doc__, OUT, collect, report)


if __name__ == "__main__":
    sys.exit(main())
