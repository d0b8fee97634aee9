"""Command line of the evaluations; the last line printed is one JSON object (machine-readable)."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from pathlib import Path

from ..config import PROJECT_ROOT, get_settings
from ..knowledge.index import IndexError_
from ..weights import ModelNotAvailableError


def _retrieval(args: argparse.Namespace) -> dict:
    from ..retrieval.retriever import LocalRetriever
    from .retrieval import evaluate, format_table, load_dataset, plot

    settings = get_settings()
    if args.data_dir:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    retriever = LocalRetriever.from_settings(settings)
    result = evaluate(retriever, load_dataset(args.dataset), args.matchers, depth=args.depth)
    result["dataset"] = str(args.dataset)
    result["index"] = {"doc_count": retriever.index.manifest.doc_count,
                       "embedder": retriever.index.manifest.embedder_id}
    print(format_table(result), file=sys.stderr)
    if args.png:
        plot(result, args.png)
        print(f"chart: {args.png}", file=sys.stderr)
    return result


def _e2e(args: argparse.Namespace) -> dict:
    from .e2e import evaluate_e2e, interleave_types
    from .retrieval import load_dataset

    update = {k: v for k, v in (("agentic_rag_model", args.model), ("data_dir", args.data_dir)) if v}
    settings = get_settings().model_copy(update=update)
    rows = load_dataset(args.dataset)
    if args.ids:  # e.g. the test part of the gate's calibration split: questions the calibration never saw
        data = json.loads(args.ids.read_text(encoding="utf-8"))
        keep = set(data["test_ids"] if isinstance(data, dict) else data)
        rows = [r for r in rows if r["id"] in keep]
    if args.per_type:  # a stratified slice: the first N questions of each type, in file order
        counts: Counter[str] = Counter()
        picked = []
        for row in rows:
            if counts[row["type"]] < args.per_type:
                counts[row["type"]] += 1
                picked.append(row)
        rows = picked
    if args.interleave:
        rows = interleave_types(rows)
    rows = rows[: args.limit or None]

    def progress(i: int, n: int, r: dict) -> None:
        print(f"[{i}/{n}] {r['id']:10} {r['path'] or '-':8} total={r['total']} cited={r['cited']} gold={r['gold']} "
              f"{r['latency_s']:.1f}s", file=sys.stderr, flush=True)

    result = evaluate_e2e(rows, settings, progress, checkpoint=args.checkpoint)
    result["dataset"] = str(args.dataset)
    print(json.dumps(result["summary"], ensure_ascii=False, indent=2), file=sys.stderr)
    return result


def _route(args: argparse.Namespace) -> dict:
    from .retrieval import load_dataset
    from .routing import evaluate_routing

    update = {k: v for k, v in (("agentic_rag_model", args.model), ("data_dir", args.data_dir)) if v}
    result = evaluate_routing(load_dataset(args.dataset), get_settings().model_copy(update=update))
    result["dataset"] = str(args.dataset)
    print(json.dumps(result["summary"], ensure_ascii=False, indent=2), file=sys.stderr)
    return result


def _answers(args: argparse.Namespace) -> dict:
    from .answers import evaluate_answers, load_rows

    update = {"agentic_rag_model": args.model} if args.model else {}
    base = get_settings().model_copy(update=update)
    dirs = {"pipl": args.pipl_dir or base.data_dir, "multilaw": args.multilaw_dir}
    kbs = tuple(kb for kb in ("pipl", "multilaw") if dirs[kb] and (kb == "pipl" or Path(dirs[kb]).exists()))
    rows = load_rows(args.dataset, args.split, kbs)[: args.limit or None]
    settings = {kb: base.model_copy(update={"data_dir": Path(dirs[kb])}) for kb in kbs}

    def progress(i: int, n: int, r: dict) -> None:
        print(f"[{i}/{n}] {r['id']:13} {r['path'] or '-':8} label={r['label']} ref={r['reference']['label']} "
              f"governing={r['answered_from_governing']} must_not={len(r['must_not'])} {r['latency_s']:.1f}s",
              file=sys.stderr, flush=True)

    result = evaluate_answers(rows, settings, progress, checkpoint=args.checkpoint)
    result["dataset"], result["split"] = str(args.dataset), args.split
    print(json.dumps({k: v for k, v in result["summary"].items() if k != "by_type"}, ensure_ascii=False, indent=2),
          file=sys.stderr)
    return result


def _conversation(args: argparse.Namespace) -> dict:
    from ..oneshot import build_app
    from ..retrieval.retriever import get_retriever
    from ..workflow import ConditionalWorkflowAgent
    from .conversation import evaluate_conversations, load_conversations, run_config

    base = get_settings().model_copy(update={"agentic_rag_model": args.model} if args.model else {})
    dirs = {kb: d for kb, d in (("pipl", args.pipl_dir), ("multilaw", args.multilaw_dir)) if d}
    if not dirs:
        raise ValueError("give the index of at least one knowledge base: --pipl-dir and/or --multilaw-dir")
    rows = load_conversations(args.dataset, args.split, tuple(dirs))[: args.limit or None]
    apps, indexes = {}, {}
    for kb in sorted({r["kb"] for r in rows}):
        settings = base.model_copy(update={"data_dir": dirs[kb]})
        retriever = get_retriever(settings)  # one per knowledge base (per settings), shared with its agent
        manifest = retriever.index.manifest
        indexes[kb] = f"{manifest.embedder_id}:{manifest.corpus_sha256[:16]}:{manifest.doc_count}"
        agent = ConditionalWorkflowAgent(settings=settings)
        apps[kb] = build_app(agent, settings)

    def progress(i: int, n: int, r: dict) -> None:
        turns = " ".join(f"{t['kind']}:{t['path']}{'*' if t['answered_from_gold'] else ''}" for t in r["turns"])
        print(f"[{i}/{n}] {r['id']:18} {turns}", file=sys.stderr, flush=True)

    result = evaluate_conversations(rows, apps, args.mode, run_config(base, args.mode, indexes), progress,
                                    checkpoint=args.checkpoint)
    result.update(dataset=str(args.dataset), split=args.split, mode=args.mode)
    print(json.dumps({"summary": result["summary"], "signals": result["signals"]}, ensure_ascii=False, indent=2),
          file=sys.stderr)
    return result


def _adk_evalsets(args: argparse.Namespace) -> dict:
    from .adk_evalsets import write

    ids = {i.strip() for i in args.ids.split(",") if i.strip()} if args.ids else None
    paths = write(args.out, judge_model=args.judge_model, ids=ids)
    for path in paths:
        print(f"wrote {path}", file=sys.stderr)
    return {"written": [str(p) for p in paths]}


def _report(args: argparse.Namespace) -> dict:
    from .report import write_report

    path, sections = write_report(args.out, results=args.results, bench=args.bench)
    print(f"report: {path}", file=sys.stderr)
    return {"report": str(path), "sections": sections}


COMMANDS = {"retrieval": _retrieval, "e2e": _e2e, "route": _route, "answers": _answers,
            "conversation": _conversation, "adk-evalsets": _adk_evalsets, "report": _report}


def _parse_retrieval(sub) -> None:
    from .retrieval import DEFAULT_MATCHERS, EVAL_MATCHERS

    r = sub.add_parser("retrieval", help="recall@k / MRR@10 / nDCG@10 per matcher on the current index")
    r.add_argument("--dataset", type=Path, required=True)
    r.add_argument("--matchers", nargs="+", default=list(DEFAULT_MATCHERS), choices=list(EVAL_MATCHERS))
    r.add_argument("--depth", type=int, default=10, help="ranking depth evaluated (default 10)")
    r.add_argument("--data-dir", type=Path, help="index to evaluate (default: DATA_DIR)")
    r.add_argument("--json", type=Path, help="also write the JSON result here")
    r.add_argument("--png", type=Path, help="write a bar chart here")


def _parse_e2e(sub) -> None:
    e = sub.add_parser("e2e", help="run the whole agent; path, scores, citation precision/recall, latency")
    e.add_argument("--dataset", type=Path, required=True)
    e.add_argument("--model", help="LiteLLM model string or local/<gguf> (default: the configured model)")
    e.add_argument("--limit", type=int, help="only the first N questions")
    e.add_argument("--per-type", type=int, help="only the first N questions of each type (a stratified slice)")
    e.add_argument("--data-dir", type=Path, help="index to use (default: DATA_DIR)")
    e.add_argument("--interleave", action="store_true",
                   help="round-robin over question types, so that a partial run is a stratified sample")
    e.add_argument("--checkpoint", type=Path,
                   help="append each finished question here (JSONL) and skip those already in it: resumable runs")
    e.add_argument("--ids", type=Path, help="only these question ids: a JSON list, or an object with test_ids "
                                            "(eval/results/gate_calibration.json)")
    e.add_argument("--json", type=Path, help="also write the JSON result here")


def _parse_route(sub) -> None:
    o = sub.add_parser("route", help="routing accuracy per question type (the router stage alone)")
    o.add_argument("--dataset", type=Path, required=True)
    o.add_argument("--model", help="the model the router asks when its signals disagree")
    o.add_argument("--data-dir", type=Path, help="index to use (default: DATA_DIR)")
    o.add_argument("--json", type=Path, help="also write the JSON result here")


def _parse_answers(sub) -> None:
    a = sub.add_parser("answers", help="what the answers say: conclusion, key points, wrong claims, governing "
                                       "articles, refusals (eval/answers_eval.jsonl, both knowledge bases)")
    a.add_argument("--dataset", type=Path, default=Path("eval/answers_eval.jsonl"))
    a.add_argument("--split", choices=("dev", "test", "fresh"),
                   help="only this half (report on test; fresh: the held-out eval/answers_fresh.jsonl)")
    a.add_argument("--model", help="LiteLLM model string or local/<gguf> (default: the configured model)")
    a.add_argument("--pipl-dir", type=Path, help="the PIPL index (default: DATA_DIR)")
    a.add_argument("--multilaw-dir", type=Path, default=Path("data-multilaw"),
                   help="the six-law index (init_index.py --law …, README); its questions are skipped without it")
    a.add_argument("--limit", type=int)
    a.add_argument("--checkpoint", type=Path, help="append each finished question here; skip those already in it")
    a.add_argument("--json", type=Path, help="also write the JSON result here")


def _parse_conversation(sub) -> None:
    c = sub.add_parser("conversation", help="multi-turn conversations: follow-ups answered from gold, clarifying "
                                            "questions, contextualise calls; --mode off asks every turn alone")
    c.add_argument("--dataset", type=Path, required=True)
    c.add_argument("--split", choices=("dev", "test", "fresh", "all"), default="dev",
                   help="fresh: eval/conversation_fresh.jsonl, written blind and never used for a choice")
    c.add_argument("--mode", choices=("on", "off", "both"), default="on",
                   help="on: the turns of a conversation in one session; off: every turn in a fresh session; "
                        "both: on, then each later turn alone too (one run)")
    c.add_argument("--pipl-dir", type=Path, help="index of the PIPL knowledge base (the pipl conversations)")
    c.add_argument("--multilaw-dir", type=Path, help="index of the six-law knowledge base (the multilaw ones)")
    c.add_argument("--model", help="LiteLLM model string or local/<gguf> (default: the configured model)")
    c.add_argument("--limit", type=int, help="only the first N conversations")
    c.add_argument("--checkpoint", type=Path,
                   help="append each finished conversation here (JSONL) and skip those already in it")
    c.add_argument("--json", type=Path, help="also write the JSON result here")


def _parse_adk_evalsets(sub) -> None:
    k = sub.add_parser("adk-evalsets", help="ADK evalsets (+ test_config*.json) from the labelled sets, for "
                                            "`adk eval agentic_rag agentic_rag/<set>.evalset.json` and the Dev UI")
    k.add_argument("--out", type=Path, default=PROJECT_ROOT / "agentic_rag",
                   help="where to write (default: the agent folder, where adk eval and the Dev UI find them)")
    k.add_argument("--ids", help="only these answers_eval ids (comma-separated): one small answers_selected set")
    k.add_argument("--judge-model", help="a LiteLLM model string: also write test_config*_judge.json with the judge's "
                                         "criteria (rubric_based_final_response_quality_v1, final_response_match_v2)")


def _parse_report(sub) -> None:
    t = sub.add_parser("report", help="one self-contained HTML page from the results JSON that exist")
    t.add_argument("--out", type=Path, default=PROJECT_ROOT / "docs" / "report.html")
    t.add_argument("--results", type=Path, default=PROJECT_ROOT / "eval" / "results")
    t.add_argument("--bench", type=Path, default=PROJECT_ROOT / "bench" / "results")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agentic_rag.eval", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for add in (_parse_retrieval, _parse_e2e, _parse_route, _parse_answers, _parse_conversation,
                _parse_adk_evalsets, _parse_report):
        add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        result = COMMANDS[args.command](args)
    except (IndexError_, ModelNotAvailableError, ValueError, FileNotFoundError) as e:  # CheckpointMismatchError too
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = json.dumps(result, ensure_ascii=False)
    if getattr(args, "json", None):
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
