"""The router's instruction (Chinese): asked only when the cheap signals disagree."""

ROUTE = """用户问题：{question}

【任务】路由：判断这个问题应由哪一类处理。知识库只包含：{laws}。
- kb：问题与知识库中的法律有关；
- out_of_kb：是法律问题，但涉及知识库之外的法律或领域（例如婚姻家庭、劳动用工、交通事故、刑事犯罪、税务）；
- chitchat：问候、闲聊或与法律无关的问题。
只输出一个 JSON 对象：{{"route": "kb 或 out_of_kb 或 chitchat", "topic": "问题涉及的法律领域（几个字）"}}"""
