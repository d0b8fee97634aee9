#!/usr/bin/env python3
"""Two conversation eval runs of the same conversations side by side (before → after a change), per turn group.

For each group (first turns, follow-ups, topic switches, clarification replies): answered from a gold article,
answered from no gold article ("wrong": the answer stands on an article that does not govern), refused; the turns
a second reading of a follow-up answered (context source `alone`); model calls and mean seconds per turn; and every
turn whose outcome changed.

    .venv/bin/python eval/compare_conversation_runs.py BEFORE.jsonl AFTER.jsonl [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from agentic_rag.eval.conversation import FOLLOW_UP_KINDS  # noqa: E402
from agentic_rag.eval.e2e import ANSWERS  # noqa: E402
from report_io import emit  # noqa: E402

# a hedged answer is read by the user too: one built on a non-gold article counts as wrong here (`e2e.ANSWERS`,
# which the eval's answered_from_gold reads, leaves it out)
ANSWERED = (*ANSWERS, "hedged")


def group(turn: dict) -> str:
    return "follow_up" if turn["kind"] in FOLLOW_UP_KINDS else turn["kind"]


def outcome(turn: dict) -> str:
    if turn["answered_from_gold"]:
        return "gold"
    return "wrong" if turn["path"] in ANSWERED else "refused"


def load(path: Path) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, path.read_text("utf-8").splitlines()) if row}


def tally(rows: list[dict]) -> dict:
    counts: dict[str, Counter] = {}
    for turn in (t for row in rows for t in row["turns"] if t["expect"] == "answer"):
        c = counts.setdefault(group(turn), Counter())
        c["n"] += 1
        c[outcome(turn)] += 1
        c["read_alone_" + outcome(turn)] += turn.get("source") == "alone"
        c["llm_calls"] += turn["llm_calls"]
        c["seconds"] += turn["latency_s"]
    return {g: {"n": c["n"], **{k: c[k] for k in ("gold", "wrong", "refused")},
                "read_alone": {k: c["read_alone_" + k] for k in ("gold", "wrong", "refused")},
                "llm_calls_per_turn": round(c["llm_calls"] / c["n"], 2),
                "mean_s_per_turn": round(c["seconds"] / c["n"], 1)} for g, c in sorted(counts.items())}


def changed(before: dict[str, dict], after: dict[str, dict]) -> list[dict]:
    out = []
    for cid in sorted(before.keys() & after.keys()):
        for b, a in zip(before[cid]["turns"], after[cid]["turns"]):
            if (outcome(b), b["path"]) != (outcome(a), a["path"]):
                out.append({"id": cid, "turn": a["turn"], "kind": a["kind"], "user": a["user"],
                            "before": f"{b['path']}/{outcome(b)}", "after": f"{a['path']}/{outcome(a)}",
                            "read_alone": a.get("source") == "alone"})
    return out


def compare(before_path: Path, after_path: Path) -> dict:
    before, after = load(before_path), load(after_path)
    ids = sorted(before.keys() & after.keys())
    return {"before": str(before_path), "after": str(after_path), "conversations": len(ids),
            "before_turns": tally([before[i] for i in ids]), "after_turns": tally([after[i] for i in ids]),
            "changed": changed(before, after)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    emit(compare(args.before, args.after), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
