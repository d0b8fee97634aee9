"""Validate eval/conversation_eval.jsonl (multi-turn conversation eval set). Standard library only.

    python eval/check_conversation_eval.py [--data eval/conversation_eval.jsonl]
                                           [--corpus ../shared/data/lawrefbook/lawrefbook_articles.jsonl.gz]
    python eval/check_conversation_eval.py --data eval/conversation_fresh.jsonl --fresh

Exit 0 when the file is valid, 1 when any check fails (every problem is printed), 2 on a usage/IO error.
Prints the counts per turn kind, kb and split either way.

Checks (see eval/conversation_eval.README.md):
  * schema: exactly the keys id/kb/split/turns per row and user/kind/expect/standalone/gold/must_keep per turn,
    enums for kb/split/kind/expect, 2-4 turns, non-empty strings, id = conv-<kb>-NNN, no duplicate ids;
  * at least 44 conversations and the composition minima (pronoun 15, ellipsis 12, penalty 6, more 5,
    topic_switch 6, vague_first 8, law_change 5 in multilaw only);
  * every gold article exists in its kb: pipl = int 1..74 (and, when present, a line of chinese_law.txt);
    multilaw = {"law", "article"} with (law, article) an article of that title in the LawRefBook corpus, where
    article is the integer of the corpus' 第X条 field (for 民法典 the corpus `seq` restarts in every 编, so the
    global number comes from 第X条; for the five other laws it equals `seq`, which is checked too);
  * expect=clarify <=> kind=vague_first <=> gold == []; every other turn has expect=answer and non-empty gold;
  * the first turn is first or vague_first, later turns are neither; a clarify_reply comes directly after a
    vague_first and every vague_first is followed by one;
  * every must_keep item occurs in its own turn's user text and in its standalone;
  * standalone differs from the user text for pronoun/ellipsis/penalty/more/law_change/clarify_reply;
  * topic_switch: no must_keep item of an earlier turn leaks into the standalone unless the user said it again;
  * law_change: the gold names a law that the previous turn's gold did not; penalty: the gold holds at least one
    article of a liability chapter of the law concerned;
  * no user text is a verbatim copy of a query in eval/pipl_eval.jsonl or eval/multilaw_eval.jsonl;
  * split: within each kb the rows alternate dev/test in id order and test gets the odd one out.

With --fresh (the held-out eval/conversation_fresh.jsonl): split must be "fresh" (no alternation), ids are
conv-fresh-<kb>-NNN, the minima are 24 conversations and pronoun 12, ellipsis 10, penalty 6, more 4,
topic_switch 4, vague_first 4, law_change 4, and no user text may copy a user turn of conversation_eval.jsonl.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KBS = ("pipl", "multilaw")
SPLITS = ("dev", "test")
KINDS = ("first", "pronoun", "ellipsis", "penalty", "law_change", "more", "topic_switch", "vague_first",
         "clarify_reply")
EXPECTS = ("answer", "clarify")
ROW_KEYS = {"id", "kb", "split", "turns"}
TURN_KEYS = {"user", "kind", "expect", "standalone", "gold", "must_keep"}
FOLLOW_UP = {"pronoun", "ellipsis", "penalty", "more", "law_change", "clarify_reply"}
MIN_ROWS = 44
MIN_KIND = {"pronoun": 15, "ellipsis": 12, "penalty": 6, "more": 5, "topic_switch": 6, "vague_first": 8,
            "law_change": 5}
FRESH_MIN_ROWS = 24
FRESH_MIN_KIND = {"pronoun": 12, "ellipsis": 10, "penalty": 6, "more": 4, "topic_switch": 4, "vague_first": 4,
                  "law_change": 4}

PIPL_TITLE = "中华人民共和国个人信息保护法"
PIPL_N = 74
MULTILAW = {  # title -> number of articles (all six are numbered 1..N without gaps in the corpus)
    "中华人民共和国劳动合同法": 98,
    "中华人民共和国消费者权益保护法": 63,
    "中华人民共和国电子商务法": 89,
    PIPL_TITLE: PIPL_N,
    "中华人民共和国数据安全法": 55,
    "中华人民共和国民法典": 1260,
}
# Articles that impose liability (法律责任 chapters; for 民法典 the 民事责任 / 违约责任 / 人格权保护 / 侵权责任 parts).
LIABILITY = {
    PIPL_TITLE: [(66, 71)],
    "中华人民共和国劳动合同法": [(80, 95)],
    "中华人民共和国消费者权益保护法": [(48, 61)],
    "中华人民共和国电子商务法": [(74, 88)],
    "中华人民共和国数据安全法": [(44, 52)],
    "中华人民共和国民法典": [(176, 187), (577, 594), (995, 1000), (1165, 1258)],
}

_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNIT = {"十": 10, "百": 100, "千": 1000}


def cn_article(label: str) -> int:
    """'第一千二百六十条' -> 1260, '第十条' -> 10, '第12条' -> 12."""
    s = label.strip()
    s = s[1:] if s.startswith("第") else s
    s = s[:-1] if s.endswith("条") else s
    if s.isdigit():
        return int(s)
    total = num = 0
    for ch in s:
        if ch in _DIGIT:
            num = _DIGIT[ch]
        elif ch in _UNIT:
            total += (num or 1) * _UNIT[ch]
            num = 0
        else:
            raise ValueError(f"not an article label: {label!r}")
    return total + num


def load_corpus(path: Path) -> tuple[dict[str, set[int]], list[str]]:
    """(title -> article numbers) for the six laws, plus problems found in the corpus itself."""
    arts: dict[str, set[int]] = collections.defaultdict(set)
    problems = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not any(t in line for t in MULTILAW):
                continue
            rec = json.loads(line)
            law = rec.get("law")
            if law not in MULTILAW:
                continue
            n = cn_article(rec["article"])
            if law != "中华人民共和国民法典" and n != rec.get("seq"):
                problems.append(f"corpus: {law} {rec['article']} has seq {rec.get('seq')}")
            arts[law].add(n)
    for law, size in MULTILAW.items():
        if arts.get(law) != set(range(1, size + 1)):
            problems.append(f"corpus: {law} is not numbered 1..{size} (found {len(arts.get(law, ()))} articles)")
    return arts, problems


def load_pipl_lines(path: Path) -> set[int]:
    nums = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"《中华人民共和国个人信息保护法》(第[零〇一二两三四五六七八九十百千\d]+条)", line)
        if m:
            nums.add(cn_article(m.group(1)))
    return nums


def norm(text: str) -> str:
    return re.sub(r"[\s，。？！、,.?!：:；;“”\"'（）()《》]", "", text)


def existing_queries() -> dict[str, str]:
    """normalised query text -> id, over the single-turn eval sets."""
    out = {}
    for name in ("pipl_eval.jsonl", "multilaw_eval.jsonl"):
        p = ROOT / "eval" / name
        if p.exists():
            for line in p.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    out[norm(rec["query"])] = rec["id"]
    return out


def conversation_turns() -> dict[str, str]:
    """normalised user text -> 'id turn N', over eval/conversation_eval.jsonl (for --fresh)."""
    out = {}
    p = ROOT / "eval" / "conversation_eval.jsonl"
    if p.exists():
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                for i, t in enumerate(rec["turns"], 1):
                    out[norm(t["user"])] = f"{rec['id']} turn {i}"
    return out


def bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


def nearest_copy(rows: list, copies: dict[str, str], against: str = "pipl_eval/multilaw_eval queries") -> str:
    """Informational: the highest character-bigram Jaccard between a user turn and an existing eval query."""
    grams = [(q, qid, bigrams(q)) for q, qid in copies.items()]
    best = (0.0, "", "")
    for _, r in rows:
        for t in r.get("turns", []) if isinstance(r, dict) else []:
            u = bigrams(norm(t.get("user", ""))) if isinstance(t, dict) else set()
            if len(u) < 3:
                continue
            for _, qid, g in grams:
                j = len(u & g) / len(u | g)
                if j > best[0]:
                    best = (j, str(r.get("id")), qid)
    return f"max char-bigram Jaccard vs {against}: {best[0]:.2f} ({best[1]} ~ {best[2]})"


def gold_key(kb: str, item) -> tuple[str, int] | None:
    if kb == "pipl":
        return (PIPL_TITLE, item) if isinstance(item, int) and not isinstance(item, bool) else None
    if isinstance(item, dict) and set(item) == {"law", "article"} and isinstance(item["law"], str) \
            and isinstance(item["article"], int) and not isinstance(item["article"], bool):
        return item["law"], item["article"]
    return None


def in_ranges(n: int, ranges) -> bool:
    return any(a <= n <= b for a, b in ranges)


def check(rows: list, corpus: dict[str, set[int]] | None, pipl_lines: set[int] | None,
          copies: dict[str, str], fresh: bool = False, conv_turns: dict[str, str] | None = None) -> list[str]:
    errs: list[str] = []
    splits, prefix = (("fresh",), "conv-fresh") if fresh else (SPLITS, "conv")
    ids = collections.Counter()
    for ln, row in rows:
        where = f"line {ln}"
        if not isinstance(row, dict) or set(row) != ROW_KEYS:
            got = sorted(row) if isinstance(row, dict) else type(row).__name__
            errs.append(f"{where}: row keys must be {sorted(ROW_KEYS)}, got {got}")
            continue
        rid, kb, split, turns = row["id"], row["kb"], row["split"], row["turns"]
        where = f"{rid!r} (line {ln})"
        ids[rid] += 1
        if kb not in KBS:
            errs.append(f"{where}: kb {kb!r} not in {KBS}")
            continue
        if split not in splits:
            errs.append(f"{where}: split {split!r} not in {splits}")
        if not isinstance(rid, str) or not re.fullmatch(rf"{prefix}-{kb}-\d{{3}}", rid):
            errs.append(f"{where}: id must look like {prefix}-{kb}-NNN")
        if not isinstance(turns, list) or not 2 <= len(turns) <= 4:
            errs.append(f"{where}: turns must be a list of 2-4 turns")
            continue
        prev_keep: list[str] = []
        prev_laws: set[str] | None = None
        for i, t in enumerate(turns):
            tw = f"{where} turn {i + 1}"
            if not isinstance(t, dict) or set(t) != TURN_KEYS:
                got = sorted(t) if isinstance(t, dict) else type(t).__name__
                errs.append(f"{tw}: turn keys must be {sorted(TURN_KEYS)}, got {got}")
                prev_laws = None
                continue
            user, kind, expect, st, gold, keep = (t[k] for k in ("user", "kind", "expect", "standalone", "gold",
                                                                  "must_keep"))
            if not isinstance(user, str) or not user.strip():
                errs.append(f"{tw}: empty user text")
                user = ""
            if not isinstance(st, str) or not st.strip():
                errs.append(f"{tw}: empty standalone")
                st = ""
            if kind not in KINDS:
                errs.append(f"{tw}: kind {kind!r} not in {KINDS}")
            if expect not in EXPECTS:
                errs.append(f"{tw}: expect {expect!r} not in {EXPECTS}")
            if not isinstance(gold, list):
                errs.append(f"{tw}: gold must be a list")
                gold = []
            if not isinstance(keep, list) or not all(isinstance(k, str) and k for k in keep):
                errs.append(f"{tw}: must_keep must be a list of non-empty strings")
                keep = []
            # turn order
            if i == 0 and kind not in ("first", "vague_first"):
                errs.append(f"{tw}: the first turn must be first or vague_first, not {kind}")
            if i > 0 and kind in ("first", "vague_first"):
                errs.append(f"{tw}: {kind} only as the first turn")
            if kind == "clarify_reply" and (i == 0 or turns[i - 1].get("kind") != "vague_first"):
                errs.append(f"{tw}: clarify_reply must come directly after a vague_first")
            if kind == "vague_first" and (len(turns) < 2 or turns[1].get("kind") != "clarify_reply"):
                errs.append(f"{tw}: vague_first must be followed by a clarify_reply")
            if kind == "law_change" and kb != "multilaw":
                errs.append(f"{tw}: law_change only in multilaw")
            # expect / gold
            if (expect == "clarify") != (kind == "vague_first"):
                errs.append(f"{tw}: expect=clarify exactly for vague_first turns (kind {kind}, expect {expect})")
            if expect == "clarify" and gold:
                errs.append(f"{tw}: expect=clarify with non-empty gold")
            if expect == "answer" and not gold:
                errs.append(f"{tw}: expect=answer with empty gold")
            keys = []
            for g in gold:
                key = gold_key(kb, g)
                if key is None:
                    errs.append(f"{tw}: gold item {g!r} has the wrong form for kb {kb}")
                    continue
                law, n = key
                if kb == "pipl":
                    ok = 1 <= n <= PIPL_N and (pipl_lines is None or n in pipl_lines)
                elif corpus is not None:
                    ok = n in corpus.get(law, ())
                else:
                    ok = law in MULTILAW and 1 <= n <= MULTILAW[law]
                if not ok:
                    errs.append(f"{tw}: gold {law} 第{n}条 does not exist in kb {kb}")
                keys.append(key)
            if len(set(keys)) != len(keys):
                errs.append(f"{tw}: duplicate gold items")
            # rewrite checks
            for k in keep:
                if k not in user:
                    errs.append(f"{tw}: must_keep {k!r} not in the user text")
                if k not in st:
                    errs.append(f"{tw}: must_keep {k!r} not in the standalone")
            if len(set(keep)) != len(keep):
                errs.append(f"{tw}: duplicate must_keep items")
            if kind in FOLLOW_UP and norm(st) == norm(user):
                errs.append(f"{tw}: standalone of a {kind} turn must rewrite the user text")
            if kind == "topic_switch":
                leaked = [k for k in prev_keep if k in st and k not in user]
                if leaked:
                    errs.append(f"{tw}: topic_switch standalone leaks earlier turns' terms {leaked}")
            laws = {law for law, _ in keys}
            if kind == "law_change" and prev_laws is not None and not (laws - prev_laws):
                errs.append(f"{tw}: law_change gold {sorted(laws)} names no law beyond the previous turn's")
            if kind == "penalty" and keys and not any(in_ranges(n, LIABILITY.get(law, [])) for law, n in keys):
                errs.append(f"{tw}: penalty gold holds no liability article")
            if user and norm(user) in copies:
                errs.append(f"{tw}: user text copies a query of pipl_eval/multilaw_eval")
            if user and conv_turns and norm(user) in conv_turns:
                errs.append(f"{tw}: user text copies a user turn of conversation_eval ({conv_turns[norm(user)]})")
            prev_keep += keep
            prev_laws = laws if keys else prev_laws
    for rid, n in ids.items():
        if n > 1:
            errs.append(f"duplicate id {rid!r} ({n} rows)")
    min_rows, min_kind = (FRESH_MIN_ROWS, FRESH_MIN_KIND) if fresh else (MIN_ROWS, MIN_KIND)
    if len(rows) < min_rows:
        errs.append(f"{len(rows)} conversations, need at least {min_rows}")
    kinds = collections.Counter(t.get("kind") for _, r in rows if isinstance(r, dict)
                                for t in r.get("turns", []) if isinstance(t, dict))
    for kind, n in min_kind.items():
        if kinds[kind] < n:
            errs.append(f"{kinds[kind]} {kind} turns, need at least {n}")
    # split: alternate within kb in id order, test takes the odd one out
    for kb in () if fresh else KBS:
        seq = [r["split"] for _, r in sorted(((ln, r) for ln, r in rows if isinstance(r, dict)
                                               and r.get("kb") == kb), key=lambda x: str(x[1].get("id")))]
        if any(a == b for a, b in zip(seq, seq[1:])):
            errs.append(f"kb {kb}: splits do not alternate dev/test in id order")
        if not 0 <= seq.count("test") - seq.count("dev") <= 1:
            errs.append(f"kb {kb}: {seq.count('dev')} dev vs {seq.count('test')} test (test takes the odd one out)")
    return errs


def report(rows: list, splits: tuple[str, ...] = SPLITS) -> None:
    rs = [r for _, r in rows if isinstance(r, dict) and isinstance(r.get("turns"), list)]
    turns = [(r.get("kb"), r.get("split"), t) for r in rs for t in r["turns"] if isinstance(t, dict)]
    print(f"conversations: {len(rs)}   turns: {len(turns)}")
    print("per kb:    " + ", ".join(f"{kb} {sum(r.get('kb') == kb for r in rs)}" for kb in KBS))
    print("per split: " + ", ".join(f"{s} {sum(r.get('split') == s for r in rs)}" for s in splits))
    print("kb x split: " + ", ".join(f"{kb}/{s} {sum(r.get('kb') == kb and r.get('split') == s for r in rs)}"
                                    for kb in KBS for s in splits))
    lens = collections.Counter(len(r["turns"]) for r in rs)
    print("turns per conversation: " + ", ".join(f"{n}-turn {lens[n]}" for n in sorted(lens)))
    print(f"{'kind':<14}" + "".join(f"{c:>14}" for c in ("all", "pipl", "multilaw") + splits))
    for kind in KINDS:
        cells = [sum(t.get("kind") == kind for _, _, t in turns)]
        cells += [sum(t.get("kind") == kind and kb == x for kb, _, t in turns) for x in KBS]
        cells += [sum(t.get("kind") == kind and s == x for _, s, t in turns) for x in splits]
        print(f"{kind:<14}" + "".join(f"{c:>14}" for c in cells))
    ex = collections.Counter(t.get("expect") for _, _, t in turns)
    print("expect: " + ", ".join(f"{e} {ex[e]}" for e in EXPECTS))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=ROOT / "eval" / "conversation_eval.jsonl")
    p.add_argument("--corpus", type=Path,
                   default=ROOT.parent / "shared" / "data" / "lawrefbook" / "lawrefbook_articles.jsonl.gz")
    p.add_argument("--pipl-text", type=Path, default=ROOT / "chinese_law.txt")
    p.add_argument("--fresh", action="store_true",
                   help="validate the held-out conversation_fresh.jsonl (split fresh, conv-fresh-<kb>-NNN ids, "
                        "its own minima, no copies of conversation_eval user turns)")
    args = p.parse_args(argv)
    try:
        raw = args.data.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        print(f"cannot read {args.data}: {e}", file=sys.stderr)
        return 2
    rows, errs = [], []
    for ln, line in enumerate(raw, 1):
        if not line.strip():
            continue
        try:
            rows.append((ln, json.loads(line)))
        except json.JSONDecodeError as e:
            errs.append(f"line {ln}: invalid JSON ({e})")
    corpus = None
    if args.corpus.exists():
        corpus, problems = load_corpus(args.corpus)
        errs += problems
    else:
        print(f"warning: {args.corpus} not found; multilaw gold checked against the built-in article counts",
              file=sys.stderr)
    pipl_lines = load_pipl_lines(args.pipl_text) if args.pipl_text.exists() else None
    if pipl_lines is not None and pipl_lines != set(range(1, PIPL_N + 1)):
        errs.append(f"{args.pipl_text}: expected articles 1..{PIPL_N}, found {len(pipl_lines)}")
    copies = existing_queries()
    conv_turns = conversation_turns() if args.fresh else None
    errs += check(rows, corpus, pipl_lines, copies, args.fresh, conv_turns)
    report(rows, ("fresh",) if args.fresh else SPLITS)
    if copies:
        print(nearest_copy(rows, copies))
    if conv_turns:
        print(nearest_copy(rows, conv_turns, "conversation_eval user turns"))
    if errs:
        print(f"\nFAIL: {len(errs)} problem(s)")
        for e in errs:
            print("  " + e)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
