#!/usr/bin/env python3
"""Query likelihood (UPR, Sachan et al. 2022) as per-article relevance evidence: is log P(question | article) from
the embedded 1.5B a better judge of which retrieved article governs than its 是/否 logit? (stop 38, not shipped)

For the questions of the gate's collected features (`eval/results/gate_features.jsonl`, its dev part, and the lay
answers test half `gate_features_answers_test.jsonl`), each retrieved article is put before an instruction to
write a question a layperson could ask about it, and the question's mean token log-probability is read (the model
loaded with all logits); the same with no article gives the question's own likelihood (PMI = the difference).
`report` fits the per-article logistic model (the gate's features, `calibrate_gate.fit_logistic`, balanced) on dev
with the likelihood added in three forms, and scores the held-out answers test half: AUROC per article and how
often the article it rates highest is gold.

    .venv/bin/python eval/query_likelihood_probe.py collect   # ~10 s per question on 2 cores, resumable
    .venv/bin/python eval/query_likelihood_probe.py report [--json eval/results/query_likelihood_probe.json]
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

RESULTS = ROOT / "eval" / "results"
OUT = RESULTS / "query_likelihood_probe.jsonl"
HEAD = ("<|im_start|>system\n你是法律助手。<|im_end|>\n<|im_start|>user\n以下是一条法律条文：\n{a}\n\n"
        "请写出一个普通人可能会问、并且可以直接用这条法条回答的问题。<|im_end|>\n<|im_start|>assistant\n")


def feature_rows() -> tuple[list[dict], list[dict]]:
    rows = [json.loads(line) for line in open(RESULTS / "gate_features.jsonl", encoding="utf-8")]
    part = cg.split(rows)
    test = [json.loads(line) for line in open(RESULTS / "gate_features_answers_test.jsonl", encoding="utf-8")]
    return [r for r in rows if part[r["id"]] == "dev"], test


def article_texts(rows: list[dict]) -> dict:
    from agentic_rag.knowledge.corpus import load_law_text, parse_lawrefbook

    texts = {d.article: d.text for d in load_law_text(ROOT / "chinese_law.txt")}
    laws = {k.split(":")[0] for r in rows for k in r["articles"] if isinstance(k, str)}
    corpus = ROOT.parent / "shared" / "data" / "lawrefbook" / "lawrefbook_articles.jsonl.gz"
    texts.update({f"{d.law}:{d.article}": d.text for d in parse_lawrefbook(corpus, laws=laws).documents})
    return texts


def collect(out: Path) -> None:
    from llama_cpp import Llama

    from agentic_rag.config import get_settings
    from agentic_rag.llm.local import local_model_path

    dev, test = feature_rows()
    rows = test + dev  # the held-out half first: a run stopped early still reports on it
    queries = {q["id"]: q["query"] for name in ("pipl_eval", "multilaw_eval", "answers_eval")
               for q in map(json.loads, open(ROOT / "eval" / f"{name}.jsonl", encoding="utf-8"))}
    texts = article_texts(rows)
    s = get_settings()
    llm = Llama(model_path=str(local_model_path(s.local_llm, s)), n_ctx=1024, n_threads=s.local_llm_threads,
                logits_all=True, verbose=False)

    def likelihood(article: str, question: str) -> float:
        head = llm.tokenize(HEAD.format(a=article[:600]).encode(), add_bos=False, special=True)
        q = llm.tokenize(question.encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(head + q)
        scores = np.array(llm.scores[len(head) - 1: len(head) + len(q) - 1])
        top = scores.max(1, keepdims=True)
        logp = scores - top - np.log(np.exp(scores - top).sum(1, keepdims=True))
        return float(np.mean(logp[np.arange(len(q)), q]))

    done = {json.loads(line)["id"] for line in open(out, encoding="utf-8")} if out.exists() else set()
    with open(out, "a", encoding="utf-8") as f:
        for r in (r for r in rows if r["id"] not in done):
            q = queries[r["id"]]
            f.write(json.dumps({"id": r["id"], "ql": [likelihood(texts[k], q) for k in r["articles"]],
                                "base": likelihood("（无）", q)}) + "\n")
            f.flush()


FORMS = {  # extra per-article features besides the gate's (d, 1/(rank+1), cosine)
    "gate features (shipped)": lambda d, ql, i: [],
    "+ relative logit d − max d": lambda d, ql, i: [d[i] - max(d)],
    "+ PMI": lambda d, ql, i: [ql["ql"][i] - ql["base"]],
    "+ PMI + relative likelihood": lambda d, ql, i: [ql["ql"][i] - ql["base"], ql["ql"][i] - max(ql["ql"])],
    "+ relative logit + PMI + relative likelihood": lambda d, ql, i: [d[i] - max(d), ql["ql"][i] - ql["base"],
                                                                      ql["ql"][i] - max(ql["ql"])],
    "likelihood alone (PMI)": None,
}


def features(r: dict, ql: dict, form: str) -> list[list[float]]:
    extra = FORMS[form]
    if extra is None:
        return [[ql[r["id"]]["ql"][i] - ql[r["id"]]["base"]] for i in range(len(r["articles"]))]
    return [[d, 1 / (i + 1), c] + extra(r["diffs"], ql[r["id"]], i)
            for i, (d, c) in enumerate(zip(r["diffs"], r["cosines"]))]


def scored(rows: list[dict], ql: dict, form: str, w=None):
    x = np.array([f for r in rows for f in features(r, ql, form)])
    y = np.array([float(a in r["gold"]) for r in rows for a in r["articles"]])
    w = cg.fit_logistic(x, y, cg.balanced(y)) if w is None else w
    top, n, at = 0, 0, 0
    for r in rows:
        k = len(r["articles"])
        s = x[at:at + k] @ w[1:] + w[0]
        at += k
        if set(r["gold"]) & set(r["articles"]):
            n += 1
            top += r["articles"][int(s.argmax())] in r["gold"]
    p = x @ w[1:] + w[0]
    return w, {"auroc": cg.auroc(list(p[y == 1]), list(p[y == 0])), "judged_best_is_gold": f"{top}/{n}"}


def report(out: Path) -> dict:
    ql = {r["id"]: r for r in map(json.loads, open(out, encoding="utf-8"))}
    dev, test = (list(filter(lambda r: r["id"] in ql, rows)) for rows in feature_rows())
    first = sum(r["articles"][0] in r["gold"] for r in test if set(r["gold"]) & set(r["articles"]))
    result = {"questions": {"dev": len(dev), "answers_test": len(test)},
              "retriever_first_is_gold_test": f"{first}/{sum(bool(set(r['gold']) & set(r['articles'])) for r in test)}"}
    for form in FORMS:
        w, fit = scored(dev, ql, form)
        result[form] = {"dev_in_sample": fit, "answers_test": scored(test, ql, form, w)[1]}
    return result


def main() -> int:
    return probe_main(__doc__, OUT, collect, report)


if __name__ == "__main__":
    sys.exit(main())
