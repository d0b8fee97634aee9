"""The words every article of a law has, read from the knowledge base (`legal.vocabulary`), and what the answer's
checks do with them: a question that shares only a law's subject words (网络运营者, 个人信息处理者) with a clause shares
nothing about its case, whatever the law."""
from __future__ import annotations

from agentic_rag.legal.modality import clauses
from agentic_rag.legal.vocabulary import DRAFTING, MIN_ARTICLES, common_words
from agentic_rag.retrieval.types import Article
from agentic_rag.stages.answer.conclusion import condition_met, decide
from agentic_rag.stages.answer.deciding import conditions

# A law none of the eval sets has (网络安全法-like duties of 网络运营者): its subject words are its own.
CYBER = [f"网络运营者应当{duty}。" for duty in (
    "制定内部安全管理制度和操作规程", "采取防范计算机病毒的技术措施", "监测、记录网络运行状态", "采取数据分类措施",
    "按照规定留存网络日志不少于六个月", "制定网络安全事件应急预案", "为公安机关提供技术支持和协助", "要求用户提供真实身份信息",
    "建立网络信息安全投诉、举报制度", "对其收集的用户信息严格保密", "公开收集、使用规则", "明示收集、使用信息的目的、方式和范围",
    "加强对其用户发布的信息的管理", "及时处置系统漏洞", "确定网络安全负责人", "对重要系统和数据库进行容灾备份",
    "定期组织开展网络安全应急演练", "采取技术措施防止信息泄露", "及时告知用户并向有关主管部门报告", "配合网信部门的监督检查",
    "设置便捷的投诉渠道", "在规定期限内处理投诉")]
RULE = "网络运营者为用户办理网络接入、域名注册服务，应当要求用户提供真实身份信息。"
CONDITION = "网络运营者符合国家规定条件的，可以开展网络安全认证、检测、风险评估等活动。"


def test_a_laws_common_words_are_its_subject_and_drafting_words_not_the_words_of_a_case():
    words = common_words(CYBER)
    assert {"网络", "运营", "营者"} <= words and DRAFTING <= words
    assert not {"日志", "投诉", "漏洞"} & words
    assert common_words(CYBER[:MIN_ARTICLES - 1]) == DRAFTING  # too few articles to tell


def test_the_knowledge_base_gives_each_law_its_own_words(fake_retriever):
    law = fake_retriever.laws[0]
    words = fake_retriever.common_words(law)
    assert {"个人", "信息", "处理", "理者"} <= words and not {"同意", "删除", "敏感"} & words
    assert fake_retriever.common_words(law) is words  # computed once per law


def test_a_condition_sharing_only_the_laws_subject_words_is_not_listed():
    article = Article(id="c", title="第一条", law="网络安全法", article=1, article_cn="第一条", text=RULE + CONDITION)
    deciding = next(c for c in clauses(article.text) if "真实身份" in c.text)
    question = "网络运营者给我办宽带时，可以要我提供身份证吗？"
    assert conditions(article, deciding, question)  # drafting words alone: 网络运营者 looks like a shared topic
    assert not conditions(article, deciding, question, common_words(CYBER))
    asked = "网络运营者要做风险评估，得符合什么条件？"
    assert conditions(article, deciding, asked, common_words(CYBER))  # 风险评估 is the question's own


def test_a_conditional_duty_is_not_met_by_the_subject_words_alone():
    duty = next(iter(clauses("网络运营者收集、使用个人信息的，应当明示收集、使用信息的目的、方式和范围。")))
    question = "网络运营者必须告诉网络运营者的用户什么吗？"
    assert condition_met(question, duty)
    assert not condition_met(question, duty, common_words(CYBER))
    assert decide(question, duty, common_words(CYBER)).label == "视情况"


def test_the_answer_stage_reads_the_words_of_the_deciding_articles_law_from_its_knowledge_base(fake_retriever):
    from agentic_rag.config import Settings
    from agentic_rag.stages.answer.agent import AnswerStage

    law = fake_retriever.laws[0]
    stage = AnswerStage(name="a", settings=Settings(_env_file=None), retriever_factory=lambda: fake_retriever)
    assert stage._common_words(law) == fake_retriever.common_words(law) != DRAFTING
    assert AnswerStage(name="b", settings=Settings(_env_file=None))._common_words(law) == DRAFTING
