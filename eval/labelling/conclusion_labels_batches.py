"""How eval/conclusion_labels.jsonl's articles were drawn (stop 42): regulating articles of the six laws, none a gold
article of the report sets, in five batches for five labellers (eval/labelling/conclusion_labels_prompt.md)."""
import json, random, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "eval"))
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
from conclusion_rules import articles_by_key, LAWREFBOOK, PIPL_LAW
from agentic_rag.knowledge.corpus import load_law_text, parse_lawrefbook
from agentic_rag.legal.modality import modality
laws = [l.strip() for l in open(ROOT / 'eval/multilaw_laws.txt') if l.strip()]
docs = [d for d in parse_lawrefbook(LAWREFBOOK, laws=set(laws) - {PIPL_LAW}).documents]
docs += list(load_law_text(ROOT / 'chinese_law.txt'))
held = set()
def add(r, law_default):
    for g in r['gold']:
        held.add((g['law'], g['article']) if isinstance(g, dict) else (PIPL_LAW, g))
for f, test_only in [('eval/answers_eval.jsonl', True), ('eval/answers_fresh.jsonl', False), ('eval/answers_fresh2.jsonl', False)]:
    for l in open(ROOT / f):
        r = json.loads(l)
        if test_only and r.get('split') != 'test': continue
        add(r, None)
print('held-out gold', len(held))
cands = [d for d in docs if (d.law, d.article) not in held and modality(d.text) in ('prohibit', 'oblige', 'permit', 'exempt') and 40 <= len(d.text) <= 600]
by = {}
for d in cands: by.setdefault(d.law, []).append(d)
print({k: len(v) for k, v in by.items()})
rng = random.Random(42)
quota = {'中华人民共和国民法典': 70, '中华人民共和国个人信息保护法': 30, '中华人民共和国劳动合同法': 35, '中华人民共和国消费者权益保护法': 25, '中华人民共和国电子商务法': 25, '中华人民共和国数据安全法': 15}
pick = []
for law, n in quota.items():
    pick += rng.sample(by[law], min(n, len(by[law])))
rng.shuffle(pick)
k = 5
for i in range(k):
    with open(OUT / f'batch{i+1}.jsonl', 'w') as f:
        for d in pick[i::k]:
            f.write(json.dumps({'law': d.law, 'article': d.article, 'article_cn': d.article_cn, 'text': d.text}, ensure_ascii=False) + '\n')
print(len(pick))
