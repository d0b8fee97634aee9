"""One self-contained HTML page from the evaluation results that exist: `python -m agentic_rag.eval report`.

Every section has a one-line "what this measures", its source file, a table and a chart (inline SVG drawn here: no
script, no stylesheet or font from elsewhere, no network). A results file that is missing or unreadable gives a short
"not run yet" note with the command that makes it, never an error.

Sources (relative to the project): eval/results/retrieval.json and retrieval_multilaw.json (`… eval retrieval`),
eval/results/e2e_local1.5b_v2.json (`… eval e2e`), bench/results/answers_before_after.json and
eval/results/answers_*.json (`… eval answers`), eval/results/conversation*.json, and the per-question `latency_s` /
`first_text_s` of every file that has `questions`.
"""
from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..config import PROJECT_ROOT

COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f")
RETRIEVAL_METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10")
E2E_METRICS = ("pass_rate_in_scope", "fail_rate_out_of_scope", "citation_precision", "citation_recall",
               "invalid_citation_rate")
ANSWER_METRICS = ("conclusion_accuracy", "wrong_conclusion", "answered_from_governing", "built_on_wrong_article",
                  "key_point_recall", "answers_with_must_not", "refused", "hedged", "out_of_scope_rejected")
E2E_FILE = "e2e_local1.5b_v2.json"
BEFORE_AFTER = "answers_before_after.json"

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","Microsoft YaHei",sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.what{margin:.3rem 0}.src{color:#666;font-size:.85rem}.missing{background:#fff7e6;border-left:4px solid #f2a20c;
padding:.5rem .8rem}table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}
th,td{border:1px solid #ddd;padding:.2rem .5rem;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#f4f4f4}svg{display:block;margin:.5rem 0;max-width:100%;height:auto}nav a{margin-right:.8rem}
code{background:#f4f4f4;padding:0 .2rem}
"""


# ---------------------------------------------------------------------------------------------- reading
def read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def fmt(x) -> str:
    v = num(x)
    if v is None:
        return "—" if x is None else esc(x)
    if v == int(v):
        return f"{v:.0f}"
    return (f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}").rstrip("0").rstrip(".")


def esc(x) -> str:
    return html.escape(str(x), quote=True)


def rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return path.name


# ---------------------------------------------------------------------------------------------- HTML pieces
def table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{fmt(c) if i else esc(c)}</td>" for i, c in enumerate(r)) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def bar_chart(categories: Sequence[str], series: dict[str, Sequence[float | None]], title: str,
              y_max: float | None = None, unit: str = "") -> str:
    """Grouped vertical bars: one group per category, one bar per series; a legend; values on hover (<title>)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    if not categories or not values:
        return ""
    top = y_max if y_max is not None else (max(values) * 1.1 or 1.0)
    n_series = max(len(series), 1)
    group_w = max(36, 14 * n_series + 12)
    left, bottom, height = 48, 70, 220
    legend_w = sum(24 + 7 * len(str(name)) for name in series)
    width = max(left + group_w * len(categories) + 20, left + legend_w)
    legend_y = 18
    parts = [f'<svg viewBox="0 0 {width} {height + bottom + 30}" width="{width}" role="img" '
             f'aria-label="{esc(title)}"><title>{esc(title)}</title>']
    x_legend = left
    for i, name in enumerate(series):
        parts.append(f'<rect x="{x_legend}" y="{legend_y - 9}" width="10" height="10" fill="{COLORS[i % len(COLORS)]}"/>'
                     f'<text x="{x_legend + 14}" y="{legend_y}" font-size="11">{esc(name)}</text>')
        x_legend += 24 + 7 * len(str(name))
    y0 = 30
    for k in range(5):  # grid and axis labels
        frac = k / 4
        y = y0 + height - frac * height
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{fmt(top * frac)}{esc(unit)}'
                     f'</text>')
    bar_w = (group_w - 12) / n_series
    for c, cat in enumerate(categories):
        gx = left + c * group_w + 6
        for s, (name, vs) in enumerate(series.items()):
            v = vs[c] if c < len(vs) else None
            if v is None:
                continue
            h = max(0.0, min(v, top)) / top * height
            parts.append(f'<rect x="{gx + s * bar_w:.1f}" y="{y0 + height - h:.1f}" width="{bar_w - 1:.1f}" '
                         f'height="{h:.1f}" fill="{COLORS[s % len(COLORS)]}"><title>{esc(cat)} · {esc(name)}: '
                         f'{fmt(v)}{esc(unit)}</title></rect>')
        cx = gx + (group_w - 12) / 2
        parts.append(f'<text x="{cx:.1f}" y="{y0 + height + 12}" font-size="10" text-anchor="end" '
                     f'transform="rotate(-35 {cx:.1f} {y0 + height + 12})">{esc(cat)}</text>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="{y0}" y2="{y0 + height}" stroke="#999"/></svg>')
    return "".join(parts)


def quantile(xs: Sequence[float], q: float) -> float:
    xs = sorted(xs)
    pos = (len(xs) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def box_chart(series: dict[str, Sequence[float]], title: str, unit: str = "s") -> str:
    """Horizontal box plots (p10–p90 whiskers, p25–p75 box, median line) with every value as a dot."""
    series = {k: v for k, v in series.items() if v}
    if not series:
        return ""
    top = max(max(v) for v in series.values()) * 1.05 or 1.0
    left, row_h, plot_w = 230, 34, 560
    height = row_h * len(series) + 50
    width = left + plot_w + 20
    x = lambda v: left + v / top * plot_w  # noqa: E731
    parts = [f'<svg viewBox="0 0 {width} {height}" width="{width}" role="img" aria-label="{esc(title)}">'
             f'<title>{esc(title)}</title>']
    for k in range(6):
        v = top * k / 5
        parts.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="10" y2="{height - 30}" stroke="#e5e5e5"/>'
                     f'<text x="{x(v):.1f}" y="{height - 14}" font-size="10" text-anchor="middle">{fmt(v)}{unit}</text>')
    for i, (name, vs) in enumerate(series.items()):
        cy = 10 + i * row_h + row_h / 2
        color = COLORS[i % len(COLORS)]
        p10, p25, p50, p75, p90 = (quantile(vs, q) for q in (0.1, 0.25, 0.5, 0.75, 0.9))
        parts.append(f'<text x="{left - 8}" y="{cy + 4:.1f}" font-size="11" text-anchor="end">{esc(name)} '
                     f'(n={len(vs)})</text>'
                     f'<line x1="{x(p10):.1f}" x2="{x(p90):.1f}" y1="{cy:.1f}" y2="{cy:.1f}" stroke="{color}"/>'
                     f'<rect x="{x(p25):.1f}" y="{cy - 9:.1f}" width="{max(1.0, x(p75) - x(p25)):.1f}" height="18" '
                     f'fill="{color}" fill-opacity=".25" stroke="{color}"><title>{esc(name)}: p25 {fmt(p25)}{unit}, '
                     f'p50 {fmt(p50)}{unit}, p75 {fmt(p75)}{unit}</title></rect>'
                     f'<line x1="{x(p50):.1f}" x2="{x(p50):.1f}" y1="{cy - 9:.1f}" y2="{cy + 9:.1f}" stroke="{color}" '
                     f'stroke-width="2"/>')
        parts += [f'<circle cx="{x(v):.1f}" cy="{cy + ((j * 7) % 13 - 6) * 0.9:.1f}" r="1.6" fill="{color}" '
                  f'fill-opacity=".6"/>' for j, v in enumerate(vs)]
    parts.append("</svg>")
    return "".join(parts)


def section(anchor: str, title: str, what: str, sources: Sequence[Path], body: str) -> tuple[str, str, str]:
    src = ", ".join(f"<code>{esc(rel(p))}</code>" for p in sources)
    return anchor, title, (f'<section id="{anchor}"><h2>{esc(title)}</h2><p class="what">{esc(what)}</p>'
                           f'<p class="src">Source: {src}</p>{body}</section>')


def missing(command: str) -> str:
    return f'<p class="missing">Not run yet. Make it with <code>{esc(command)}</code>.</p>'


# ---------------------------------------------------------------------------------------------- sections
def retrieval_section(path: Path, title: str, anchor: str, command: str) -> tuple[str, str, str]:
    what = ("Retrieval alone, per matcher and per question type: is a gold article among the first k retrieved "
            "(recall@k), how high is the first one (MRR@10, nDCG@10). No model answers here.")
    data = read_json(path)
    if not data or not isinstance(data.get("matchers"), dict):
        return section(anchor, title, what, [path], missing(command))
    matchers = [m for m, v in data["matchers"].items() if isinstance(v, dict)]
    metrics = [k for k in RETRIEVAL_METRICS if any(k in data["matchers"][m] for m in matchers)]
    body = (f"<p>{fmt(data.get('n'))} of {fmt(data.get('n_total'))} questions have gold articles; dataset "
            f"<code>{esc(data.get('dataset', '?'))}</code>.</p>")
    body += table(["matcher", *metrics, "p50 ms"],
                  [[m, *(data["matchers"][m].get(k) for k in metrics), data["matchers"][m].get("p50_ms")]
                   for m in matchers])
    body += bar_chart(matchers, {k: [num(data["matchers"][m].get(k)) for m in matchers] for k in metrics},
                      f"{title}: per matcher", y_max=1.0)
    by_type = data.get("by_type") if isinstance(data.get("by_type"), dict) else {}
    types = sorted({t for m in matchers for t in (by_type.get(m) or {})})
    if types:
        key = "recall@5" if "recall@5" in metrics else metrics[0]
        body += f"<h3>Per question type ({esc(key)} and MRR@10)</h3>"
        body += table(["type", "n", *(f"{m} {key}" for m in matchers), *(f"{m} mrr@10" for m in matchers)],
                      [[t, next((by_type[m][t].get("n") for m in matchers if t in (by_type.get(m) or {})), None),
                        *((by_type.get(m) or {}).get(t, {}).get(key) for m in matchers),
                        *((by_type.get(m) or {}).get(t, {}).get("mrr@10") for m in matchers)] for t in types])
        body += bar_chart(types, {m: [num((by_type.get(m) or {}).get(t, {}).get(key)) for t in types]
                                  for m in matchers}, f"{title}: {key} per type", y_max=1.0)
    return section(anchor, title, what, [path], body)


def e2e_section(path: Path) -> tuple[str, str, str]:
    title, what = "End to end, per question type", (
        "The whole workflow on the retrieval questions: answered from the knowledge base when the question is in "
        "scope (pass rate), refused when it is not, and whether the cited articles are gold (precision, recall).")
    data = read_json(path)
    summary = data.get("summary") if data else None
    if not isinstance(summary, dict):
        return section("e2e", title, what, [path], missing(
            "python -m agentic_rag.eval e2e --dataset eval/pipl_eval.jsonl --json eval/results/" + E2E_FILE))
    by_type = summary.get("by_type") if isinstance(summary.get("by_type"), dict) else {}
    groups = {"all": summary, **by_type}
    metrics = [k for k in E2E_METRICS if any(num(g.get(k)) is not None for g in groups.values())]
    body = table(["type", "n", *metrics, "p50 latency s", "p50 first text s", "LLM calls"],
                 [[t, g.get("n"), *(g.get(k) for k in metrics), g.get("p50_latency_s"), g.get("p50_first_text_s"),
                   g.get("llm_calls_per_question")] for t, g in groups.items()])
    body += bar_chart(list(groups), {k: [num(g.get(k)) for g in groups.values()] for k in metrics},
                      "End to end per type", y_max=1.0)
    paths = summary.get("paths")
    if isinstance(paths, dict) and paths:
        body += "<h3>Paths taken</h3>" + table(["path", "questions"], sorted(paths.items()))
    return section("e2e", title, what, [path], body)


def _answer_groups(summary: dict) -> dict[str, dict]:
    by_type = summary.get("by_type") if isinstance(summary.get("by_type"), dict) else {}
    return {"all": summary, **{t: g for t, g in by_type.items() if isinstance(g, dict)}}


def answers_section(before_after: Path, answer_files: list[Path]) -> tuple[str, str, str]:
    title, what = "Answers: what they conclude and rest on", (
        "The answers eval (eval/answers_eval.jsonl): is the conclusion the lawyer's label, is the answer built on a "
        "governing article, which key points it states and which tempting wrong claims it makes, refusals.")
    body = ""
    data = read_json(before_after)
    versions = data.get("versions") if data else None
    if isinstance(versions, dict) and all(isinstance(v, dict) for v in versions.values()) and versions:
        names = list(versions)
        metrics = [k for k in ANSWER_METRICS if any(num(v.get(k)) is not None for v in versions.values())]
        body += f"<h3>Before / after (<code>{esc(rel(before_after))}</code>)</h3>"
        body += table(["metric", *names], [[k, *(versions[n].get(k) for n in names)] for k in metrics])
        body += bar_chart(metrics, {n: [num(versions[n].get(k)) for k in metrics] for n in names},
                          "Answers before / after", y_max=1.0)
        types = [t for t in _answer_groups(versions[names[-1]]) if t != "all"]
        if types:
            body += "<h4>Conclusion accuracy per type</h4>"
            body += table(["type", *names], [[t, *(_answer_groups(versions[n]).get(t, {}).get("conclusion_accuracy")
                                                  for n in names)] for t in types])
            body += bar_chart(types, {n: [num(_answer_groups(versions[n]).get(t, {}).get("conclusion_accuracy"))
                                          for t in types] for n in names}, "Conclusion accuracy per type", y_max=1.0)
    for path in answer_files:
        d = read_json(path)
        summary = d.get("summary") if d else None
        if not isinstance(summary, dict):
            body += f'<p class="missing">{esc(rel(path))}: unreadable or without a summary.</p>'
            continue
        groups = _answer_groups(summary)
        metrics = [k for k in ANSWER_METRICS if any(num(g.get(k)) is not None for g in groups.values())]
        body += f"<h3><code>{esc(rel(path))}</code>" + (f" ({esc(d.get('split'))} split)" if d.get("split") else "") \
            + "</h3>"
        body += table(["group", "n", *metrics], [[t, g.get("n"), *(g.get(k) for k in metrics)]
                                                 for t, g in groups.items()])
        shown = [k for k in ("conclusion_accuracy", "answered_from_governing", "key_point_recall") if k in metrics]
        body += bar_chart(list(groups), {k: [num(g.get(k)) for g in groups.values()] for k in shown},
                          f"{path.name}: per type", y_max=1.0)
    if not body:
        body = missing("python -m agentic_rag.eval answers --split test --json eval/results/answers_test.json "
                       "(or bench/answers_before_after.py)")
    return section("answers", title, what, [before_after, *answer_files] if answer_files else [before_after], body)


def _metric_groups(data: dict) -> dict[str, dict]:
    """Groups of metrics in a conversation results file, whatever its exact shape: the summary's by_kind / by_type
    (or the file's), with the summary itself as "all"."""
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else data
    groups: dict[str, dict] = {"all": summary}
    for key in ("by_kind", "by_turn_kind", "by_type", "kinds"):
        for source in (summary, data):
            found = source.get(key)
            if isinstance(found, dict):
                groups.update({str(k): v for k, v in found.items() if isinstance(v, dict)})
                return groups
    return groups


def conversation_section(files: list[Path]) -> tuple[str, str, str]:
    title, what = "Conversations, per turn kind", (
        "Multi-turn conversations (eval/conversation_eval.jsonl): follow-ups that need the history, topic switches "
        "that must not inherit it, vague openers that should be asked back; metrics per turn kind.")
    body = ""
    for path in files:
        d = read_json(path)
        if d is None:
            body += f'<p class="missing">{esc(rel(path))}: unreadable.</p>'
            continue
        groups = _metric_groups(d)
        metrics = sorted({k for g in groups.values() for k, v in g.items() if num(v) is not None and k != "n"})
        if not metrics:
            body += f'<p class="missing">{esc(rel(path))}: no numeric metrics found.</p>'
            continue
        body += f"<h3><code>{esc(rel(path))}</code></h3>"
        body += table(["turn kind", "n", *metrics], [[t, g.get("n"), *(g.get(k) for k in metrics)]
                                                     for t, g in groups.items()])
        rates = [k for k in metrics if all(0 <= (num(g.get(k)) or 0) <= 1 for g in groups.values())][:4]
        body += bar_chart(list(groups), {k: [num(g.get(k)) for g in groups.values()] for k in rates},
                          f"{path.name}: per turn kind", y_max=1.0)
    if not body:
        body = missing("a conversation run writing eval/results/conversation*.json (replay of "
                       "eval/conversation_eval.jsonl; or adk eval agentic_rag "
                       "agentic_rag/conversation_pipl_test.evalset.json --config_file_path "
                       "agentic_rag/test_config_no_reference.json)")
    return section("conversations", title, what, files or [Path("eval/results/conversation*.json")], body)


def latency_section(files: list[Path]) -> tuple[str, str, str]:
    title, what = "Latency distribution", (
        "Seconds per question from the start to the whole answer (latency_s) and to its first text (first_text_s), "
        "per results file: box p25–p75, whiskers p10–p90, median line, each question a dot.")
    series: dict[str, list[float]] = {}
    sources = []
    for path in files:
        d = read_json(path)
        questions = d.get("questions") if d else None
        if not isinstance(questions, list):
            continue
        for key in ("latency_s", "first_text_s"):
            values = [v for q in questions if isinstance(q, dict) and (v := num(q.get(key))) is not None]
            if values:
                series[f"{path.stem} · {key}"] = values
                if path not in sources:
                    sources.append(path)
    if not series:
        return section("latency", title, what, files or [Path("eval/results")], missing(
            "python -m agentic_rag.eval e2e … --json eval/results/" + E2E_FILE + " (any run that records questions)"))
    body = table(["series", "n", "p10", "p50", "p90", "max"],
                 [[name, len(vs), quantile(vs, .1), quantile(vs, .5), quantile(vs, .9), max(vs)]
                  for name, vs in series.items()])
    body += box_chart(series, "Latency per question")
    return section("latency", title, what, sources, body)


# ---------------------------------------------------------------------------------------------- the page
def build_report(results: Path, bench: Path) -> tuple[str, list[str]]:
    answer_files = sorted(results.glob("answers_*.json"))
    conversation_files = sorted(results.glob("conversation*.json"))
    before_after = bench / BEFORE_AFTER
    sections = [
        retrieval_section(results / "retrieval.json", "Retrieval, PIPL", "retrieval",
                          "python -m agentic_rag.eval retrieval --dataset eval/pipl_eval.jsonl "
                          "--json eval/results/retrieval.json"),
        retrieval_section(results / "retrieval_multilaw.json", "Retrieval, six laws", "retrieval-multilaw",
                          "python -m agentic_rag.eval retrieval --dataset eval/multilaw_eval.jsonl --data-dir "
                          "data-multilaw --json eval/results/retrieval_multilaw.json"),
        e2e_section(results / E2E_FILE),
        answers_section(before_after, answer_files),
        conversation_section(conversation_files),
        latency_section([results / E2E_FILE, before_after, *answer_files, *conversation_files]),
    ]
    nav = "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t, _ in sections)
    page = (f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>agentic-rag evaluation report</title>'
            f"<style>{CSS}</style></head><body><h1>agentic-rag evaluation report</h1>"
            f'<p class="src">Generated {esc(time.strftime("%Y-%m-%d %H:%M"))} by '
            f"<code>python -m agentic_rag.eval report</code> from the results files below. One file, no network.</p>"
            f"<nav>{nav}</nav>{''.join(s for _, _, s in sections)}</body></html>\n")
    return page, [a for a, _, _ in sections]


def write_report(out: Path, results: Path = PROJECT_ROOT / "eval" / "results",
                 bench: Path = PROJECT_ROOT / "bench" / "results") -> tuple[Path, list[str]]:
    page, sections = build_report(results, bench)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out, sections
