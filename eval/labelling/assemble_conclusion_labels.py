"""Assemble the labellers' output (out1.jsonl … out5.jsonl, eval/labelling/conclusion_labels_prompt.md) into the
answers set's format: skipped articles dropped, the label and the verbatim deciding clause checked, questions near
an eval question or an earlier labelled one (character-bigram Jaccard ≥ 0.35) dropped.

    python3 eval/labelling/assemble_conclusion_labels.py DIR ROUND OUT      # e.g. … /tmp/r2 2 eval/conclusion_labels_round2.jsonl
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from check_answers_eval import EVAL, bigrams, jaccard  # noqa: E402
from check_synthetic_lay import JACCARD_LIMIT, eval_questions  # noqa: E402

LABELS = ("可以", "不可以", "需要", "不需要", "视情况")


def main() -> None:
    folder, round_, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    texts = {(json.loads(x)["law"], json.loads(x)["article"]): json.loads(x)["text"]
             for f in sorted(folder.glob("batch*.jsonl")) for x in f.read_text(encoding="utf-8").splitlines()}
    earlier = [bigrams(json.loads(x)["query"]) for x in (EVAL / "conclusion_labels.jsonl").read_text(
        encoding="utf-8").splitlines() if x.strip()]
    others, rows, dropped = eval_questions() + earlier, [], []
    for b in range(1, 6):
        for n, line in enumerate((folder / f"out{b}.jsonl").read_text(encoding="utf-8").splitlines()):
            r = json.loads(line)
            if r.get("skip"):
                continue
            text = texts[(r["law"], r["article"])]
            if r["label"] not in LABELS or r["deciding"] not in text:
                dropped.append((r["law"], r["article"], "label or deciding clause"))
                continue
            near = max(jaccard(bigrams(r["query"]), o) for o in others)
            if near >= JACCARD_LIMIT:
                dropped.append((r["law"], r["article"], f"near an eval question ({near:.2f})"))
                continue
            rows.append({"id": f"lab{round_}-{b}{n:02d}", "kb": "multilaw", "query": r["query"],  # as round 1
                         "type": r["label"], "gold": [{"law": r["law"], "article": r["article"]}],
                         "conclusion": {"label": r["label"], "condition": r["why"]}, "deciding": r["deciding"],
                         "split": "dev"})
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(len(rows), "rows;", len(dropped), "dropped:", dropped)


if __name__ == "__main__":
    main()
