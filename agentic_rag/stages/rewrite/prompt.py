"""The rewriter's instruction (Chinese). The question comes first and the task last, so that the shared system
message and question form a prefix the later calls of the same question reuse."""

REWRITE = """用户问题：{question}

【任务】查询改写：把用户问题改写成便于检索{law}条文的查询。
要求：
1. 保留用户原意，用法律术语规范表述（例如"卖手机号"→"向他人提供个人信息"，"小孩"→"不满十四周岁未成年人"）。
2. 只在{law}涉及的领域内理解问题，不要把词语扩展成其他领域的含义。
3. 给出 2-4 个不同角度的查询变体，提取 3-6 个关键词。
4. 只输出一个 JSON 对象，不要输出其他文字。
{retry}
输出格式（JSON）：
{{"main_query": "改写后的主查询", "variants": ["变体1", "变体2"], "keywords": ["关键词1", "关键词2"], "domain": "法律领域", "complexity": "simple 或 complex"}}"""

# Added on a retry: what the grader said the previous attempt's articles lacked.
RETRY = """5. 上一次检索到的条文不足以回答问题，评估意见：{missing}。请换一个角度改写，补上缺少的方面（上次的主查询：{previous}）。
"""
