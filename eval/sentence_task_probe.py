#!/usr/bin/env python3
"""Which wording of the answer's one-sentence task does the 1.5B follow instead of copying? (stop 40)

Runs the answers eval on one split with the shipped workflow; at every single-ask sentence call (a 可以 / 不可以 /
需要 / 不需要 / 视情况 conclusion) the same prefix (question + articles) is also given each wording below, one call
each, and every output is recorded. `report` counts, per wording, the outputs that copy the task's own words and
those that begin with the decided label. `shipped` is whatever agentic_rag's prompt says when it is run. Stop 40
shipped end_in_label for 视情况 and kept begin_with_label for the polar labels: what the sentences SAY was read
on the held-out halves (eval/results/sentence_read_s40.jsonl, docs/evaluation.md).

    .venv/bin/python eval/sentence_task_probe.py collect --split dev --out eval/results/sentence_task_dev.jsonl
    .venv/bin/python eval/sentence_task_probe.py report eval/results/sentence_task_dev.jsonl
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.stages.answer import agent as answer_agent  # noqa: E402

_RULES = "不要重复问题，不要写条文中没有的条件、数字或建议，不要写条文编号以外的法律名称。"
_POLAR = "【任务】法律咨询：结论已经确定为“{label}”，决定性的规定是：“{clause}”。请用一句话直接回答用户的问题"
_DEPENDS = "【任务】法律咨询：结论是“视情况”，决定性的规定是：“{clause}”。请用一句话告诉用户取决于什么"
_APPLY = "说明这条规定用在用户所问的情况上的结果，不超过 60 个字。" + _RULES
_CONDITIONS = "只写这条规定中的条件，不超过 60 个字。不要重复问题，不要写条文中没有的内容。"
WORDINGS = {  # (polar, depends); the first is stop 39's prompt, which the model copied
    "begin_with_label": (_POLAR + "：以“{label}”开头，" + _APPLY, _DEPENDS + "：以“视情况”开头，" + _CONDITIONS),
    "end_in_label": (_POLAR + "，" + _APPLY + "\n回答：{label}，", _DEPENDS + "，" + _CONDITIONS + "\n回答：视情况，取决于"),
    "no_start": (_POLAR + "，" + _APPLY, _DEPENDS + "，" + _CONDITIONS),
}
COPIED = re.compile(r"开头|不超过 ?60|不要重复问题|一句话|用户所问")
POLAR = ("可以", "不可以", "需要", "不需要")


def collect(split: str, out: Path, dataset: Path) -> None:
    from agentic_rag.config import get_settings
    from agentic_rag.eval import answers
    from agentic_rag.state import QUESTION

    stash: dict = {}
    shipped_task, shipped_ask = answer_agent.sentence_task, answer_agent.AnswerStage.ask

    def task(plans, one_law):
        stash["plans"] = plans
        return shipped_task(plans, one_law)

    async def ask(self, ctx, text, **kw):
        raw = await shipped_ask(self, ctx, text, **kw)
        plans = stash.pop("plans", None)
        if not plans or len(plans) != 1 or "【任务】法律咨询" not in text:
            return raw
        plan = plans[0]
        kind = 0 if plan.label in POLAR else 1 if plan.label == "视情况" else None
        if kind is None:
            return raw
        prefix = text[:text.index("【任务】法律咨询")]
        clause = answer_agent.form.clip(plan.clause.full if plan.clause else "")
        record = {"question": QUESTION.get(ctx.session.state, ""), "label": plan.label, "shipped": raw}
        for name, pair in WORDINGS.items():
            record[name] = await shipped_ask(self, ctx, prefix + pair[kind].format(label=plan.label, clause=clause),
                                             **kw)
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        return raw

    answer_agent.sentence_task, answer_agent.AnswerStage.ask = task, ask
    settings = get_settings()
    by_kb = {"pipl": settings.model_copy(update={"data_dir": ROOT / "data"}),
             "multilaw": settings.model_copy(update={"data_dir": ROOT / "data-multilaw"})}
    answers.evaluate_answers(answers.load_rows(dataset, split), by_kb,
                             progress=lambda i, n, r: print(i, n, r["id"], r["path"], flush=True))


def report(path: Path) -> dict:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    names = [k for k in rows[0] if k not in ("question", "label")] if rows else []
    return {"sentences": len(rows),
            **{name: {"copies_task": sum(bool(COPIED.search(r[name])) for r in rows),
                      "starts_with_label": sum(r[name].startswith(r["label"]) for r in rows)} for name in names}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--split", default="dev")
    c.add_argument("--dataset", type=Path, default=ROOT / "eval" / "answers_eval.jsonl")
    c.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("path", type=Path)
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.split, args.out, args.dataset)
    else:
        print(json.dumps(report(args.path), ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
