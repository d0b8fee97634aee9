"""The contextualiser's instruction (Chinese): one follow-up → one standalone question, in one line.

Small on purpose (the embedded 1.5B model runs it): three short examples, the fenced history (earlier standalone
questions and the titles of the articles the last answer cited — never an answer's text or web text), the
follow-up, the task last. The examples are made up for this prompt (not from any eval set).
"""

CONDENSE = """【示例】
上一问题：快递公司把我的收件地址给了广告公司，这样合法吗？
上一回答引用的条文：个人信息保护法第二十三条
追问：那我能要求他们删掉吗？
改写：快递公司把我的收件地址给了广告公司，我能要求快递公司删掉我的地址信息吗？

上一问题：小区物业在门禁装了人脸识别，不刷脸就不让进，这合法吗？
追问：违反了会被罚多少钱？
改写：小区物业强制业主刷脸才能进门，违反个人信息保护法会被罚多少钱？

上一问题：公司让员工加班却不给加班费，合法吗？
追问：那要是一个月加班超过36小时呢？
改写：公司让员工一个月加班超过36小时，还不给加班费，合法吗？

【对话上文】
{history}
追问：{follow_up}

【任务】改写追问：结合对话上文，把追问改写成一个不看上文也能单独理解的完整问题：补上追问省略的对象和事情，\
保留追问里的数字和新出现的词，不要回答问题，不要写条文编号。只输出一行改写后的问题。
改写："""

# When the model's line fails the check (or the call fails): the pieces, labelled, for retrieval and the answer.
FALLBACK = "上一问题：{previous}；追问：{follow_up}"
MERGED = "原问题：{previous}；补充：{follow_up}"
FOLLOW_UP_MARK = "；追问："  # where a rule form's follow-up starts
MORE = FOLLOW_UP_MARK + "{follow_up}"  # a rule form's root followed by the next follow-up
RULE_PREFIXES = ("上一问题：", "原问题：")

UNDERSTOOD = "结合上文理解为：{question}"
BEYOND = "（「{covered}」上文已涉及，按其余内容检索）"
SEARCH_REPLY = "（按您补充的情况检索）"
ALONE = "结合上文未找到足够依据，改按追问本身检索：{question}"
UNDERSTOOD_FALLBACK = "结合上文理解为：{question}（改写未通过检查：{problem}，按规则拼接）"
NEW_TOPIC = "新的问题：不沿用上文（{reason}）"
CONFIRMED = "按您选择的{option}回答上一个问题：{question}"
