#!/usr/bin/env python3
"""Validate eval/answers_eval.jsonl (answer-content eval set). Stdlib only.

    python3 eval/check_answers_eval.py [path/to/answers_eval.jsonl]
    python3 eval/check_answers_eval.py eval/answers_fresh.jsonl     # held-out "fresh" set

A file whose rows have split "fresh" (eval/answers_fresh.jsonl) is checked in fresh mode: ids
fresh-pipl-NNN / fresh-ml-NNN, every split "fresh", at least 40 rows, no dev/test stratification check, and
its queries are also compared with eval/answers_eval.jsonl for near-duplicates (and, for any fresh file other than
eval/answers_fresh.jsonl, e.g. eval/answers_fresh2.jsonl, also with eval/answers_fresh.jsonl). All other checks are the same.
The default file is always checked in the dev/test mode described below.

Checks (any failure → exit status 1):
  * schema: fields, types, enums, id format, unique ids, at least 130 rows, type ↔ label consistency;
  * every gold article exists in its knowledge base (pipl: 第X条 lines of chinese_law.txt;
    multilaw: (law, article) in the LawRefBook jsonl.gz — the article number is read from the `article`
    field 第X条, because `seq` restarts in every 民法典 part);
  * every regex compiles; every key point matches the reference answer (whitespace removed); no must_not
    pattern matches the reference answer; every must_not example is matched by its own patterns; no must_not
    pattern matches the text of any article of the row's knowledge base (answers quote statutes verbatim, so a
    pattern that fires on statute text would punish correct answers);
  * the reference answer starts with the conclusion label ("结论：不可以…" or "不可以…"; "说明：…" for 说明),
    except out_of_kb / chitchat;
  * every 第X条 the reference answer cites is a gold article of the row (multilaw: matched on the law when the
    citation names one, else on the number);
  * non-lookup queries do not name an article number;
  * no query is a near-duplicate (character-bigram Jaccard >= 0.6) of a query in eval/pipl_eval.jsonl,
    eval/multilaw_eval.jsonl or another row;
  * split: within every (kb, type) group test and dev differ by at most one, test never smaller.
Prints counts per (kb, type, split) and per label.
"""
from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

EVAL = Path(__file__).resolve().parent
REPO = EVAL.parent
DEFAULT_DATA = EVAL / "answers_eval.jsonl"
FRESH_DATA = EVAL / "answers_fresh.jsonl"  # a further fresh set is also compared with this one
PIPL_TEXT = REPO / "chinese_law.txt"
LAWREF = Path("/work/shared/data/lawrefbook/lawrefbook_articles.jsonl.gz")
OTHER_SETS = [EVAL / "pipl_eval.jsonl", EVAL / "multilaw_eval.jsonl"]

MULTILAW_LAWS = [
    "中华人民共和国劳动合同法", "中华人民共和国消费者权益保护法", "中华人民共和国电子商务法",
    "中华人民共和国个人信息保护法", "中华人民共和国数据安全法", "中华人民共和国民法典",
]
# Short names a reference answer may use in front of 第X条.
LAW_ALIASES = {
    "劳动合同法": "中华人民共和国劳动合同法",
    "消费者权益保护法": "中华人民共和国消费者权益保护法", "消法": "中华人民共和国消费者权益保护法",
    "电子商务法": "中华人民共和国电子商务法", "电商法": "中华人民共和国电子商务法",
    "个人信息保护法": "中华人民共和国个人信息保护法", "个保法": "中华人民共和国个人信息保护法",
    "数据安全法": "中华人民共和国数据安全法", "民法典": "中华人民共和国民法典",
}
for _full in MULTILAW_LAWS:
    LAW_ALIASES[_full] = _full

KBS = {"pipl", "multilaw"}
TYPES = {"no", "yes", "exception", "depends", "howto", "lookup", "multi", "out_of_kb", "chitchat"}
LABELS = {"可以", "不可以", "需要", "不需要", "视情况", "说明"}
NO_GOLD_TYPES = {"out_of_kb", "chitchat"}
LABELS_BY_TYPE = {
    "no": {"不可以", "不需要"},
    "yes": {"可以", "需要"},
    "exception": {"可以", "不可以", "需要", "不需要"},
    "depends": {"视情况"},
    "howto": {"说明"},
    "lookup": {"说明"},
    "multi": LABELS,
    "out_of_kb": {"不适用"},
    "chitchat": {"不适用"},
}
ID_RE = {"pipl": re.compile(r"^ans-pipl-\d{3}$"), "multilaw": re.compile(r"^ans-ml-\d{3}$")}
FRESH_ID_RE = {"pipl": re.compile(r"^fresh-pipl-\d{3}$"), "multilaw": re.compile(r"^fresh-ml-\d{3}$")}
MIN_ROWS = 130
FRESH_MIN_ROWS = 40
FIELDS = ["id", "kb", "query", "type", "gold", "conclusion", "key_points", "must_not", "reference_answer",
          "note", "split"]
JACCARD_LIMIT = 0.6

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
NUM = r"[0-9]{1,4}|[零〇一二两三四五六七八九十百千]{1,8}"
ALIAS_RE = "|".join(sorted(map(re.escape, LAW_ALIASES), key=len, reverse=True))
CITE_RE = re.compile(rf"(?:《(?P<titled>[^《》]{{1,30}})》|(?P<law>{ALIAS_RE}))?第(?P<num>{NUM})条")
# 第X条 / 28条 / 二十八条 — a bare Chinese numeral needs a unit, so 一条新闻 is not an article reference.
ARTICLE_IN_QUERY_RE = re.compile(rf"第\s*(?:{NUM})\s*条|[0-9]{{1,4}}\s*条|[零〇一二两三四五六七八九]*[十百千][零〇一二两三四五六七八九十百千]*\s*条")


def cn_to_int(text: str) -> int:
    """'二十八' → 28, '一千零三十四' → 1034, '28' → 28."""
    if text.isdigit():
        return int(text)
    total, digit = 0, None
    for ch in text:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        elif ch in _UNITS:
            total += (1 if digit is None else digit) * _UNITS[ch]
            digit = None
        else:
            raise ValueError(text)
    return total + (digit or 0)


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def bigrams(text: str) -> set[str]:
    s = re.sub(r"[\s，。？！、；：,.?!;:“”\"'‘’（）()《》]", "", text)
    return {s[i:i + 2] for i in range(len(s) - 1)} or {s}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def load_pipl() -> dict[int, str]:
    articles = {}
    for line in PIPL_TEXT.read_text(encoding="utf-8").splitlines():
        m = re.match(r"《中华人民共和国个人信息保护法》第(.+?)条规定，(.*)$", line.strip())
        if m:
            articles[cn_to_int(m.group(1))] = m.group(2)
    return articles


def load_multilaw() -> dict[tuple[str, int], str]:
    articles = {}
    with gzip.open(LAWREF, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["law"] not in MULTILAW_LAWS:
                continue
            m = re.fullmatch(r"第(.+?)条", row["article"].strip())
            if m:
                articles[(row["law"], cn_to_int(m.group(1)))] = row["text"]
    return articles


class Checker:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def fail(self, where: str, msg: str) -> None:
        self.errors.append(f"{where}: {msg}")


def compile_all(ck: Checker, rid: str, what: str, patterns) -> list[re.Pattern]:
    out = []
    if not isinstance(patterns, list) or not patterns:
        ck.fail(rid, f"{what}: patterns must be a non-empty list")
        return out
    for p in patterns:
        if not isinstance(p, str) or not p:
            ck.fail(rid, f"{what}: pattern must be a non-empty string: {p!r}")
            continue
        try:
            out.append(re.compile(p))
        except re.error as e:
            ck.fail(rid, f"{what}: pattern {p!r} does not compile: {e}")
    return out


def check_row(ck: Checker, row: dict, pipl: dict, multilaw: dict, kb_texts: dict, fresh: bool = False) -> None:
    rid = row.get("id", "<no id>")
    missing = [k for k in FIELDS if k not in row]
    extra = [k for k in row if k not in FIELDS]
    if missing:
        ck.fail(rid, f"missing fields {missing}")
        return
    if extra:
        ck.fail(rid, f"unknown fields {extra}")
    kb, typ = row["kb"], row["type"]
    if kb not in KBS:
        ck.fail(rid, f"bad kb {kb!r}")
        return
    if not (FRESH_ID_RE if fresh else ID_RE)[kb].match(rid):
        ck.fail(rid, f"id does not match kb {kb}")
    if typ not in TYPES:
        ck.fail(rid, f"bad type {typ!r}")
        return
    if row["split"] not in ({"fresh"} if fresh else {"dev", "test"}):
        ck.fail(rid, f"bad split {row['split']!r}")
    for k in ("query", "reference_answer", "note"):
        if not isinstance(row[k], str) or not row[k].strip():
            ck.fail(rid, f"{k} must be a non-empty string")
    query = row["query"]
    if typ != "lookup" and ARTICLE_IN_QUERY_RE.search(query):
        ck.fail(rid, "non-lookup query names an article")

    # gold
    gold = row["gold"]
    if not isinstance(gold, list):
        ck.fail(rid, "gold must be a list")
        gold = []
    if typ in NO_GOLD_TYPES:
        if gold:
            ck.fail(rid, f"{typ} must have empty gold")
    elif not 1 <= len(gold) <= 3:
        ck.fail(rid, f"gold must have 1-3 articles, has {len(gold)}")
    gold_keys: list[tuple[str, int]] = []
    for g in gold:
        if kb == "pipl":
            if not isinstance(g, int) or isinstance(g, bool):
                ck.fail(rid, f"pipl gold must be int, got {g!r}")
                continue
            if g not in pipl:
                ck.fail(rid, f"pipl gold {g} not in chinese_law.txt")
            gold_keys.append(("中华人民共和国个人信息保护法", g))
        else:
            if not (isinstance(g, dict) and set(g) == {"law", "article"} and isinstance(g["article"], int)):
                ck.fail(rid, f"multilaw gold must be {{law, article:int}}, got {g!r}")
                continue
            if g["law"] not in MULTILAW_LAWS:
                ck.fail(rid, f"unknown law {g['law']!r}")
            if (g["law"], g["article"]) not in multilaw:
                ck.fail(rid, f"gold {g['law']} {g['article']} not in lawrefbook")
            gold_keys.append((g["law"], g["article"]))
    if len(set(gold_keys)) != len(gold_keys):
        ck.fail(rid, "duplicate gold article")

    # conclusion
    concl = row["conclusion"]
    label = None
    if not (isinstance(concl, dict) and set(concl) == {"label", "condition"}):
        ck.fail(rid, "conclusion must be {label, condition}")
    else:
        label = concl["label"]
        if not isinstance(concl["condition"], str):
            ck.fail(rid, "condition must be a string")
        if label not in LABELS_BY_TYPE[typ]:
            ck.fail(rid, f"label {label!r} not allowed for type {typ}")
        if typ in NO_GOLD_TYPES and concl.get("condition"):
            ck.fail(rid, f"{typ} must have an empty condition")

    ref = squash(row["reference_answer"])
    # reference starts with the label
    if label and typ not in NO_GOLD_TYPES:
        if not (ref.startswith(label) or ref.startswith("结论：" + label) or ref.startswith("结论:" + label)):
            ck.fail(rid, f"reference_answer does not start with the label {label!r}")

    # key points
    kps = row["key_points"]
    if not isinstance(kps, list) or not 2 <= len(kps) <= 4:
        ck.fail(rid, "key_points must be a list of 2-4 items")
        kps = kps if isinstance(kps, list) else []
    for i, kp in enumerate(kps):
        if not (isinstance(kp, dict) and set(kp) == {"point", "patterns"} and isinstance(kp["point"], str)
                and kp["point"]):
            ck.fail(rid, f"key_points[{i}] must be {{point, patterns}}")
            continue
        regs = compile_all(ck, rid, f"key_points[{i}]", kp["patterns"])
        if regs and not any(r.search(ref) for r in regs):
            ck.fail(rid, f"key point {kp['point']!r} does not match the reference answer")

    # must_not
    mns = row["must_not"]
    if not isinstance(mns, list) or not 1 <= len(mns) <= 3:
        ck.fail(rid, "must_not must be a list of 1-3 items")
        mns = mns if isinstance(mns, list) else []
    texts = kb_texts[kb]
    for i, mn in enumerate(mns):
        if not (isinstance(mn, dict) and set(mn) == {"claim", "patterns", "example"}
                and isinstance(mn["claim"], str) and mn["claim"] and isinstance(mn["example"], str)
                and mn["example"]):
            ck.fail(rid, f"must_not[{i}] must be {{claim, patterns, example}}")
            continue
        regs = compile_all(ck, rid, f"must_not[{i}]", mn["patterns"])
        for r in regs:
            if r.search(ref):
                ck.fail(rid, f"must_not pattern {r.pattern!r} matches the reference answer")
            hit = next((key for key, text in texts if r.search(text)), None)
            if hit:
                ck.fail(rid, f"must_not pattern {r.pattern!r} matches statute text {hit}")
        if regs and not any(r.search(squash(mn["example"])) for r in regs):
            ck.fail(rid, f"must_not example {mn['example']!r} is not matched by its patterns")

    # citations in the reference answer
    gold_numbers = {n for _, n in gold_keys}
    for m in CITE_RE.finditer(ref):
        try:
            n = cn_to_int(m.group("num"))
        except ValueError:
            ck.fail(rid, f"unparsable citation {m.group(0)!r}")
            continue
        name = m.group("titled") or m.group("law")
        if kb == "pipl" or not name:
            if n not in gold_numbers:
                ck.fail(rid, f"reference cites {m.group(0)!r}, not a gold article")
        else:
            law = LAW_ALIASES.get(name)
            if law is None:
                ck.fail(rid, f"reference cites an unknown law {name!r}")
            elif (law, n) not in gold_keys:
                ck.fail(rid, f"reference cites {m.group(0)!r}, not a gold article")


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_DATA
    ck = Checker()
    rows = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            ck.fail(f"line {line_no}", f"invalid JSON: {e}")
    # fresh mode: the held-out set (every split "fresh"); never for the default file
    fresh = path.resolve() != DEFAULT_DATA.resolve() and any(
        isinstance(r, dict) and r.get("split") == "fresh" for r in rows)
    min_rows = FRESH_MIN_ROWS if fresh else MIN_ROWS
    if len(rows) < min_rows:
        ck.fail("file", f"only {len(rows)} rows, need at least {min_rows}")
    ids = Counter(r.get("id") for r in rows)
    for rid, n in ids.items():
        if n > 1:
            ck.fail(str(rid), f"id used {n} times")

    pipl, multilaw = load_pipl(), load_multilaw()
    if len(pipl) != 74:
        ck.fail("kb", f"chinese_law.txt has {len(pipl)} articles, expected 74")
    kb_texts = {"pipl": [(f"个人信息保护法 {n}", squash(t)) for n, t in pipl.items()],
                "multilaw": [(f"{law[7:]} {n}", squash(t)) for (law, n), t in multilaw.items()]}
    for row in rows:
        if isinstance(row, dict):
            check_row(ck, row, pipl, multilaw, kb_texts, fresh)

    # near-duplicates
    others = []
    later_fresh = fresh and FRESH_DATA.exists() and path.resolve() != FRESH_DATA.resolve()
    for p in OTHER_SETS + ([DEFAULT_DATA] if fresh else []) + ([FRESH_DATA] if later_fresh else []):
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)["query"]
                others.append((f"{p.name}", q, bigrams(q)))
    mine = [(r.get("id"), r.get("query", ""), bigrams(r.get("query", ""))) for r in rows if isinstance(r, dict)]
    max_other = 0.0
    for rid, q, bg in mine:
        for src, oq, obg in others:
            j = jaccard(bg, obg)
            max_other = max(max_other, j)
            if j >= JACCARD_LIMIT:
                ck.fail(rid, f"query near-duplicate (J={j:.2f}) of {src}: {oq!r}")
    max_self = 0.0
    for (id1, q1, b1), (id2, q2, b2) in combinations(mine, 2):
        j = jaccard(b1, b2)
        max_self = max(max_self, j)
        if j >= JACCARD_LIMIT:
            ck.fail(id1, f"query near-duplicate (J={j:.2f}) of {id2}")

    # split stratification
    groups: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in rows:
        if isinstance(r, dict):
            groups[(r.get("kb"), r.get("type"))][r.get("split")] += 1
    for (kb, typ), c in sorted(groups.items()):
        if fresh:
            break  # the fresh set is held out as a whole; no dev/test halves
        if not (0 <= c["test"] - c["dev"] <= 1):
            ck.fail(f"split {kb}/{typ}", f"test={c['test']} dev={c['dev']} is not a stratified half")

    # report
    print(f"{len(rows)} rows; max query bigram-Jaccard vs existing eval sets {max_other:.2f}, within set "
          f"{max_self:.2f}")
    if fresh:
        print("fresh mode (held-out set; splits all 'fresh', no stratification)")
        print(f"{'kb':9} {'type':10} {'fresh':>5}  labels")
        for kb in ("pipl", "multilaw"):
            n_kb = 0
            for typ in ("no", "yes", "exception", "depends", "howto", "lookup", "multi", "out_of_kb", "chitchat"):
                labs = Counter(r.get("conclusion", {}).get("label") for r in rows
                               if isinstance(r, dict) and r.get("kb") == kb and r.get("type") == typ)
                n = sum(labs.values())
                n_kb += n
                if n:
                    print(f"{kb:9} {typ:10} {n:>5}  " + ", ".join(f"{lab} {k}" for lab, k in sorted(labs.items())))
            print(f"{kb:9} {'TOTAL':10} {n_kb:>5}")
    else:
        print(f"{'kb':9} {'type':10} {'dev':>4} {'test':>5} {'all':>4}")
    for kb in (() if fresh else ("pipl", "multilaw")):
        tot = Counter()
        for typ in ("no", "yes", "exception", "depends", "howto", "lookup", "multi", "out_of_kb", "chitchat"):
            c = groups.get((kb, typ), Counter())
            tot.update(c)
            print(f"{kb:9} {typ:10} {c['dev']:>4} {c['test']:>5} {c['dev'] + c['test']:>4}")
        print(f"{kb:9} {'TOTAL':10} {tot['dev']:>4} {tot['test']:>5} {tot['dev'] + tot['test']:>4}")
    labels = Counter((r.get("kb"), r.get("conclusion", {}).get("label")) for r in rows if isinstance(r, dict))
    print("labels:", ", ".join(f"{kb}/{lab}={n}" for (kb, lab), n in sorted(labels.items())))
    if ck.errors:
        print(f"\nFAILED: {len(ck.errors)} problem(s)")
        for e in ck.errors:
            print("  -", e)
        return 1
    print("\nOK: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
