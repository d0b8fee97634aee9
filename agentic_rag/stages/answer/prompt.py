"""The answer's instructions and its fixed replies (Chinese).

The LLM prompts start exactly like the grader's (question, then the articles block) so an in-process model reuses
the grader's evaluated prefix; web results come after the articles, inside their fence; the task comes last.
"""

# The answer opens with HEADING and the given articles' own text (written in code: verbatim, verified, shown at once);
# the model writes the rest, citing the articles by number.
HEADING = "# 法律咨询意见\n\n## 相关法条\n\n"
STRUCTURE = """上面的条文原文已在回答开头列给用户，不要重复抄写。请直接从"## 问题分析"开始，用中文按以下结构作答，简明准确，总共不超过 300 字：
## 问题分析
## 法律解释
（写明所依据的条文，如"根据第X条"）
## 建议措施
**适用条件**：
**注意事项**："""

# LOCAL and WEB follow the shared prefix (stages/evidence.py: the question, then the articles).
LOCAL = """【任务】法律咨询：只根据上面检索到的{law}条文回答用户的问题。{sub_questions}
要求：每一处法律判断都写明所依据的条文（"第X条"）；只能引用上面列出的条文，不要编造条文。
""" + STRUCTURE

WEB = """{web}

【任务】法律咨询：本地检索到的法条不足以完全回答问题，上面的网络资料只作补充。{rule}
要求：先依据本地法条（写明"第X条"；只能引用上面列出的条文），再用网络资料补充并注明来源编号和链接（如 [W1]）；
权威性：法条 > 司法解释 > 案例 > 观点；网络资料中提到的其他法律条文须注明"未核实"。{sub_questions}
""" + STRUCTURE

DISCLAIMER = "\n\n**免责声明**：{text}"

SUB_QUESTIONS = "\n问题包含以下几个方面，请逐一回答，每个方面写明各自依据的条文：\n{items}"

DISCLAIMER_LOCAL = "本咨询基于现有法律条文，具体适用需结合实际情况，建议咨询专业律师。"
DISCLAIMER_WEB = "本咨询基于现有法律条文和公开信息，具体适用需结合实际情况，建议咨询专业律师。"

NOT_FOUND = """很抱歉，根据您的问题描述，我无法在{law}中找到足够准确的法律条文来提供专业建议。{web_note}

建议您：
1. 重新详细描述您的具体情况（涉及的主体、行为、时间和您想解决的问题）；
2. 咨询专业律师获得准确的法律意见；
3. 联系当地法律援助机构或12348公共法律服务热线。

如需进一步帮助，请提供更多具体信息。"""
NEAREST = "\n\n检索中最接近的条文（仅供参考，未必适用）：{titles}"
WEB_UNAVAILABLE = "（本次未能进行网络检索补充：{reason}）"

DEGRADED = "（{cause}，未能生成完整的咨询意见。以下是为您的问题检索到的条文原文，供参考。）"
ERROR = "很抱歉，本次未能回答：{cause}。{found}请稍后再试。"
FOUND_NOTHING = "知识库检索未完成，尚未找到可提供的条文。"

CHITCHAT = ("您好！我是法律咨询助手，可以依据{law}回答相关的法律问题，也可以查询具体条文（如「第十条是什么内容」）。\n"
            "请直接描述您遇到的情况（涉及的主体、行为和您想解决的问题），我会检索相关条文并注明出处。")
OUT_OF_KB = ("您的问题似乎涉及{topic}，不在本知识库（{laws}）的范围内，我无法依据知识库中的条文给出可靠的回答。"
             "{web_note}\n\n建议您咨询专业律师，或拨打12348公共法律服务热线。")
