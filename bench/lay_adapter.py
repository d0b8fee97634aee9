#!/usr/bin/env python
"""The query adapter the shipped knowledge bases use (agentic_rag/resources/query_adapter.npy): fitted on lay
questions for the PIPL and six-law indexes, chosen on their dev halves, reported on everything else.

Training questions, each with its gold articles (law, number) in the six-law index:
  * STARD's official training split (never its dev split) where every gold article is in the six laws;
  * eval/synthetic_lay.jsonl: 540 lay questions written from the articles' own text, one per article of the five
    smaller laws and of 200 random 民法典 articles, none near an eval question (--synthetic none: without them;
    eval/synthetic_lay_round2.jsonl, 833 more, and --follow-ups were tried at stop 44 and not shipped);
  * the dev halves of this project's sets: the answers set, the PIPL and several-law eval sets (every other
    question of each type, eval/calibrate_gate.py's halves; article lookups left out: they are looked up, not
    searched) and the conversation set's turns with gold (their labelled standalone question).
The softmax is over every article of the six-law index (its stored vectors; the PIPL is one of the six laws, and a
PIPL question is ranked among the PIPL's articles only, as in the PIPL index). The strength s (q + s·qW) is chosen
among STRENGTHS by R@5 + MRR@10 in 5-fold cross-validation over the in-domain dev questions (each fold's adapter
is fitted on STARD, the synthetic questions and the other four folds). Reported, never used for a choice: the test
halves, the held-out fresh sets, STARD's dev split within the six laws, and each test set split by whether a gold
article was also gold of a dev question (how much of the gain could be recall of seen articles).

    .venv/bin/python bench/lay_adapter.py --index-dir data-multilaw --json bench/results/lay_adapter.json [--save]

~5 min on 2 cores (encoding ~1,750 questions, six fits). --save writes the adapter with its provenance into
agentic_rag/resources/ (query_adapter.npy + .json), or to --save PATH (a candidate to try with QUERY_ADAPTER=PATH).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adapter_fit as qa
from _common import PROJECT_ROOT, SHARED_DATA, log, write_json

sys.path.insert(0, str(PROJECT_ROOT / "eval"))
from calibrate_gate import split as gate_halves  # noqa: E402  the gate's dev / test halves of the eval sets

EVAL = PROJECT_ROOT / "eval"
STARD = SHARED_DATA / "stard"
OUT = PROJECT_ROOT / "agentic_rag" / "resources" / qa.ADAPTER_FILE
PIPL = "中华人民共和国个人信息保护法"
STRENGTHS = (0.25, 0.5, 0.75, 1.0)
FOLDS = 5
ARTICLE = re.compile(r"第[一二三四五六七八九十百千零]+条")


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _keys(gold) -> list[tuple[str, int]]:
    return [(PIPL, g) if isinstance(g, int) else (g["law"], g["article"]) for g in gold or []]


def project_questions() -> list[dict]:
    """Every labelled lay question of this project: {set, split, kb, text, gold}."""
    out = [{"set": "answers", "split": r["split"], "kb": r["kb"], "text": r["query"], "gold": _keys(r["gold"])}
           for r in _rows("answers_eval.jsonl")]
    out += [{"set": name, "split": "fresh", "kb": r["kb"], "text": r["query"], "gold": _keys(r["gold"])}
            for name in ("fresh", "fresh2") for r in _rows(f"answers_{name}.jsonl")]
    for name, kb in (("pipl_eval.jsonl", "pipl"), ("multilaw_eval.jsonl", "multilaw")):
        rows = [{**r, "set": name} for r in _rows(name)]
        half = gate_halves(rows)
        out += [{"set": name.split("_")[0], "split": half[r["id"]], "kb": kb, "text": r["query"],
                 "gold": _keys(r["gold"])} for r in rows if r["type"] != "exact"]
    out += [{"set": "conversation", "split": c["split"], "kb": c["kb"], "text": t["standalone"],
             "gold": _keys(t["gold"])} for c in _rows("conversation_eval.jsonl") for t in c["turns"]]
    return [q for q in out if q["gold"]]


def _written(path: Path, set_name: str, text) -> list[dict]:
    """Training questions written for this project (one JSON line each, with its law and article); 'none': none."""
    if path.name == "none":
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"set": set_name, "split": "train", "kb": "pipl" if r["law"] == PIPL else "multilaw", "text": text(r),
             "gold": [(r["law"], r["article"])]} for r in rows]


def synthetic_questions(path: Path) -> list[dict]:
    """Lay questions written from each article's text alone (eval/synthetic_lay.README.md); training only."""
    return _written(path, "synthetic", lambda r: r["query"])


def follow_up_questions(path: Path) -> list[dict]:
    """Follow-ups written after a synthetic question (eval/synthetic_follow_ups.README.md), as the app searches them
    when no model rewrites them: the rule form 「上一问题：…；追问：…」, gold the article that decides the follow-up."""
    from agentic_rag.stages.contextualise.agent import rule_form
    from agentic_rag.stages.contextualise.prompt import FALLBACK

    return _written(path, "follow_up", lambda r: rule_form(FALLBACK, r["first_question"], r["follow_up"]))


def stard_questions(laws: set[str]) -> list[dict]:
    """STARD's train (and, for reporting, dev) questions whose every gold article is a numbered article of `laws`."""
    from agentic_rag.legal.numerals import cn_to_int

    def ids(split: str) -> set[int]:
        lines = (STARD / "example" / f"{split}.query.txt").read_text(encoding="utf-8").splitlines()
        return {int(line.split("\t", 1)[0]) for line in lines if line.strip()}

    train, dev = ids("train"), ids("dev")
    out = []
    for line in (STARD / "stard_qrels_lawrefbook.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        split = "dev" if r["query_id"] in dev else "train" if r["query_id"] in train else None
        gold = r["gold"]
        if split is None or not r["all_gold_mapped"] or \
                not all(g["lrb_law"] in laws and ARTICLE.fullmatch(g["lrb_article"]) for g in gold):
            continue
        out.append({"set": "stard", "split": split, "kb": "multilaw", "text": r["query"],
                    "gold": [(g["lrb_law"], cn_to_int(g["lrb_article"][1:-1])) for g in gold]})
    return out


class Ranker:
    """Dense ranks of each question's best gold article, with or without an adapter (a PIPL question among the
    PIPL's articles only)."""

    def __init__(self, docs: np.ndarray, laws: list[str], q: np.ndarray, questions: list[dict], rows: list[list[int]]):
        self.docs, self.q, self.questions, self.rows = docs, q, questions, rows
        self.pipl = np.array([i for i, law in enumerate(laws) if law == PIPL])

    def ranks(self, idx, w: np.ndarray | None) -> np.ndarray:
        adapted = qa.adapt(self.q[idx], w)
        out = []
        for vector, i in zip(adapted, idx):
            candidates = self.pipl if self.questions[i]["kb"] == "pipl" else np.arange(len(self.docs))
            order = candidates[np.argsort(-(self.docs[candidates] @ vector), kind="stable")]
            out.append(min(int(np.flatnonzero(order == g)[0]) for g in self.rows[i]))
        return np.array(out)


def scores(ranks: np.ndarray) -> dict:
    return {"n": int(len(ranks)), "r@1": round(float(np.mean(ranks == 0)), 4),
            "r@5": round(float(np.mean(ranks < 5)), 4),
            "mrr@10": round(float(np.mean(np.where(ranks < 10, 1.0 / (ranks + 1), 0.0))), 4)}


def choose_strength(ranker: Ranker, always_fit: list[int], dev: list[int]) -> tuple[float, dict]:
    folds = [dev[k::FOLDS] for k in range(FOLDS)]
    ranks: dict[float | None, list] = {s: [] for s in (None, *STRENGTHS)}
    for k, fold in enumerate(folds):
        held = set(fold)
        fit = always_fit + [i for i in dev if i not in held]
        w, info = qa.train(ranker.q[fit], [ranker.rows[i] for i in fit], ranker.docs)
        log(f"fold {k + 1}/{FOLDS}: best epoch {info['best_epoch']}")
        for s in ranks:
            ranks[s] += list(ranker.ranks(fold, None if s is None or w is None else s * w))
    table = {("none" if s is None else str(s)): scores(np.array(r)) for s, r in ranks.items()}
    best = max(STRENGTHS, key=lambda s: table[str(s)]["r@5"] + table[str(s)]["mrr@10"])
    return best, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-dir", type=Path, default=PROJECT_ROOT / "data-multilaw", help="the six-law index")
    parser.add_argument("--json", type=Path, default=PROJECT_ROOT / "bench" / "results" / "lay_adapter.json")
    parser.add_argument("--save", type=Path, nargs="?", const=OUT,
                        help="write the adapter (default: into agentic_rag/resources/, where the app reads it)")
    parser.add_argument("--synthetic", type=Path, nargs="+", default=[EVAL / "synthetic_lay.jsonl"],
                        help="lay questions written from the articles' text, fitted on ('none': STARD and the dev "
                             "halves only, the stop-35 adapter; stop 44 also tried eval/synthetic_lay_round2.jsonl)")
    parser.add_argument("--follow-ups", type=Path, default=Path("none"),
                        help="follow-ups written after synthetic questions (eval/synthetic_follow_ups.jsonl), fitted "
                             "on in their rule form; default none, as shipped (stop 44: no gain)")
    args = parser.parse_args()
    t_start = time.perf_counter()

    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.retriever import LocalRetriever

    settings = get_settings().model_copy(update={"data_dir": args.index_dir, "reranker": "none",
                                                 "query_adapter": "none"})
    retriever = LocalRetriever.from_settings(settings)
    documents = retriever.documents
    docs = np.asarray(retriever.index.store.vectors(list(range(len(documents)))), dtype=np.float32)
    row = {(d.law, d.article): i for i, d in enumerate(documents)}
    laws = sorted({d.law for d in documents})
    questions = [q for q in project_questions() + stard_questions(set(laws))
                 + [q for path in args.synthetic for q in synthetic_questions(path)]
                 + follow_up_questions(args.follow_ups)
                 if all(k in row for k in q["gold"])]
    log(f"{len(questions)} questions; encoding")
    vectors = retriever.embedder.encode_queries([q["text"] for q in questions])
    gold_rows = [[row[k] for k in q["gold"]] for q in questions]
    ranker = Ranker(docs, [d.law for d in documents], vectors, questions, gold_rows)

    # fitted on in every fold: STARD's training split and the synthetic questions (never reported on)
    always_fit = [i for i, q in enumerate(questions) if q["set"] in ("stard", "synthetic", "follow_up")
                  and q["split"] == "train"]
    dev = [i for i, q in enumerate(questions) if q["set"] != "stard" and q["split"] == "dev"]
    strength, cv = choose_strength(ranker, always_fit, dev)
    w, info = qa.train(vectors[always_fit + dev], [ranker.rows[i] for i in always_fit + dev], docs)
    log(f"strength {strength}; final fit: best epoch {info['best_epoch']}")

    seen = {g for i in dev for g in ranker.rows[i]}
    report = {}
    for name, (set_, split) in {"answers test": ("answers", "test"), "fresh": ("fresh", "fresh"),
                                "fresh2": ("fresh2", "fresh"),
                                "pipl eval test": ("pipl", "test"), "multilaw eval test": ("multilaw", "test"),
                                "conversation test": ("conversation", "test"), "stard dev": ("stard", "dev")}.items():
        idx = [i for i, q in enumerate(questions) if q["set"] == set_ and q["split"] == split]
        parts = {"all": idx, "gold seen in dev": [i for i in idx if seen & set(ranker.rows[i])],
                 "gold unseen": [i for i in idx if not seen & set(ranker.rows[i])]}
        report[name] = {part: {"raw": scores(ranker.ranks(ids, None)),
                               "adapted": scores(ranker.ranks(ids, strength * w))}
                        for part, ids in parts.items() if ids}
        log(f"{name}: {report[name]['all']}")
    count = {s: sum(questions[i]["set"] == s for i in always_fit) for s in ("stard", "synthetic", "follow_up")}
    follow_ups = f" + {count['follow_up']} synthetic follow-ups" if count["follow_up"] else ""
    provenance = {"fitted_on": f"{count['stard']} STARD train questions (six laws) + {count['synthetic']} synthetic "
                               f"lay questions{follow_ups} + {len(dev)} dev-half questions of this project's sets",
                  "index": "the six-law index (its stored vectors)",
                  "chosen_by": "R@5 + MRR@10, 5-fold over the dev-half questions", "script": "bench/lay_adapter.py"}
    write_json(args.json, {"strength": strength, "cv_dev": cv, "fit": info, "held_out": report, **provenance}, t_start)
    if args.save and w is not None:
        qa.QueryAdapter(w, retriever.embedder.model_id, provenance, strength).save(args.save)
        log(f"saved {args.save}")


if __name__ == "__main__":
    main()
