"""The answer's instructions and its fixed replies (Chinese).

The answer form (issue 18): the conclusion first, then the deciding sentence in the statute's own words, then the
conditions and exceptions the article states, then what the user can do where an article says so. Only the
conclusion's sentence is written by the model; everything else is quoted from the index by code.
"""

# ----------------------------------------------------------------------------- the answer form (written by code)
CONCLUSION = "**结论**：{label}。"
EXPLAIN = "**答复**："  # a how-to or lookup question has no 可以 / 不可以 to conclude: the explanation comes first
# Under 答复 or after 视情况 when the model's sentence was dropped or not written: the heading is already shown
# (streaming), and the quoted clause below it is the answer.
BY_QUOTE = {"说明": "法律对此的规定见下面引用的条文。", "视情况": "取决于您的情况是否符合下面引用的条文规定的条件和例外。"}
# After 视情况 where the deciding clause is silent on the consent asked about (`conclusion.CONSENT_UNANSWERED`): the
# code says so, with no model sentence.
SILENT_ON_CONSENT = "下面引用的条文规定的是另一项义务，没有规定是否需要取得同意，需要结合其他规定判断。"
# … and where it only defines a term (`conclusion.only_defines`): what it depends on is not in it.
ONLY_DEFINES = "下面引用的条文只界定了相关概念的含义，没有直接规定这样做是否可以或必须，需要结合其他规定判断。"
# After 视情况 where the rule is for children under an age the question does not give (`conclusion.AGE_UNSTATED`).
AGE_DECIDES = "取决于孩子是否{limit}：下面引用的条文只规定了{limit}的情形。"
# … and where the age the question gives is at or above it (`conclusion.AGE_OVER`): the rule's other cases still apply.
AGE_OVER = "下面引用的条文中与年龄有关的只是{limit}的情形，孩子已超过这一年龄；条文规定的其他情形仍然适用。"
ASK = "**问题{n}**：{question}\n\n"
REASON = "**依据**：{quotes}"
QUOTE = "{title}规定：“{text}”"
CONDITIONS = "**条件与例外**：{quotes}"
ACTIONS = "**您可以**：{quotes}"
LOOKUP = "**{title}**：{text}"
LOOKUP_ITEM = "**您问的第{item}项**：{clause}"
FOOTER = "\n\n> 以上依据{basis}作答，只引用了检索核对过的条文；具体适用需结合实际情况，必要时请咨询专业律师。"
FOOTER_WEB = ("\n\n> 以上先依据{basis}，再参考网络公开资料（仅供参考，未经核实）作答；具体适用需结合实际情况，"
              "必要时请咨询专业律师。")
DROPPED = "\n\n> 核对说明：模型写出的{n}句话无法由所引条文核实，已删去。"
MODEL_DOWN = "\n\n> 说明：{cause}，以上结论和依据直接取自条文，没有附上模型的说明。"

HEDGED_HEAD = "**初步判断**：视情况。检索到的条文不能确定地回答这个问题，下面是最可能适用的规定。\n\n"
HEDGED_DECIDES = "**取决于**：{what}。如能补充具体情况（涉及的主体、行为、目的和时间），可以进一步判断。"
HEDGED_DEFAULT = "您的具体情况是否属于上面条文规定的情形"

# ----------------------------------------------------------------------------- the one sentence the model writes
# Follows the shared prefix (stages/evidence.py: the question, then the articles). The 视情况 task ends where the
# sentence starts (「回答：视情况，取决于」): told to begin with 以“视情况”开头, the 1.5B often wrote that instruction
# back as its sentence. The polar task keeps 以“{label}”开头: ended in 「回答：{label}，」 it went on with 「因为…」 and
# facts the user never stated (stop 40, eval/results/sentence_read_s40.jsonl); the instruction written back is not shown.
APPLY = "说明这条规定用在用户所问的情况上的结果"
CONDITIONS_ONLY = "只写这条规定中的条件"
TASK_WORDS = (APPLY, CONDITIONS_ONLY)  # written back as the sentence, they are the task, not a claim
SENTENCE = {
    "polar": "【任务】法律咨询：结论已经确定为“{label}”，决定性的规定是：“{clause}”。请用一句话直接回答用户的问题："
             "以“{label}”开头，" + APPLY + "，不超过 60 个字。不要重复问题，"
             "不要写条文中没有的条件、数字或建议，不要写条文编号以外的法律名称。",
    "depends": "【任务】法律咨询：结论是“视情况”，决定性的规定是：“{clause}”。请用一句话告诉用户取决于什么，"
               + CONDITIONS_ONLY + "，不超过 60 个字。不要重复问题，不要写条文中没有的内容。\n回答：视情况，取决于",
    "howto": "【任务】法律咨询：请用一句话告诉用户可以怎么做，只写上面条文规定的途径或做法（依据：“{clause}”），"
             "不超过 60 个字。不要重复问题，不要写条文中没有的机构、期限或建议。",
    "info": "【任务】法律咨询：请用一句话回答用户问的内容，只根据这条规定：“{clause}”，不超过 60 个字。"
            "不要重复问题，不要写条文中没有的内容。",
}
# Asked on the same prefix where the label rules say 视情况 on a yes/no question (`polarity`): the model's 是/否 logit
# for the ask's kind; the thresholds in resources/polarity_calibration.json were chosen with these very words.
POLARITY_TAIL = {
    "permission": "【任务】只依据上面的法条判断：问题中所说的做法是否合法、被允许？只回答“是”或“否”。",
    "need": "【任务】只依据上面的法条判断：问题中所问的事项是否需要（是法律的要求）？只回答“是”或“否”。",
    "right": "【任务】只依据上面的法条判断：问题中的人是否有权这样做？只回答“是”或“否”。",
}
SENTENCES_MULTI = "【任务】法律咨询：用户的问题包含下面几问，结论已经确定。请每问写一行，每行一句话，以给定的结论开头，" \
                  "只依据给出的规定，每句不超过 60 个字；不要重复问题，不要写条文中没有的内容。\n{items}"
MULTI_ITEM = "{n}. {question}（结论：{label}；依据：“{clause}”）"

# ----------------------------------------------------------------------------- the web path (model-written, checked)
WEB = """{web}

【任务】法律咨询：本地检索到的法条不足以完全回答问题，上面的网络资料只作补充。{rule}
请用中文写 2-4 句话：第一句直接回答用户的问题；先依据本地法条（写明"第X条"；只能引用上面列出的条文），再用网络资料
补充并注明来源编号（如 [W1]）；网络资料中提到的其他法律条文须注明"未核实"。不要重复问题，不要写没有依据的建议。"""

# ----------------------------------------------------------------------------- fixed replies
NOT_FOUND = """很抱歉，根据您的问题描述，我无法在{law}中找到足够准确的法律条文来提供专业建议。{web_note}

建议您：
1. 重新详细描述您的具体情况（涉及的主体、行为、时间和您想解决的问题）；
2. 咨询专业律师获得准确的法律意见；
3. 联系当地法律援助机构或12348公共法律服务热线。

如需进一步帮助，请提供更多具体信息。"""
# The refusal lists the nearest articles, numbered: a user who sees that one of them is the case replies its number
# and the question is answered from it (conversation.refusal_pending). Then the articles are the only numbered list
# (a reply 「1」 must not look like the first piece of advice) and the advice is one sentence after them. Kept
# last: evaluations cut it off from here.
NOT_FOUND_NEAREST = "很抱歉，我无法在{law}中找到足够准确的法律条文来确定回答这个问题，不能据此给出专业意见。{web_note}"
NEAREST = ("\n\n检索中最接近的条文（仅供参考，未必适用）：\n{options}\n"
           "如果其中一条正是您问的情形，请回复它的序号（如“1”），我按该条回答；都不是的话，请补充具体情况"
           "（涉及的主体、行为、时间和您想解决的问题），也可以咨询专业律师或拨打12348公共法律服务热线。")
EXCERPT_CHARS = 40
CLAUSE_EXCERPT_CHARS = 60  # a later clause: shown without its subject, so a little longer
NO_SUCH_ARTICLE = ("{where}没有{articles}，请核对条文序号（例如「第十条是什么内容」），"
                   "或直接描述您遇到的情况，我来查找适用的条文。")
WEB_UNAVAILABLE = "（本次未能进行网络检索补充：{reason}）"

DEGRADED = "（{cause}，未能生成完整的咨询意见。以下是为您的问题检索到的条文原文，供参考。）"
DISCLAIMER = "\n\n**免责声明**：本咨询基于现有法律条文，具体适用需结合实际情况，建议咨询专业律师。"

CHITCHAT = ("您好！我是法律咨询助手，可以依据{law}回答相关的法律问题，也可以查询具体条文（如「第十条是什么内容」）。\n"
            "请直接描述您遇到的情况（涉及的主体、行为和您想解决的问题），我会检索相关条文并注明出处。")
CLARIFY = "您的问题还不够具体，我需要先了解情况，才能查到对应的法条。{ask}"
CLARIFY_OPTIONS = "\n\n可能涉及的方面（回复编号，或直接描述经过）：\n{options}"
OUT_OF_KB = ("您的问题似乎涉及{topic}，不在本知识库（{laws}）的范围内，我无法依据知识库中的条文给出可靠的回答。"
             "{web_note}\n\n建议您咨询专业律师，或拨打12348公共法律服务热线。")
