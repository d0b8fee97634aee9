"""How eval/conclusion_labels.jsonl's articles were drawn (stop 42) and those of its second round (stop 45,
`--round 2`): regulating articles of the six laws, none a gold article of the report sets (nor, in round 2, an
article round 1 drew), in five batches for five labellers (eval/labelling/conclusion_labels_prompt.md).

    python eval/labelling/conclusion_labels_batches.py OUT_DIR [--round 2]
"""
import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "eval"))
from conclusion_rules import LAWREFBOOK, PIPL_LAW  # noqa: E402

from agentic_rag.knowledge.corpus import load_law_text, parse_lawrefbook  # noqa: E402
from agentic_rag.legal.modality import modality  # noqa: E402

ROUNDS = {1: (42, {'中华人民共和国民法典': 70, '中华人民共和国个人信息保护法': 30, '中华人民共和国劳动合同法': 35,
                   '中华人民共和国消费者权益保护法': 25, '中华人民共和国电子商务法': 25, '中华人民共和国数据安全法': 15}),
          # what is left after round 1 and the report sets' gold: no PIPL article, few of the smaller laws
          2: (45, {'中华人民共和国民法典': 100, '中华人民共和国劳动合同法': 10, '中华人民共和国消费者权益保护法': 10,
                   '中华人民共和国电子商务法': 20, '中华人民共和国数据安全法': 6})}


def report_gold() -> set:
    held = set()
    for f, test_only in [('eval/answers_eval.jsonl', True), ('eval/answers_fresh.jsonl', False),
                         ('eval/answers_fresh2.jsonl', False)]:
        for line in open(ROOT / f):
            r = json.loads(line)
            if not (test_only and r.get('split') != 'test'):
                held |= {(g['law'], g['article']) if isinstance(g, dict) else (PIPL_LAW, g) for g in r['gold']}
    return held


def draw(docs, seed: int, quota: dict, exclude: set) -> list:
    cands = [d for d in docs if (d.law, d.article) not in exclude and
             modality(d.text) in ('prohibit', 'oblige', 'permit', 'exempt') and 40 <= len(d.text) <= 600]
    by = {}
    for d in cands:
        by.setdefault(d.law, []).append(d)
    print({k: len(v) for k, v in by.items()})
    rng = random.Random(seed)
    pick = []
    for law, n in quota.items():
        pick += rng.sample(by.get(law, []), min(n, len(by.get(law, []))))
    rng.shuffle(pick)
    return pick


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument('out', type=Path, nargs='?', default=Path('.'))
    p.add_argument('--round', type=int, choices=sorted(ROUNDS), default=1)
    args = p.parse_args()
    laws = [line.strip() for line in open(ROOT / 'eval/multilaw_laws.txt') if line.strip()]
    docs = [d for d in parse_lawrefbook(LAWREFBOOK, laws=set(laws) - {PIPL_LAW}).documents]
    docs += list(load_law_text(ROOT / 'chinese_law.txt'))
    held = report_gold()
    print('held-out gold', len(held))
    exclude = set(held)
    for earlier in range(1, args.round):
        exclude |= {(d.law, d.article) for d in draw(docs, *ROUNDS[earlier], held)}
    pick = draw(docs, *ROUNDS[args.round], exclude)
    for i in range(5):
        with open(args.out / f'batch{i+1}.jsonl', 'w') as f:
            for d in pick[i::5]:
                f.write(json.dumps({'law': d.law, 'article': d.article, 'article_cn': d.article_cn, 'text': d.text},
                                   ensure_ascii=False) + '\n')
    print(len(pick))


if __name__ == '__main__':
    main()
