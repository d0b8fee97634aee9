#!/usr/bin/env python
"""The answers eval, before vs after, in one run: two checkouts answer the same questions alternately, each in its
own process (bench/answer_worker.py), on the same machine at the same time, and one scorer
(agentic_rag/eval/answers.py) scores both. Only one model process computes at any moment.

    git worktree add --detach ../wt-before <landed commit>     # once: the version to compare with
    nice .venv/bin/python bench/answers_before_after.py --before ../wt-before --split test \\
        --checkpoint bench/results/answers_before_after.jsonl --json bench/results/answers_before_after.json

Resumable: every finished (question, version) is appended to the checkpoint and skipped on the next run.
Reported per version and per question type: answered from a governing article, conclusion accuracy, wrong
conclusions, key-point recall, must-not violations, model-written sentences, refusals / hedged answers, p50
latency and time to first answer text, LLM calls — and the after/before ratio of the p50 times.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import env_with_first_path  # noqa: E402
from agentic_rag.eval.answers import load_rows, result_of, summarize  # noqa: E402
from agentic_rag.eval.e2e import interleave_types  # noqa: E402


class Worker:
    def __init__(self, name: str, checkout: Path, pipl_dir: Path, multilaw_dir: Path, first_path: Path | None = None):
        self.name = name
        env = env_with_first_path(first_path)
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "answer_worker.py"), str(checkout),
                                      str(pipl_dir), str(multilaw_dir)], cwd=checkout, text=True, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert json.loads(self._line())["ready"]

    def _line(self) -> str:
        while True:  # libraries may print to stdout before the worker's JSON lines
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} worker exited")
            if line.startswith("{"):
                return line

    def ask(self, kb: str, query: str) -> dict:
        self.proc.stdin.write(json.dumps({"kb": kb, "query": query}, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        return json.loads(self._line())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def load_done(path: Path | None) -> dict[tuple[str, str], dict]:
    if not path or not path.exists():
        return {}
    done = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        done[(r["version"], r["id"])] = r
    return done


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", type=Path, required=True, help="checkout of the earlier version")
    p.add_argument("--after", type=Path, default=ROOT, help="checkout of the new version (default: this one)")
    p.add_argument("--before-path", type=Path,
                   help="a folder put first on the before version's PYTHONPATH (an unpacked wheel of another build "
                        "of llama-cpp-python, say: the same questions answered with two builds)")
    p.add_argument("--dataset", type=Path, default=ROOT / "eval" / "answers_eval.jsonl")
    p.add_argument("--split", choices=("dev", "test", "fresh"), default="test")
    p.add_argument("--pipl-dir", type=Path, default=ROOT / "data")
    p.add_argument("--multilaw-dir", type=Path, default=ROOT / "data-multilaw")
    p.add_argument("--versions", nargs="+", default=["before", "after"])
    p.add_argument("--limit", type=int)
    p.add_argument("--checkpoint", type=Path)
    p.add_argument("--json", type=Path)
    p.add_argument("--report-only", action="store_true", help="summarise the checkpoint, ask nothing")
    args = p.parse_args()
    # Round-robin over (knowledge base, type): a run stopped early, or --limit, is still a stratified sample.
    rows = interleave_types(load_rows(args.dataset, args.split), key=lambda r: (r["kb"], r["type"]))
    rows = rows[: args.limit or None]
    done = load_done(args.checkpoint)
    checkouts = {"before": args.before.resolve(), "after": args.after.resolve()}
    workers: dict[str, Worker] = {}
    for i, row in enumerate(rows, 1):
        for version in args.versions:
            if (version, row["id"]) in done or args.report_only:
                continue
            if version not in workers:
                first_path = args.before_path if version == "before" else None
                workers[version] = Worker(version, checkouts[version], args.pipl_dir.resolve(),
                                          args.multilaw_dir.resolve(), first_path)
            reply = workers[version].ask(row["kb"], row["query"])
            result = {"version": version, **result_of(row, reply["state"], reply["latency_s"], reply["first_text_s"],
                                                      {"version": version, "checkout": str(checkouts[version]),
                                                       "llama_cpp": reply.get("llama_cpp")})}
            done[(version, row["id"])] = result
            if args.checkpoint:
                with open(args.checkpoint, "a", encoding="utf-8") as f:
                    f.write(json.dumps(result, ensure_ascii=False) + "\n")
            print(f"[{i}/{len(rows)}] {version:6} {row['id']:13} {result['path']:8} label={result['label']} "
                  f"ref={row['conclusion']['label']} gov={result['answered_from_governing']} "
                  f"{result['latency_s']:.1f}s", file=sys.stderr, flush=True)
    for w in workers.values():
        w.close()
    ids = {r["id"] for r in rows if all((v, r["id"]) in done for v in args.versions)}  # answered by every version
    report = {"split": args.split, "n": len(ids), "of": len(rows),
              "versions": {v: summarize([r for (ver, i), r in done.items() if ver == v and i in ids])
                           for v in args.versions}}
    if set(args.versions) == {"before", "after"}:
        b, a = report["versions"]["before"], report["versions"]["after"]
        report["ratio_after_over_before"] = {k: round(a[k] / b[k], 3) for k in ("p50_latency_s", "p50_first_text_s")
                                             if a.get(k) and b.get(k)}
    text = json.dumps(report, ensure_ascii=False, indent=2)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
