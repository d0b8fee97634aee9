"""The grader's instruction (Chinese). Question and articles come first, exactly as the answer prompt has them."""

# Follows the shared prefix (stages/evidence.py: the question, then the articles), as the answer's task does.
GRADE = """【任务】质量评估：判断上面检索到的法条能否回答用户的问题。{sub_questions}
请按四个维度各打 0-10 分（10 分最好，只能是 0 到 10 之间的数）：
- relevance 相关性：法条与问题是否直接相关；
- completeness 完整性：是否包含回答问题所需的全部要点；
- accuracy 准确性：法条是否确实规范了问题所问的情形；
- coverage 覆盖面：是否覆盖了问题涉及的各个方面{coverage_note}。
评分标准：9-10 优秀，完全满足；7-8 良好，基本满足；5-6 一般，部分满足；3-4 较差，勉强相关；0-2 无关或无结果。
只要有一条法条直接规范了问题所问的行为，相关性和准确性就应给 8 分以上；法条足以回答问题时，完整性和覆盖面也应给 8 分以上。
若不足，在 missing 中用一句话说明还缺少哪方面的规定；在 relevant 中列出真正能回答问题的条文（如 "第十条"）。

只输出一个 JSON 对象：
{{"relevance": 分数, "relevance_reason": "理由", "completeness": 分数, "completeness_reason": "理由", "accuracy": 分数, "accuracy_reason": "理由", "coverage": 分数, "coverage_reason": "理由", "missing": "缺少的方面（没有则为空）", "relevant": ["第X条"]}}"""

# The embedded model is asked once per article, on top of the shared prefix (question + articles) and this task;
# its logit(是) − logit(否) is the article's relevance evidence (see stages/grade/judge.py). The task is part of the
# prefix, evaluated once; each article adds only its short tail (~14 tokens instead of ~45: ~3 s less on 2 cores).
RELEVANCE_ASK = "【任务】相关性判断：下面问到的法条，能否作为回答用户问题的法律依据（直接规范了问题所问的情形）？只回答“是”或“否”。\n"
RELEVANCE_TAIL = "【{label}】能否作为依据？"


def relevance_questions(prefix: str, labels: list[str]) -> tuple[str, list[str]]:
    """(the scoring prefix, one tail per article) for `score_tails`."""
    return prefix + RELEVANCE_ASK, [RELEVANCE_TAIL.format(label=label) for label in labels]

SUB_QUESTIONS = "\n这个问题包含几个子问题，每个都需要有条文回答：\n{items}"
COVERAGE_NOTE = "（每个子问题是否都有条文回答）"
