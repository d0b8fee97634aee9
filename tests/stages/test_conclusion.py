"""The conclusion's label decided in code, on the statute's own sentences: clauses as a lawyer reads them, the
question's kind, the deciding clause's modality, exceptions; and the sentence checks (numbers, polarity, wording)."""
from __future__ import annotations

import re

import pytest

from agentic_rag.legal.modality import clauses, modality
from agentic_rag.stages.answer.conclusion import ask_kind, asks_penalty, clause_modality, decide, grantee, stated_label
from agentic_rag.stages.answer.support import (
    SupportModel,
    bigram_support,
    contradicts_ask,
    judge_sentence,
    numbers_ok,
    swaps_the_actor,
)

ART_13 = ("符合下列情形之一的，个人信息处理者方可处理个人信息：（一）取得个人的同意；（二）为订立、履行个人作为一方当事人的"
          "合同所必需，或者按照依法制定的劳动规章制度和依法签订的集体合同实施人力资源管理所必需；（三）为履行法定职责或者"
          "法定义务所必需；（四）为应对突发公共卫生事件，或者紧急情况下为保护自然人的生命健康和财产安全所必需；"
          "依照本法其他有关规定，处理个人信息应当取得个人同意，但是有前款第二项至第七项规定情形的，不需取得个人同意。")
ART_10 = ("任何组织、个人不得非法收集、使用、加工、传输他人个人信息，不得非法买卖、提供或者公开他人个人信息；"
          "不得从事危害国家安全、公共利益的个人信息处理活动。")
ART_25 = "个人信息处理者不得公开其处理的个人信息，取得个人单独同意的除外。"
ART_47 = "有下列情形之一的，个人信息处理者应当主动删除个人信息；个人信息处理者未删除的，个人有权请求删除：（一）处理目的已实现。"
LABOUR_40 = ("有下列情形之一的，用人单位提前三十日以书面形式通知劳动者本人或者额外支付劳动者一个月工资后，可以解除劳动合同:"
             "（一）劳动者患病或者非因工负伤，在规定的医疗期满后不能从事原工作，也不能从事由用人单位另行安排的工作的；")
CONSUMER_25 = "经营者采用网络方式销售商品，消费者有权自收到商品之日起七日内退货，且无需说明理由，但下列商品除外:（一）消费者定作的；"


def statute(n: int, text: str, law: str = "个人信息保护法"):
    from agentic_rag.legal.numerals import article_cn
    from agentic_rag.retrieval.types import Article
    return Article(id=str(n), title=article_cn(n), law=law, article=n, article_cn=article_cn(n), text=text)


def by_text(article: str, fragment: str):
    return next(c for c in clauses(article) if fragment in c.full)


def test_clauses_read_list_items_with_their_introduction_and_keep_the_sentence_for_quoting():
    items = [c for c in clauses(ART_13) if c.item]
    assert [c.item for c in items] == ["（一）", "（二）", "（三）", "（四）"]
    assert all(c.full.startswith("符合下列情形之一的，个人信息处理者方可处理个人信息：") for c in items)
    tail = clauses(ART_10)[-1]
    assert tail.text == "不得从事危害国家安全、公共利益的个人信息处理活动。" and tail.quote == ART_10  # keeps the subject
    assert [c.text for c in clauses(ART_25)] == [ART_25]  # the exception stays with the rule it excepts


@pytest.mark.parametrize("text, expected", [
    ("不需取得个人同意", "exempt"), ("不得公开", "prohibit"), ("有权请求删除", "permit"), ("应当告知", "oblige"),
    ("个人信息是以电子方式记录的各种信息", "none"),
    # a word that only qualifies another is not the modality: a right used without reasons, a power to prohibit
    ("消费者有权自收到商品之日起七日内退货，且无需说明理由", "permit"), ("禁止非法买卖", "prohibit"),
    ("处十万元以上一百万元以下罚款，并可以决定禁止其在一定期限内担任相关企业的董事", "permit"),
    ("保证人对未经其同意转移的债务不再承担保证责任", "exempt"),
    # a negative word that only describes whom the rule is about, in a modifier 的 closes, before the rule (stop 45)
    ("不能辨认自己行为的成年人，其利害关系人可以向人民法院申请认定该成年人为无民事行为能力人", "permit"),
    ("依法不得撤销的赠与合同，赠与人不交付赠与财产的，受赠人可以请求交付", "permit"),
    ("用人单位招用劳动者，不得扣押劳动者的居民身份证和其他证件", "prohibit"),  # the rule itself, a 的 after it
    ("收受定金的一方不履行债务，致使不能实现合同目的的，应当双倍返还定金", "oblige"),
    ("有法律规定应当保密的情形的，可以不向个人告知前条第一款规定的事项", "exempt"),
    # a negative word in the first part of a condition the next segment closes (stop 46), but not a rule followed by
    # its sanction or by its exception's condition
    ("劳动合同被确认无效，劳动者已付出劳动的，用人单位应当向劳动者支付劳动报酬", "oblige"),
    ("用人单位不得安排未成年工从事有毒劳动，违反的，应当承担责任", "prohibit"),
    ("自权利受到损害之日起超过二十年的，人民法院不予保护，有特殊情况的，人民法院可以决定延长", "exempt"),
    # a liability not released, and a claim no limitation period bars
    ("当事人迟延履行后发生不可抗力的，不免除其违约责任", "oblige"), ("赔礼道歉请求权，不适用诉讼时效的规定", "permit"),
    ("不适用有关诉讼时效中止、中断和延长的规定", "exempt"),
    # a condition's 不能 before a deeming (stop 59: 「合伙开店没约定多久…能散伙吗？」 was 不可以 from this clause)
    ("合伙人对合伙期限没有约定或者约定不明确，依据本法第五百一十条的规定仍不能确定的，视为不定期合伙", "none"),
    ("当事人对保管费没有约定或者约定不明确，依据本法第五百一十条的规定仍不能确定的，视为无偿保管", "none"),
    # … or before what the case is (为新要约, 属于委托人): 「卖家必须按原价卖给我吗」 was 需要 from 第四百八十六条
    ("受要约人超过承诺期限发出承诺，或者在承诺期限内发出承诺，按照通常情形不能及时到达要约人的，为新要约", "none"),
    ("没有约定或者约定不明确，依据本法第五百一十条的规定仍不能确定的，该利益属于委托人", "none")])
def test_modality_of_a_sentence(text, expected):
    assert modality(text) == expected


def test_the_case_an_exception_names_is_no_exemption():
    assert modality("还应当向个人告知处理敏感个人信息的必要性；依照本法规定可以不向个人告知的除外") != "exempt"


@pytest.mark.parametrize("question, kind", [
    ("公司把我的手机号卖给别人合法吗？", "permission"), ("App收集孩子信息需要家长同意吗？", "need"),
    ("我能要求App删除我的信息吗？", "right"), ("信息被泄露了该怎么维权？", "howto"), ("第四十九条讲什么的", "info"),
    ("四十四条规定了个人的什么权利？", "info"), ("我只是个普通人，也能举报吗？", "right"),
    ("我注销了账号，平台是不是得把我的数据删掉？", "need"), ("那他们得把我的人脸照片销毁吗？", "need"),
    ("我们把会员数据交给外包公司，公司是不是还得管着外包方怎么用？", "need"), ("删了以后还能得到赔偿吗？", "permission"),
    # 「得…吗」 asks must; 「能要…赔吗」 with nobody but the asker before 能 asks a right (eval/conclusion_labels.jsonl)
    ("现在家属要我赔医药费，我得赔吗？", "need"), ("银行得保证我的资料准确吗？", "need"), ("这种说法站得住吗？", "permission"),
    ("椅子腿断了把我摔伤了，能要饭店赔吗？", "right"), ("我能要回这三个月的工资吗？", "right"),
    ("公司能要求我周末加班吗？", "permission"),
    # a rule-form follow-up asks what its last follow-up asks; the earlier question only gives the facts
    ("上一问题：App收集孩子信息需要家长同意吗？；追问：那我能让它删掉吗？", "right"),
    ("上一问题：App收集孩子信息需要家长同意吗？；追问：那要是孩子15岁呢？", "need"),
    ("PIPL第二十一条是关于什么的", "info"), ("现在公司裁员把我裁了，经济补偿到底怎么算？", "howto"),
    ("个人信息这块，告知和同意上具体要怎么做？", "howto"),
    # what a term means is explained, never answered 视情况 (「什么是个人信息处理者？」 was a permission ask)
    ("什么是个人信息处理者？", "info"), ("什么叫匿名化", "info"), ("自动化决策指的是什么", "info"),
    # a topic is explained (「删除权」 was answered 「可以。」); a story told without a question still asks about the conduct
    ("删除权", "info"), ("敏感个人信息 单独同意", "info"),
    ("体检中心把我的体检报告直接给了保险公司，保险公司一看我有高血压就拒保了", "permission"),
    # 「要通知我吗」 asks a duty (it was answered 「可以。」 from 第五十七条's 应当…通知); who is in charge and what a role
    # does are explained (they were answered 「视情况。」)
    ("个人信息泄露了，公司要通知我吗？", "need"), ("公司要经过我同意吗？", "need"), ("我要告诉他们吗？", "permission"),
    ("公司数据泄露后要向监管部门报告吗？", "need"),
    ("谁负责个人信息保护的监管？", "info"), ("个人信息保护负责人是干什么的？", "info"),
    ("民法典里隐私是怎么定义的？", "info"), ("向境外提供个人信息要什么条件", "info"),
    ("个人信息保护法和民法典对个人信息的定义有什么不同？", "info"),
    # a number asked for is explained (「竞业限制最长能约定几年？」 was 「不可以。」), not 「这几天能…吗」; the asker claiming
    # what is owed is a right (「我辞职能要经济补偿吗」 was a permission, answered 「不可以。」), not the other side's claim
    ("竞业限制最长能约定几年？", "info"), ("公司这几天能让我加班吗？", "permission"),
    ("公司不给我交社保，我辞职能要经济补偿吗？", "right"), ("公司能要我赔偿吗？", "permission"),
    # a duty asked with 要 + the act (「…要定期做风险评估吗」 was 「可以。」, 「我提前离职要交吗」 「不可以。」); a number asked
    # for comes before a right (「能要多少补偿？」 was 「可以。」)
    ("数据安全法规定的重要数据处理者要定期做风险评估吗？", "need"), ("电商平台要审核商家的资质吗？", "need"),
    ("公司合同里写了违约金，我提前离职要交吗？", "need"), ("我还要做什么吗？", "howto"),
    ("上一问题：我被公司辞退了；追问：能要多少补偿？", "info")])
def test_what_the_question_asks(question, kind):
    assert ask_kind(question) == kind


def test_a_prohibition_answers_a_may_question_no():
    assert decide("网站能把我的浏览记录卖给广告商吗？", by_text(ART_10, "买卖")).label == "不可以"


def test_the_exception_is_applied_only_when_the_question_is_about_it():
    rule = by_text(ART_25, "不得公开")
    assert decide("人事把体检结果贴在公告栏上了，这样做行吗？", rule).label == "不可以"
    assert decide("商场专门找我签了单独同意书，取得了我的单独同意，这样能公开吗？", rule).label == "可以"


def test_an_exception_list_inverts_the_rule_it_excepts():
    item = by_text(CONSUMER_25, "定作")
    assert decide("在网上定做了一件印着我名字的T恤，能七天无理由退吗？", item).label == "不可以"


def test_an_excepted_item_of_a_right_answers_can_i_still_no():
    # the list introduces a right (有权…退货，且无需说明理由), so its excepted item takes the right away
    item = by_text(CONSUMER_25 + "（三）在线下载或者消费者拆封的音像制品、计算机软件等数字化商品；", "拆封")
    assert decide("在网店买了一盒游戏光盘，拆了塑封玩了一下觉得没意思，还能要求七天无理由退吗？", item).label == "不可以"


def test_a_lawful_ground_other_than_consent_means_no_consent_is_needed():
    hr = by_text(ART_13, "人力资源管理")
    assert decide("公司用工牌记录考勤，需要员工另外签同意书吗？", hr).label == "不需要"
    assert decide("公司用工牌记录考勤，需要员工另外签同意书吗？", by_text(ART_13, "（一）")).label == "视情况"
    assert decide("急救人员没经我同意翻我手机找家属，这样可以吗？", by_text(ART_13, "紧急情况")).label == "可以"


def test_an_item_takes_the_rule_of_its_introduction_not_the_words_of_the_case():
    # "不能从事原工作" describes the case; "可以解除" is the rule
    assert decide("医疗期满后干不了原来的活，公司能跟我解除合同吗？", by_text(LABOUR_40, "医疗期满")).label == "可以"


def test_a_conditional_duty_is_answered_it_depends_and_a_listed_case_grants_the_right():
    conditional = clauses("处理个人信息达到国家网信部门规定数量的个人信息处理者应当指定个人信息保护负责人。")[0]
    assert decide("三十人的小公司必须指定个人信息保护负责人吗？", conditional).label == "视情况"
    # the question states the case the duty is for: the README's demo question
    minors = clauses("个人信息处理者处理不满十四周岁未成年人个人信息的，应当取得未成年人的父母或者其他监护人的同意。")[0]
    assert decide("我家孩子10岁，App收集他的信息要我同意吗？", minors).label == "需要"
    assert decide("App收集我儿子的信息需要我同意吗？他今年16岁", minors).label == "视情况"
    # a right granted where one of the listed cases applies: the matched case is the question's, so it may
    assert decide("会员卡到期不续了，我能让健身房删掉我的人脸照片吗？", by_text(ART_47, "处理目的已实现")).label == "可以"


def test_a_duty_the_question_says_was_not_done_in_the_duty_s_own_words_was_breached():
    union = clauses("用人单位单方解除劳动合同，应当事先将理由通知工会。")[0]
    assert decide("公司单方面把我辞退了，事先根本没跟工会说过理由，公司这样做合规吗？", union).label == "不可以"
    # the negation is the asker's own state, or the other side cites a legal basis: not decided from the words
    refund = clauses("经营者应当自收到退回商品之日起七日内返还消费者支付的商品价款。")[0]
    assert decide("鞋没穿过、吊牌都在，商家收到退货了，这样可以吗？", refund).label == "视情况"
    keep = clauses("个人信息处理者应当删除个人信息。")[0]
    assert decide("券商说法规规定要保存二十年所以不删除个人信息，他们能这样吗？", keep).label == "视情况"
    # a 规定 the question tells of (what a contract stipulates) is no legal basis the other side cited
    assert decide("公司的规章里规定了考勤办法，事先根本没跟工会说过理由就辞退了我，公司这样做合规吗？",
                  union).label == "不可以"
    assert decide("公司说这是法律规定的，事先没跟工会说过理由，公司这样做合规吗？", union).label == "视情况"


def test_what_the_other_side_may_not_charge_is_not_owed():
    # ans-ml-003 (stop 42's run): read as a must-ask, a prohibition used to answer it 需要, the opposite of the law
    penalty = clauses("除本法第二十二条和第二十三条规定的情形外，用人单位不得与劳动者约定由劳动者承担违约金。")[0]
    question = "入职合同里写着'若提前离职须向公司支付违约金两万元'，我想走，这个违约金我真得交吗？"
    assert ask_kind(question) == "need" and decide(question, penalty).label == "不需要"
    freight = clauses("货物在运输过程中因不可抗力灭失，未收取运费的，承运人不得请求支付运费。")[0]
    assert decide("路上碰到地震整车货全毁了，物流公司还让我把运费付了，我还得付吗？", freight).label == "不需要"
    # a loss put on a named party answers the asker's must-ask only where the question is that party's
    thief = clauses("盗窃的机动车发生交通事故造成损害的，由盗窃人承担赔偿责任。")[0]
    assert decide("小偷翻进我家被我按住时磕破了头，他要我赔医药费，我得赔吗？", thief).label == "视情况"
    # a must-ask that is not about paying keeps the prohibition's reading
    consent = clauses("任何组织、个人不得非法收集、使用他人个人信息。")[0]
    assert decide("App收集孩子的信息需要家长同意吗？", consent).label == "需要"


def test_a_power_granted_to_the_one_asked_about_answers_may_they_yes_but_not_for_conduct_told():
    union = clauses("因履行集体合同发生争议，经协商解决不成的，工会可以依法申请仲裁、提起诉讼。")[0]
    assert decide("公司不按集体合同给大家涨工资，工会能找公司讨说法吗？", union).label == "可以"
    fees = clauses("业主违反约定逾期不支付物业费的，物业服务人可以催告其在合理期限内支付。")[0]
    assert decide("物业把我家的水停了，说交了钱才恢复。物业能这样催费吗？", fees).label != "可以"  # 停水 is not 催告


def test_a_sanction_answers_may_they_fine_yes_and_is_this_lawful_no():
    fine = clauses("电子商务经营者违反本法规定，对押金退还设置不合理条件的，由有关主管部门责令限期改正，可以处五万元以上"
                   "二十万元以下的罚款。")[0]
    assert decide("客服说押金要满半年才能退，这样合规吗？", fine).label == "不可以"
    assert decide("平台一直不管，市场监管局能罚这个平台吗？", fine).label == "可以"
    assert decide("押金退得慢，我能去网上曝光吗？", fine).label == "视情况"  # neither: the sanction does not decide it


def test_conduct_against_a_right_of_the_askers_side_is_unlawful_but_not_against_the_other_sides():
    choice = clauses("消费者有权自主选择提供商品或者服务的经营者，自主决定购买或者不购买任何一种商品。")[0]
    assert decide("4S店说不在他们店买车险就不给提车，合法吗？", choice).label == "不可以"
    fees = clauses("业主违反约定逾期不支付物业费的，物业服务人可以催告其在合理期限内支付。")[0]
    assert grantee(fees.full) == "物业服务人"
    assert decide("物业天天上门催我交物业费，这样合法吗？", fees).label == "视情况"
    public = clauses("个人信息处理者可以在合理的范围内处理个人自行公开的个人信息。")[0]  # 个人信息处理者 is not the asker
    assert decide("培训机构打我公开留的电话推销，他们这样做行吗？", public).label == "视情况"


PAY = "用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。"
LATER = "紧急情况下为保护自然人的生命健康和财产安全无法及时向个人告知的，个人信息处理者应当在紧急情况消除后及时告知。"
MISSING = "自然人有下列情形之一的，利害关系人可以向人民法院申请宣告该自然人死亡：（一）下落不明满四年；"
PROVIDE = "有关主管部门依照法律、行政法规的规定要求电子商务经营者提供有关电子商务数据信息的，电子商务经营者应当提供。"
SCHOOL = "幼儿园应当承担侵权责任；但是，能够证明尽到教育、管理职责的，不承担侵权责任。"


@pytest.mark.parametrize("article, fragment, question, label", [
    # conduct that withholds what a duty of the other side requires, told in other words than the duty's (stop 46)
    (PAY, "", "公司这三个月一分钱都不发，说等回款再说，这样合法吗？", "不可以"),
    (PAY, "", "老板说手头紧，没跟我商量就只发一半，这样可以吗？", "不可以"),
    # … nothing withheld is told, or only the asker's own state
    (PAY, "", "公司每月十号把工资打到我卡上，这样合法吗？", "视情况"),
    (PAY, "", "我还没转正，公司按月发工资，这样合法吗？", "视情况"),
    # … a duty that is the relief for a case where the usual one cannot be met: what was not done may be allowed
    (LATER, "", "我晕倒了，急救人员没跟我说就翻我手机找家属电话，这样可以吗？", "视情况"),
    # … or imposed its own terms on the asker
    (PAY, "", "公司说工资只能年底一次性发，这样合法吗？", "不可以"),
    # … a legal basis claimed, or the article excepts the duty
    (PAY, "", "公司说按规定试用期不发工资，这样合法吗？", "视情况"),
    ("个人信息处理者应当向个人告知处理目的，法律、行政法规规定应当保密的除外。", "", "他们查了我的流水，一点都没告诉我，这样合法吗？",
     "视情况"),
    # a rule for a time reached does not reach a shorter time the question states (in days across units)
    (MISSING, "满四年", "我老公失联三年了，音讯全无，我能去法院申请宣告他死亡吗？", "不可以"),
    (MISSING, "满四年", "我老公失联三个月了，我能去法院申请宣告他死亡吗？", "不可以"),
    (MISSING, "满四年", "我老公失联五年了，音讯全无，我能去法院申请宣告他死亡吗？", "可以"),
    (MISSING, "满四年", "我老公失联很久了，我能去法院申请宣告他死亡吗？", "可以"),
    # 不满一年 bounds the rule's case from above: three months is inside it, not short of it (「能要双倍工资吗」 was 不可以)
    ("用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。", "",
     "上一问题：在奶茶店打工三个月了还没签合同；追问：那我能要双倍工资吗？", "可以"),
    # a duty asked whether it may be left undone, unless its sentence excepts a case
    (PROVIDE, "", "市场监管局依法来调我网店的交易数据，我能拒绝不给吗？", "不可以"),
    ("当事人迟延履行后发生不可抗力的，不免除其违约责任。", "", "卖家拖着没发货，后来仓库被水淹了，他说是天灾不用赔，他真可以不赔吗？", "不可以"),
    (SCHOOL, "", "孩子在幼儿园摔伤了，幼儿园说老师一直看着，幼儿园真的可以不赔吗？", "视情况"),
    # … but not a duty to let the asker refuse: refusing is what it gives (「我能拒绝吗」 was 「不可以。」)
    ("通过自动化决策方式向个人进行信息推送、商业营销，应当同时提供不针对其个人特征的选项，或者向个人提供便捷的拒绝方式。",
     "", "商家用我的消费记录给我推送广告，我能拒绝吗？", "可以"),
])
def test_duties_withheld_or_evaded_and_times_not_reached(article, fragment, question, label):
    assert decide(question, by_text(article, fragment)).label == label


@pytest.mark.parametrize("question, label", [
    ("借钱没写利息，能要利息吗？", "不可以"), ("借钱没写利息，我需要付利息吗？", "不需要"),  # it was 视情况
    ("借钱没写利息，能要回本金吗？", "视情况"),  # the deeming is of the interest, not of what is asked
])
def test_what_the_law_deems_absent_cannot_be_claimed(question, label):
    assert decide(question, by_text("借款合同对支付利息没有约定的，视为没有利息。", "")).label == label


INSTALMENT = ("分期付款的买受人未支付到期价款的数额达到全部价款的五分之一，经催告后在合理期限内仍未支付到期价款的，出卖人可以"
               "请求买受人支付全部价款或者解除合同。")
AGREED = "用人单位与劳动者协商一致，可以订立固定期限劳动合同。"
STACKED = "堆放物倒塌、滚落或者滑落造成他人损害，堆放人不能证明自己没有过错的，应当承担侵权责任。"
NUCLEAR = "民用核设施造成他人损害的，由营运单位承担侵权责任；但是，能够证明损害是因战争造成的，不承担责任。"
DANGER = "未经许可进入高度危险活动区域受到损害，管理人能够证明已经采取足够安全措施的，可以减轻或者不承担责任。"


@pytest.mark.parametrize("article, question, label", [
    # a permission only after a step of the one permitted, or only by agreement: the step skipped or the act imposed
    (INSTALMENT, "我有一期没按时还上，车行也没催，马上就说要解除合同把车收回，他们能这样吗？", "不可以"),
    (INSTALMENT, "我欠了好几期，车行催了两次我还是没还，现在要解除合同，他们能这样吗？", "视情况"),
    (AGREED, "公司非要我签三年的合同，我不同意，公司能硬让我签吗？", "不可以"),
    (AGREED, "公司说按规定必须签三年，这样合法吗？", "视情况"),
    # a duty that holds unless the one it binds proves something: the proof decides, not the lay story
    (STACKED, "物业堆在楼下的木板滑下来，把我的电动车砸坏了，我能让物业赔吗？", "视情况"),
    (DANGER, "孩子翻墙进了变电站被电伤，变电站说一分钱都不赔，他们能完全不赔吗？", "视情况"),
    # … but a proviso that a case may be proved is an exception, decided as one
    (NUCLEAR, "核电站漏辐射，我家鱼塘的鱼全死了，能找它赔吗？", "可以"),
])
def test_preconditions_skipped_and_duties_a_proof_can_lift(article, question, label):
    assert decide(question, clauses(article)[0]).label == label


COMPLAINT = "消费者向有关行政部门投诉的，该部门应当自收到投诉之日起七个工作日内，予以处理并告知消费者。"
PUNITIVE = "侵权人违反法律规定故意污染环境、破坏生态造成严重后果的，被侵权人有权请求相应的惩罚性赔偿。"
ARBITRATION = ("消费者和经营者发生消费者权益争议的，可以通过下列途径解决：（一）与经营者协商和解；"
               "（四）根据与经营者达成的仲裁协议提请仲裁机构仲裁；（五）向人民法院提起诉讼。")
FIRST_COMPENSATE = "经营者违反本法规定，应当承担民事赔偿责任和缴纳罚款、罚金，其财产不足以同时支付的，先承担民事赔偿责任。"
DELIVERY = ("电子商务经营者应当按照承诺或者与消费者约定的方式、时限向消费者交付商品或者服务，并承担商品运输中的风险和责任。"
            "但是，消费者另行选择快递物流服务提供者的除外。")


@pytest.mark.parametrize("article, item, question, label", [
    # a duty whose condition names the asker is still the other side's (stop 48: lab2-101)
    (COMPLAINT, 0, "上个月我去市场监管局投诉一家理发店乱收费，到现在没人处理也没人回我电话，他们这样拖着合规吗？", "不可以"),
    # a permission whose stated case the question denies (lab2-503), and one it does not deny
    (PUNITIVE, 0, "厂里管道老化意外漏了废水，鱼死了不少，厂里也承认不是故意的，我还能让他们再赔一笔惩罚性的钱吗？", "不可以"),
    (PUNITIVE, 0, "化工厂故意往河里偷排废水，鱼塘全毁了，我能要求惩罚性赔偿吗？", "可以"),
    # the asker's own way to a remedy lacks what the listed way needs (lab2-414)
    (ARBITRATION, 2, "买的空调坏了跟商家谈不拢，我们也从没签过什么仲裁协议，我能直接去申请仲裁吗？", "不可以"),
    (ARBITRATION, 2, "合同里写了有纠纷找仲裁委，我能直接去申请仲裁吗？", "可以"),
    # a duty put off in the asker's words, with a word between 能 and 不 (lab-232)
    (FIRST_COMPENSATE, 0, "老板说公司账上不够，要先交罚款，他们能先交罚款不赔我吗？", "不可以"),
])
def test_duties_of_the_other_side_denied_cases_and_ways_that_lack_a_step(article, item, question, label):
    assert decide(question, clauses(article)[item]).label == label


def test_conduct_an_item_of_a_fined_list_names_is_not_lawful():
    fined = ("电子商务平台经营者违反本法规定，有下列行为之一的，由市场监督管理部门责令限期改正，可以处二万元以上十万元以下的"
             "罚款；情节严重的，处十万元以上五十万元以下的罚款：（一）不遵守规定的；（二）擅自删除消费者的评价的；")
    deleted = next(c for c in clauses(fined) if c.item == "（二）")
    assert decide("我给吹风机打了差评，过两天发现评价被平台直接删掉了，平台这样做合规吗？", deleted).label == "不可以"
    assert decide("我给吹风机打了差评，平台会怎么处理？", deleted).label == "说明"


def test_an_agreement_the_clause_lets_the_parties_make_stands_but_not_a_one_sided_or_conditional_power():
    pledge, = clauses("出质人与质权人可以协议设立最高额质权。")
    asked = "我把金表押给朋友，约好以后我跟他借的钱只要不超过50万都用这块表担保，这样约定行吗？"
    assert decide(asked, pledge).label == "可以"
    assert decide("我把金表押给朋友，以后借的钱都用它担保，这样行吗？", pledge).label == "视情况"  # no agreement told
    oral, = clauses("非全日制用工双方当事人可以订立口头协议。")
    assert decide("奶茶店做小时工，老板只口头说好时薪，这样合法吗？", oral).label == "可以"
    # a power of one side, on a condition of its own: the agreement told does not settle it
    carrier, = clauses("托运人违反前款规定的，承运人可以拒绝运输。")
    assert decide("我跟物流公司说好了用纸箱装，他们这样拒绝合法吗？", carrier).label != "可以"


def test_a_duty_that_is_not_about_consent_does_not_say_consent_is_needed():
    officer, = clauses("处理个人信息达到国家网信部门规定数量的个人信息处理者应当指定个人信息保护负责人，负责对个人信息处理活动"
                       "以及采取的保护措施等进行监督。")
    asked = "公司处理的用户信息量达到了网信部门规定的数量，指定我当个人信息保护负责人，要公开我的联系方式。这得先经过我本人同意吗？"
    assert decide(asked, officer).label == "视情况"
    assert decide("公司处理的用户信息量达到了网信部门规定的数量，必须指定个人信息保护负责人吗？", officer).label == "需要"
    minors, = clauses("个人信息处理者处理不满十四周岁未成年人个人信息的，应当取得未成年人的父母或者其他监护人的同意。")
    assert decide("我家孩子12岁，App收集他的信息要家长同意吗？", minors).label == "需要"


def test_an_exception_written_as_its_own_sentence_stays_with_the_rule_it_excepts():
    rule, = clauses(DELIVERY)
    assert rule.text == DELIVERY and rule.quote == DELIVERY and clause_modality(rule) == "oblige"


def test_a_practice_that_skips_the_other_sides_duty_is_not_lawful_but_the_askers_own_duty_is_not_a_breach():
    separate = clauses("处理敏感个人信息应当取得个人的单独同意；")[0]
    assert decide("美颜相机把采集人脸写在用户协议里，我点了同意全部条款，这就算它拿到授权了吗？", separate).label == "不可以"
    assert decide("美颜相机采集人脸前弹窗单独问了我，这样可以吗？", separate).label == "视情况"
    minors = clauses("个人信息处理者处理不满十四周岁未成年人个人信息的，应当取得未成年人的父母或者其他监护人的同意。")[0]
    assert decide("我儿子11岁，自己在游戏App里点了同意隐私政策，客服说这就算授权了，对吗？", minors).label == "不可以"
    assert decide("我儿子16岁，自己在游戏App里点了同意隐私政策，这样可以吗？", minors).label == "视情况"
    own = clauses("消费者退货的商品应当完好。")[0]
    assert decide("网上买的鞋没穿过、吊牌都在，能直接退吗？", own).label != "不可以"


def test_how_to_and_lookup_questions_are_answered_with_an_explanation():
    assert decide("信息被泄露了我可以去哪投诉？", None).label == "说明"
    assert decide("网站能卖我的信息吗？", None).label == "视情况"  # no clause found: never a guess


def test_the_stated_label_of_a_sentence():
    assert stated_label("不可以，网站不能出售。") == "不可以"
    assert stated_label("网站在取得同意后可以提供。") == "可以"
    assert stated_label("视情况，取决于是否必需。") == "视情况"
    assert stated_label("根据第十条。") is None


def test_numbers_must_come_from_the_articles():
    article = "增加赔偿的金额为消费者购买商品的价款的三倍；增加赔偿的金额不足五百元的，为五百元。"
    assert numbers_ok("可以要求三倍赔偿，不足500元按500元算。", article)
    assert not numbers_ok("可以要求十倍赔偿。", article) and not numbers_ok("七日内可以退货。", article)


def test_a_sentence_is_kept_only_when_supported_and_consistent_with_the_label():
    model = SupportModel(intercept=-4.0, lexical=8.0, llm=1.0, threshold=0.5)
    sources = ART_10
    assert judge_sentence("不可以，任何组织、个人不得非法买卖他人个人信息。", sources, "不可以", model=model).kept
    assert judge_sentence("可以，网站可以出售浏览记录。", sources, "不可以", model=model).why == "与结论相反"
    assert not judge_sentence("建议您立即报警并保留聊天截图作为证据。", sources, None, model=model).kept
    # the question said back: every word is in the sources (the question is one), and it answers nothing
    assert judge_sentence("网站能把我的个人信息卖给别人吗？", sources + "网站能把我的个人信息卖给别人吗？", None,
                          model=model).why == "是问句，不是回答"
    # the model's own 是/否 logit can veto a sentence whose words are all the article's
    assert not judge_sentence("不可以，任何组织、个人不得非法买卖他人个人信息。", sources, "不可以", d=-12.0,
                              model=model).kept


def test_a_reason_that_requires_the_asked_act_contradicts_a_no():
    # ans-ml-003: the model's reason said the contract's penalty is the law, under the right 不可以 (劳动合同法第二十五条)
    question = "入职合同里写着'若提前离职须向公司支付违约金两万元'，我想走，这个违约金我真得交吗？"
    assert contradicts_ask("因为提前离职须向公司支付违约金两万元，这是法律规定的。", question, "不可以")
    assert contradicts_ask("我不能辞职并要求经济补偿。", "公司连续三个月没给我交社保，我能辞职并要求经济补偿吗？", "需要")
    # a duty of the other side that backs the no is about another act; a caveat is not the claim
    assert not contradicts_ask("向境外提供个人信息应当取得个人的单独同意。", "公司能不告诉我就把我的数据传到境外吗？",
                               "不可以")
    assert not contradicts_ask("但定作的商品不能无理由退货。", "网上买的衣服七天内能无理由退货吗？", "可以")
    assert not contradicts_ask("用人单位不得与劳动者约定由劳动者承担违约金。", question, "不可以")  # agrees
    assert not contradicts_ask("提前离职须向公司支付违约金。", question, "视情况")  # no polar conclusion to contradict


PIPL_70 = ("个人信息处理者违反本法规定处理个人信息，侵害众多个人的权益的，人民检察院、法律规定的消费者组织和由国家网信部门"
           "确定的组织可以依法向人民法院提起诉讼。")
PIPL_65 = "任何组织、个人有权对违法个人信息处理活动向履行个人信息保护职责的部门进行投诉、举报。"


def test_a_sentence_that_makes_the_party_the_article_empowers_the_one_the_user_acts_against_is_dropped():
    # ans-ml-047: every word is 第七十条's, so the wording passes; but the procurators sue, they are not sued
    sources = PIPL_70 + PIPL_65
    swapped = "可以向人民检察院、法律规定的消费者组织或由国家网信部门确定的组织提起诉讼。"
    assert swaps_the_actor(swapped, sources)
    assert judge_sentence(swapped, sources, "说明").why == "主体与条文不符"
    # the article's own addressees stay: the court the action goes to, the department a complaint goes to
    assert not swaps_the_actor("可以向人民法院提起诉讼。", sources)
    assert judge_sentence("用户可以向履行个人信息保护职责的部门进行投诉、举报。", sources, "说明").kept
    # a party the articles address is no swap even where they also let it act (消费者权益保护法第四十五条)
    ad = "消费者因经营者利用虚假广告提供商品，其合法权益受到损害的，可以向经营者要求赔偿。经营者可以要求广告经营者赔偿。"
    assert not swaps_the_actor("可以向经营者要求赔偿。", ad)


def test_without_a_logit_the_weights_of_the_wording_alone_decide_not_the_logit_weights_with_a_zero():
    # fitted with the logit, a half-supported sentence needs it; fitted without, the wording is enough
    model = SupportModel(intercept=-6.0, lexical=6.0, llm=2.0, threshold=0.5, code_intercept=-2.0, code_lexical=5.0)
    half = "任何组织、个人不得非法买卖他人个人信息，也不得拿去推送广告。"
    lexical = bigram_support(half, re.sub(r"[^\u4e00-\u9fff0-9]", "", ART_10))
    assert 0.4 < lexical < 0.9  # -6 + 6·lexical < 0 < -2 + 5·lexical
    assert judge_sentence(half, ART_10, "不可以", model=model).kept  # a web answer, an API model without logprobs
    assert not judge_sentence(half, ART_10, "不可以", d=0.0, model=model).kept
    assert judge_sentence(half, ART_10, "不可以", d=3.0, model=model).kept


def test_a_remedy_is_quoted_with_its_case_never_as_a_bare_list_introduction():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import remedies
    art = Article(id="pipl#47", title="第四十七条", law="pipl", article=47, article_cn="第四十七条", text=ART_47)
    quotes = [c.quote for _, c in remedies([art], set())]
    assert quotes and not any(q.rstrip().endswith("：") for q in quotes) and any("处理目的已实现" in q for q in quotes)


def test_the_deciding_clause_is_the_one_the_embedder_puts_nearest_and_clause_vectors_are_embedded_once():
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import embedder_similarity, rank_clauses

    class Axes:  # a clause about 删除 points one way, any other clause the other; the question points at 删除
        encoded: list[str] = []

        def encode_documents(self, texts):
            self.encoded.extend(texts)
            return np.array([[1.0, 0.0] if "删除" in t else [0.0, 1.0] for t in texts])

        def encode_queries(self, texts):
            return np.array([[0.9, 0.1]])

    embedder, cache = Axes(), {}
    arts = [Article(id="pipl#10", title="第十条", law="pipl", article=10, article_cn="第十条", text=ART_10),
            Article(id="pipl#47", title="第四十七条", law="pipl", article=47, article_cn="第四十七条", text=ART_47)]
    embed = embedder_similarity(embedder, cache)
    question = "那我能让它把资料弄掉吗？"  # no word of it is in either article
    assert rank_clauses(question, arts, None)[0].article.article == 10  # by words: a tie, the first article
    assert rank_clauses(question, arts, embed)[0].article.article == 47
    n = len(embedder.encoded)
    rank_clauses("还能让它清掉吗？", arts, embed)
    assert len(embedder.encoded) == n and set(cache) == set(embedder.encoded)  # cached, not embedded again


def test_a_polar_ask_is_decided_by_a_clause_that_regulates_when_it_is_nearly_as_near():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import DEONTIC_LIFT, rank_clauses

    art_41 = ("中华人民共和国主管机关根据有关法律和中华人民共和国缔结或者参加的国际条约、协定，处理外国司法或者执法机构"
              "关于提供存储于境内个人信息的请求。非经中华人民共和国主管机关批准，个人信息处理者不得向外国司法或者执法"
              "机构提供存储于中华人民共和国境内的个人信息。")
    art = Article(id="pipl#41", title="第四十一条", law="pipl", article=41, article_cn="第四十一条", text=art_41)

    def embed(question, texts):  # the procedure sentence is a little nearer than the rule, as fresh-pipl-012 found
        return [0.50 if "请求" in t else 0.50 - DEONTIC_LIFT / 2 for t in texts]

    assert "不得" in rank_clauses("主管机关已经批准了，我们现在可以提供吗？", [art], embed)[0].clause.text
    assert "请求" in rank_clauses("第四十一条讲的是什么？", [art], embed)[0].clause.text  # a lookup: the nearest


def test_a_bare_list_introduction_is_not_listed_as_a_condition_but_its_items_are():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import conditions

    article = Article(id="13", title="第十三条", law="个人信息保护法", article=13, article_cn="第十三条", text=ART_13)
    deciding = by_text(ART_13, "依照本法其他有关规定")
    listed = [c.quote for c in conditions(article, deciding, "公司处理我的信息需要我同意吗？")]
    assert listed and not any(q.rstrip().endswith("：") for q in listed)
    assert any("取得个人的同意" in q for q in listed)


def test_a_clause_that_defers_to_other_laws_loses_a_near_tie_to_the_articles_own_rule():
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import rank_clauses

    art_29 = "处理敏感个人信息应当取得个人的单独同意；法律、行政法规规定处理敏感个人信息应当取得书面同意的，从其规定。"
    article = Article(id="29", title="第二十九条", law="pipl", article=29, article_cn="第二十九条", text=art_29)
    question = "美颜相机把同意采集人脸写在用户协议里，我点了同意全部条款，这就算拿到授权了吗？"

    def embed(q, texts):  # the referral shares more of the question's words: a little nearer
        return np.array([0.35 if "从其规定" in t else 0.33 for t in texts])

    best = rank_clauses(question, [article], embed)[0]
    assert "单独同意" in best.clause.text and "从其规定" not in best.clause.text
    assert decide(question, best.clause).label == "不可以"  # consent folded into the agreement breaches 单独同意


def test_a_catch_all_item_loses_a_near_tie_to_an_item_with_content():
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import rank_clauses

    art_47 = ("有下列情形之一的，个人信息处理者应当主动删除个人信息；个人信息处理者未删除的，个人有权请求删除：（一）处理目的已"
              "实现、无法实现或者为实现处理目的不再必要；（二）个人撤回同意；（三）法律、行政法规规定的其他情形。")
    article = Article(id="47", title="第四十七条", law="pipl", article=47, article_cn="第四十七条", text=art_47)

    def embed(q, texts):  # 「删除权」 is nearest the item that adds the fewest words to the list's introduction
        return np.array([0.36 if "其他情形" in t else 0.34 for t in texts])

    best = rank_clauses("删除权", [article], embed)[0]
    assert "其他情形" not in best.clause.text  # 「（五）法律、行政法规规定的其他情形」 was quoted as the answer to 「删除权」


def test_a_list_introduction_whose_items_come_after_another_sentence_is_not_a_condition():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import conditions

    text = ("有下列情形之一的，个人信息处理者应当主动删除个人信息；个人信息处理者未删除的，个人有权请求删除："
            "（一）处理目的已实现、无法实现或者为实现处理目的不再必要；（二）个人信息处理者停止提供产品或者服务，或者保存"
            "期限已届满；（三）个人撤回同意；（四）个人信息处理者违反法律、行政法规或者违反约定处理个人信息；（五）法律、"
            "行政法规规定的其他情形。法律、行政法规规定的保存期限未届满，或者删除个人信息从技术上难以实现的，个人信息处理者"
            "应当停止除存储和采取必要的安全保护措施之外的处理。")  # 第四十七条: its first sentence is too long to quote whole
    article = Article(id="47", title="第四十七条", law="pipl", article=47, article_cn="第四十七条", text=text)
    deciding = by_text(text, "处理目的已实现")
    listed = [c.quote for c in conditions(article, deciding, "我注销了账号，平台得删掉我的信息吗？")]
    assert not any(q.startswith("有下列情形之一的") for q in listed)
    assert any("保存期限未届满" in q for q in listed)



def test_the_other_items_of_a_list_of_alternatives_are_not_conditions_of_the_deciding_item():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import conditions

    # ans-pipl-032: a news report (an item of 第十三条) was answered with consent (一) and contract (二) listed under
    # 条件与例外 — they are other lawful grounds, not conditions of this one.
    article = Article(id="13", title="第十三条", law="个人信息保护法", article=13, article_cn="第十三条", text=ART_13)
    listed = [c.quote for c in conditions(article, by_text(ART_13, "紧急情况下"), "新闻报道能用我的照片吗？")]
    assert not any("取得个人的同意；" in q or "订立、履行" in q for q in listed)
    assert any("不需取得个人同意" in q for q in listed)  # the article's own exception for items (二)-(七) stays
    labour = Article(id="40", title="第四十条", law="劳动合同法", article=40, article_cn="第四十条", text=LABOUR_40)
    assert not [c for c in conditions(labour, by_text(LABOUR_40, "（一）"), "公司能因为我病了辞退我吗？") if c.item]


def test_a_clause_naming_the_condition_of_its_own_rule_is_listed_only_when_it_is_about_the_question():
    from agentic_rag.stages.answer.deciding import conditions

    # ans-pipl-017: copying one's running data was answered with 第四十五条's portability sentence under 条件与例外
    # (「…符合国家网信部门规定条件的，…应当提供转移的途径」): the condition of another right, not of this one.
    art_45 = ("个人有权向个人信息处理者查阅、复制其个人信息；有本法第十八条第一款、第三十五条规定情形的除外。个人请求查阅、"
              "复制其个人信息的，个人信息处理者应当及时提供。个人请求将个人信息转移至其指定的个人信息处理者，符合国家网信"
              "部门规定条件的，个人信息处理者应当提供转移的途径。")
    article = statute(45, art_45)
    deciding = by_text(art_45, "应当及时提供")
    copy = conditions(article, deciding, "我在跑步App上记了三年运动数据，想整份复制下来，能要求平台给我一份吗？")
    assert [c.quote for c in copy] == ["个人有权向个人信息处理者查阅、复制其个人信息；有本法第十八条第一款、第三十五条规定情形的除外。"]
    move = conditions(article, deciding, "我想把数据转移到另一个跑步App，平台必须配合吗？")
    assert any("转移的途径" in c.quote for c in move)  # asked about: listed


@pytest.mark.parametrize("question, penalty", [
    ("这种会被罚吗？", True), ("要是它一直不删，会有什么后果？", True), ("违反了要承担什么法律责任？", True),
    ("要是公司硬把我辞了，得赔多少？", False), ("朋友借我的车撞了人，我作为车主要担责吗？", False),
    ("惩罚性赔偿 三倍 欺诈", False), ("违反了会怎么样？", True), ("公司违反了怎么办？", False),
    ("上一问题：App违法收集信息会被罚吗？；追问：那我能让它删掉吗？", False)])  # the follow-up asks, not the root
def test_a_question_about_the_sanction(question, penalty):
    from agentic_rag.stages.answer.conclusion import asks_penalty
    assert asks_penalty(question) is penalty


def test_an_excepted_item_decides_only_when_the_question_is_its_case():
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import rank_clauses

    # 「特价商品不退，合法吗？」 was concluded from item （一） 消费者定作的, near only through the rule it carries
    art_25 = ("经营者采用网络等方式销售商品，消费者有权自收到商品之日起七日内退货，且无需说明理由，但下列商品除外:"
              "（一）消费者定作的；（二）鲜活易腐的。")
    article = Article(id="25", title="第二十五条", law="消法", article=25, article_cn="第二十五条", text=art_25)

    def embed_with(item_lift):
        return lambda q, texts: np.array([0.5 + (item_lift if "定作" in t else 0.0) for t in texts])

    near_by_rule = rank_clauses("网购的衣服商家说特价商品不退，合法吗？", [article], embed_with(0.01))[0].clause
    assert not near_by_rule.item and near_by_rule.quote.endswith("（二）鲜活易腐的。")  # the rule, quoted with its list
    its_case = rank_clauses("定做的T恤能七天无理由退吗？", [article], embed_with(0.03))[0].clause
    assert its_case.item == "（一）" and decide("定做的T恤能七天无理由退吗？", its_case).label == "不可以"


ART_23 = ("个人信息处理者向其他个人信息处理者提供其处理的个人信息的，应当向个人告知接收方的名称或者姓名、联系方式、处理目的、"
          "处理方式和个人信息的种类，并取得个人的单独同意。")
MINORS = "个人信息处理者处理不满十四周岁未成年人个人信息的，应当取得未成年人的父母或者其他监护人的同意。"


@pytest.mark.parametrize("question, article", [
    ("网店没问过我，就把我的手机号给了合作商家推销，这样可以吗？", ART_23),
    ("这家App事先根本没告诉用户，就把数据同步到国外总部的服务器，合规吗？",
     "个人信息处理者向中华人民共和国境外提供个人信息的，应当向个人告知境外接收方的名称或者姓名、联系方式，并取得个人的单独同意。"),
    ("搜索结果前几条是商家花钱买的排名，页面上一个广告字都没标，这样行吗？", "对于竞价排名的商品或者服务，应当显著标明“广告”。")])
def test_a_question_that_says_the_required_step_was_skipped_in_lay_words_is_a_breach(question, article):
    assert decide(question, clauses(article)[0]).label == "不可以"


def test_a_skipped_consent_is_no_breach_of_a_duty_for_a_younger_age_than_the_question_states():
    assert decide("App没问过我就收集我17岁儿子的信息，可以吗？", clauses(MINORS)[0]).label == "视情况"
    assert decide("App没问过我就收集我8岁儿子的信息，可以吗？", clauses(MINORS)[0]).label == "不可以"


@pytest.mark.parametrize("question, label", [
    # the follow-up's age is the case asked about, in Chinese numerals too (a held-out conversation answered 需要)
    ("上一问题：孩子刚上初一，才十二岁，学校刷脸吃饭要不要家长同意？；追问：初三那些已经满十四岁的孩子呢？", "视情况"),
    ("上一问题：孩子才十二岁，学校刷脸吃饭要不要家长同意？；追问：那要是初一的呢？", "需要"),
    ("学校收集未满十四岁孩子的人脸要不要家长同意？", "需要"),  # a limit the question quotes is not an age it states
    ("学校收集十四岁以下孩子的人脸要不要家长同意？", "需要")])
def test_the_age_a_question_states_is_read_where_it_asks(question, label):
    assert decide(question, clauses(MINORS)[0]).label == label


@pytest.mark.parametrize("question, kind", [
    ("租房时没说好租多久，我现在想退租，可以随时走吗？", "permission"),  # 多久 is in the facts, not the ask
    ("公司天天逼我们加班，这合法吗？加班费不给的话我能怎么办？", "permission")])  # the label answers the first ask
def test_the_ask_is_read_from_the_clause_that_asks(question, kind):
    assert ask_kind(question) == kind


def test_a_plain_permission_answers_yes_unless_it_is_left_to_a_standard_or_only_declares_a_right():
    trial = clauses("劳动者在试用期内提前三日通知用人单位，可以解除劳动合同。")[0]
    assert decide("还在试用期，提前三天跟公司说了，就可以走人吗？", trial).label == "可以"
    public = clauses("个人信息处理者可以在合理的范围内处理个人自行公开或者其他已经合法公开的个人信息；个人明确拒绝的除外。")[0]
    assert decide("有公司抓取网上公开的简历卖给猎头，这合法吗？", public).label == "视情况"
    assert decide("邻居的摄像头正对着我家门口，这违法吗？", clauses("自然人享有隐私权。")[0]).label == "视情况"
    refund = clauses("七日后符合法定解除合同条件的，消费者可以及时退货。")[0]
    assert decide("手机用了两周就坏了，我能要求退货吗？", refund).label == "视情况"


def test_a_duty_stated_before_a_right_answers_must_they_yes():
    assert decide("注销账号以后，平台得把我的数据删掉吗？", by_text(ART_47, "处理目的已实现")).label == "需要"


def test_a_plain_permission_decides_only_the_askers_own_act():
    withdraw = clauses("基于个人同意处理个人信息的，个人有权撤回其同意。")[0]
    assert decide("我之前同意了接收营销推送，现在可以撤回吗？", withdraw).label == "可以"
    # the shop's practice against the asker's own right is asked about (stop 42: such conduct is answered no, as a
    # lawyer does for lay questions that tell of it, eval/conclusion_labels.jsonl); a named act of the shop is not
    assert decide("我想撤回同意，店家却要我本人带身份证去门店填表，这样合规吗？", withdraw).label == "不可以"
    assert decide("我撤回同意后，店家能继续给我发推送吗？", withdraw).label == "视情况"
    inspect = clauses("履行个人信息保护职责的部门可以采取下列措施：（一）实施现场检查；")[-1]
    assert decide("网信部门来现场检查，我们能拒绝检查吗？", inspect).label == "视情况"  # the power is the other side's


def test_a_skipped_step_is_no_breach_where_the_article_excepts_the_duty():
    state = clauses("国家机关为履行法定职责处理个人信息，应当依照本法规定履行告知义务；告知将妨碍国家机关履行法定职责的除外。")[0]
    assert decide("警察调查时查了我的银行流水，事先一点都没告诉我，这样合法吗？", state).label == "视情况"


def test_the_very_act_a_clause_permits_to_the_one_named_is_answered_yes():
    customs = clauses("跨境电子商务经营者可以凭电子单证向国家进出口管理部门办理有关手续。")[0]
    assert decide("我做跨境电商，办海关手续能用电子单证吗？", customs).label == "可以"
    # another body than the one the power is granted to: the words of the act alone do not decide
    suit = clauses("对侵害众多消费者合法权益的行为，中国消费者协会以及在省、自治区、直辖市设立的消费者协会，"
                   "可以向人民法院提起诉讼。")[0]
    assert decide("我们县消协能直接向人民法院提起诉讼吗？", suit).label == "视情况"
    # a permission on a condition the question does not show was met
    instalments = clauses("分期付款的买受人未支付到期价款的数额达到全部价款的五分之一，经催告后在合理期限内仍未支付"
                          "到期价款的，出卖人可以请求买受人支付全部价款或者解除合同。")[0]
    assert decide("我分期买车，有一期没按时付，车行马上就要解除合同，他们能解除合同吗？", instalments).label != "可以"


def test_conduct_a_clause_holds_liable_is_unlawful():
    liable = clauses("有关部门的工作人员泄露、出售或者非法向他人提供在履行职责中所知悉的个人信息的，依法追究法律责任。")[0]
    assert decide("检查人员把查到的个人信息出售给别人，他这么做合法吗？", liable).label == "不可以"
    assert decide("检查人员查到的个人信息，我能要回来吗？", liable).label != "不可以"  # not a conduct ask


def test_a_proviso_is_not_the_rule_unless_the_question_is_its_case():
    nuclear = clauses("民用核设施发生核事故造成他人损害的，民用核设施的营运单位应当承担侵权责任；但是，能够证明损害是因"
                      "战争、武装冲突、暴乱等情形或者受害人故意造成的，不承担责任。")[0]
    assert decide("核电站出事故漏辐射，我家鱼塘的鱼全死了，能找它赔吗？", nuclear).label == "可以"
    assert decide("核电站说损害是因为战争、武装冲突造成的，我还能找它赔吗？", nuclear).label == "不可以"


GROUNDS = ("有下列情形之一的，用人单位提前三十日以书面形式通知劳动者本人后，可以解除劳动合同：（一）劳动者不能胜任工作，"
           "经过培训或者调整工作岗位，仍不能胜任工作的；")


def test_a_ground_whose_step_was_skipped_does_not_permit_the_conduct():
    item = clauses(GROUNDS)[1]
    assert item.item == "（一）"
    assert decide("公司说我业绩不行，没培训也没调岗就书面通知辞退我，这样合法吗？", item).label == "不可以"
    # the item's own negation (不能胜任) is the case it is for, not a step skipped
    assert decide("主管说我不能胜任，提前一个月书面通知我走人，这合法吗？", item).label != "不可以"


def test_a_proviso_that_names_its_cases_by_number_keeps_the_whole_sentence_s_modality():
    # its case (前款第二项至第七项) cannot be matched in words: read as before, not as the bare duty (ans-pipl-030 turned
    # 需要, the opposite of the law, with the proviso cut off)
    consent = clauses("依照本法其他有关规定，处理个人信息应当取得个人同意，但是有前款第二项至第七项规定情形的，"
                      "不需取得个人同意。")[0]
    assert clause_modality(consent) == "exempt"
    assert decide("平台把我的收货地址交给了快递公司，这需要先征得我同意吗？", consent).label == "不需要"


LABOUR_68 = ("非全日制用工，是指以小时计酬为主，劳动者在同一用人单位一般平均每日工作时间不超过四小时，每周工作时间累计不超过"
             "二十四小时的用工形式。")
LABOUR_71 = "非全日制用工双方当事人任何一方都可以随时通知对方终止用工。终止用工，用人单位不向劳动者支付经济补偿。"
LABOUR_72 = "非全日制用工小时计酬标准不得低于用人单位所在地人民政府规定的最低小时工资标准。非全日制用工劳动报酬结算支付周期最长不得超过十五日。"


def _labour(number: int, text: str):
    from agentic_rag.retrieval.types import Article

    return Article(id=f"labour#{number}", title=f"第{number}条", law="中华人民共和国劳动合同法", article=number,
                   article_cn=f"第{number}条", text=text)


def test_a_statement_that_a_party_does_not_pay_is_an_exemption_but_a_failure_to_pay_is_a_case():
    assert modality("终止用工，用人单位不向劳动者支付经济补偿。") == "exempt"
    assert modality("逾期不支付的，责令用人单位按应付金额百分之五十以上百分之一百以下的标准向劳动者加付赔偿金：") != "exempt"
    assert modality("用人单位逾期不向劳动者支付的，劳动者可以申请仲裁。") == "permit"


def test_asking_for_compensation_the_law_says_is_not_paid_is_answered_no():
    question = "我在一家奶茶店做小时工，每周干五天、每天三四个小时，老板突然说明天不用来了，能要经济补偿吗？"
    assert ask_kind(question) == "right"
    assert decide(question, by_text(LABOUR_71, "不向劳动者支付")).label == "不可以"
    owed = clauses("劳动合同被确认无效，劳动者已付出劳动的，用人单位应当向劳动者支付劳动报酬。")[0]
    assert decide("公司说我的劳动合同无效，白干两个月，我还能要工资吗？", owed).label == "可以"  # lab2-428


def test_a_definition_does_not_decide_a_polar_ask_when_the_next_article_has_a_rule():
    from agentic_rag.stages.answer.deciding import deciding_clause

    articles = [_labour(68, LABOUR_68), _labour(72, LABOUR_72)]

    def embed(question, texts):  # the definition is the nearest clause, as on fresh-ml-001
        return [0.50 if "是指" in t else 0.47 if "十五日" in t else 0.40 for t in texts]

    polar = "我周末在一家火锅店打零工，按小时算钱，一天干四个小时左右，老板说工钱一个月结一次，这样可以吗？"
    best = deciding_clause(polar, articles, embed)
    assert best.article.article == 72 and "十五日" in best.clause.text
    assert decide(polar, best.clause).label == "不可以"
    # asked what it is, the definition answers; and without a second article it stays the governing one's clause
    assert deciding_clause("非全日制用工是什么意思？", articles, embed).article.article == 68
    assert deciding_clause(polar, articles[:1], embed).article.article == 68


def test_a_duty_undone_by_the_other_side_is_unlawful_unless_it_claims_a_legal_basis():
    keep = clauses("电子商务平台经营者应当记录、保存平台上发布的商品和服务信息、交易信息，并确保信息的完整性、保密性、可用性。")[0]
    assert decide("我两年前在平台买的东西，订单记录被平台删了，这合规吗？", keep).label == "不可以"
    assert decide("我想让平台把我两年前的订单记录删了，这合规吗？", keep).label == "视情况"  # asked for, not done
    brief = clauses("除法律、行政法规另有规定外，个人信息的保存期限应当为实现处理目的所必要的最短时间。")[0]
    kept = "活动早就结束了，我让商场删掉我的信息，他们说这些资料会一直留着，以后可能有用。商场这样做合规吗？"
    assert decide(kept, brief).label == "不可以"
    based = "我销户了，要求券商把交易记录删了，券商说法规规定要一直保存着所以不删，他们这样合规吗？"
    assert decide(based, brief).label == "视情况"  # whether the regulation it cites holds decides


def test_what_the_user_can_do_is_open_to_them_not_an_authoritys_power_or_the_other_sides_exemption():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import grants_a_party, remedies

    texts = {57: "个人信息处理者采取措施能够有效避免信息泄露、篡改、丢失造成危害的，个人信息处理者可以不通知个人；"
                 "履行个人信息保护职责的部门认为可能造成危害的，有权要求个人信息处理者通知个人。",
             65: "任何组织、个人有权对违法个人信息处理活动向履行个人信息保护职责的部门进行投诉、举报。收到投诉、举报的部门应当"
                 "依法及时处理，并将处理结果告知投诉、举报人。",
             70: "个人信息处理者违反本法规定处理个人信息，侵害众多个人的权益的，人民检察院、法律规定的消费者组织和由国家网信部门"
                 "确定的组织可以依法向人民法院提起诉讼。"}
    articles = [Article(id=f"pipl#{n}", title=f"第{n}条", law="pipl", article=n, article_cn=f"第{n}条", text=t)
                for n, t in texts.items()]
    listed = [c.quote for _, c in remedies(articles, set())]
    assert listed == ["任何组织、个人有权对违法个人信息处理活动向履行个人信息保护职责的部门进行投诉、举报。",
                      "收到投诉、举报的部门应当依法及时处理，并将处理结果告知投诉、举报人。"]  # what a complaint gets
    # an authority named earlier in the sentence is not who holds the remedy
    guardian = clauses("对监护人的确定有争议的，由被监护人住所地的居民委员会、村民委员会或者民政部门指定监护人，有关当事人对指定"
                       "不服的，可以向人民法院申请指定监护人。")
    assert grants_a_party(next(c for c in guardian if "可以向人民法院申请" in c.full))


def test_asked_what_to_do_the_user_is_told_what_they_can_do_not_an_authoritys_power():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import deciding_clause

    def pipl(number: int, text: str) -> Article:
        return Article(id=f"pipl#{number}", law="中华人民共和国个人信息保护法", title="中华人民共和国个人信息保护法",
                       article=number, article_cn=f"第{number}条", text=text)

    articles = [pipl(70, PIPL_70), pipl(65, PIPL_65)]

    def embed(question, texts):  # ans-ml-047: 第七十条 nearer by 0.055, more than a near tie
        return [0.517 if "检察院" in t else 0.462 for t in texts]

    howto = "我怀疑一个App把我的信息卖给了别人，想先弄清楚它存了我哪些信息，再去投诉，按个保法应该怎么做？"
    assert deciding_clause(howto, articles, embed).article.article == 65
    # asked whether the procurators may sue, their power is the answer
    assert deciding_clause("App侵害了很多人的个人信息权益，检察院能起诉吗？", articles, embed).article.article == 70
    assert deciding_clause(howto, articles[:1], embed).article.article == 70  # nothing else to answer from


def test_a_question_that_ends_asking_what_to_do_is_explained_not_answered_yes():
    # ans-pipl-064 was concluded 「需要。」: the question asks what, not whether
    what = "我们是一家海外公司，App专门给中国用户用，但在中国没有任何分支机构，个人信息方面需要在中国做些什么？"
    assert ask_kind(what) == "howto" and decide(what, by_text(ART_25, "不得公开")).label == "说明"
    assert ask_kind("除了让员工同意，单位还得做到哪些？") == "howto"
    # a yes/no ask that names something to do stays one
    assert ask_kind("把学生资料这样往国外传，需要先办什么手续吗？") == "need"
    assert ask_kind("政府部门收集我的信息，需要告诉我拿去干什么吗？") == "need"


@pytest.mark.parametrize("article, fragment, question, label", [
    # a permission on listed grounds, its exemption for those grounds, a duty: none lets the other side act at will
    (ART_13, "不需取得个人同意", "App可以随便读我手机通讯录吗？", "不可以"),
    (ART_13, "（二）", "公司能随便查看员工手机里的聊天记录吗？", "不可以"),
    ("处理敏感个人信息应当取得个人的单独同意。", "", "医院能随便把病人的病历给医药公司吗？", "不可以"),
    # the asker's own act, and a right the law gives the asker's side, are not asked "at will" of another
    ("基于个人同意处理个人信息的，个人有权撤回其同意。", "", "我可以随便撤回同意吗？", "可以"),
    ("消费者有权自收到商品之日起七日内退货，且无需说明理由。", "", "消费者能随便退货吗？", "可以"),
])
def test_may_they_do_it_at_will_is_answered_no_where_the_law_sets_terms(article, fragment, question, label):
    clause = by_text(article, fragment) if fragment else clauses(article)[0]
    assert decide(question, clause).label == label


def test_asked_the_sanction_the_answer_lists_its_other_grades():
    from agentic_rag.stages.answer.deciding import conditions
    art_66 = ("违反本法规定处理个人信息，或者处理个人信息未履行本法规定的个人信息保护义务的，由履行个人信息保护职责的部门"
              "责令改正，给予警告，没收违法所得；拒不改正的，并处一百万元以下罚款。有前款规定的违法行为，情节严重的，"
              "由省级以上履行个人信息保护职责的部门责令改正，没收违法所得，并处五千万元以下罚款。")
    article = statute(66, art_66)
    deciding = by_text(art_66, "拒不改正")
    listed = " ".join(c.quote for c in conditions(article, deciding, "违反了会被罚吗？"))
    assert "情节严重" in listed and "给予警告" in deciding.quote  # the quoted sentence carries the first grade
    assert not conditions(article, deciding, "这种情况能要求删除吗？")  # not asked the sanction: no grades listed
    serious = ("有前款规定的违法行为，情节严重的，由省级以上履行个人信息保护职责的部门责令改正，没收违法所得，并处五千万元"
               "以下或者上一年度营业额百分之五以下罚款，并可以责令暂停相关业务或者停业整顿、通报有关主管部门吊销相关业务"
               "许可或者吊销营业执照；对直接负责的主管人员和其他直接责任人员处十万元以上一百万元以下罚款，并可以决定禁止"
               "其在一定期限内担任相关企业的董事、监事、高级管理人员和个人信息保护负责人。")
    article = article.model_copy(update={"text": art_66 + serious})
    first = conditions(article, by_text(serious, "十万元以上一百万元"), "公司违规，监管能连我这个主管一起罚吗？")[0]
    assert "情节严重" in first.quote  # the grade quoted is for serious cases: that case is listed first
    first = conditions(article, by_text(serious, "五千万元"), "我们是小公司，被查到会被罚到五千万吗？")[0]
    assert "给予警告" in first.quote  # a grade with its own case: the article's first grade, not the clause after it


SENSITIVE = ("敏感个人信息是一旦泄露或者非法使用，容易导致自然人的人格尊严受到侵害或者人身、财产安全受到危害的个人信息，"
             "包括生物识别、宗教信仰、特定身份、医疗健康、金融账户、行踪轨迹等信息，以及不满十四周岁未成年人的个人信息。")


@pytest.mark.parametrize("question, label", [
    ("未成年人的信息算敏感信息吗？", "视情况"),  # only those under fourteen are: the age decides
    ("我家孩子12岁，他的信息算敏感信息吗？", "需要"),
    ("十六岁孩子的信息算敏感信息吗？", "不需要"),  # not the case the article names
    ("小学生的信息算敏感信息吗？", "需要"),
])
def test_a_rule_for_children_under_an_age_decides_by_the_age_the_question_gives(question, label):
    assert decide(question, clauses(SENSITIVE)[0]).label == label


@pytest.mark.parametrize("question, label, shown", [
    ("未成年人的信息算敏感信息吗？", "需要", "属于"), ("病历算不算敏感信息？", "不需要", "不属于"),
    ("指纹属于敏感个人信息吗？", "需要", "属于"),
    ("这些也算个人信息、要按个保法来保护吗？", "需要", "需要"),  # asks what must be done: the label as it is
    ("需要单独同意吗？", "需要", "需要"), ("这算不算违规？", "不可以", "不可以")])
def test_a_question_whether_something_is_of_a_kind_is_answered_it_is_or_is_not(question, label, shown):
    from agentic_rag.stages.answer.conclusion import shown_label
    from agentic_rag.stages.answer.form import AskPlan, segments
    assert shown_label(question, label) == shown
    opening = segments([AskPlan(question=question, label=label, rule="r")], True, [])[0]
    assert opening == f"**结论**：{shown}。"


def test_a_number_asked_for_is_answered_by_a_clause_that_has_one():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import deciding_clause

    text = ("竞业限制的范围、地域、期限由用人单位与劳动者约定，竞业限制的约定不得违反法律、法规的规定。"
            "在解除或者终止劳动合同后，前款规定的人员到其他用人单位的竞业限制期限，不得超过二年。")
    art = Article(id="lcl#24", title="第二十四条", law="劳动合同法", article=24, article_cn="第二十四条", text=text)

    def nearest_first(question, texts):  # the embedder put the first sentence nearer (cosine 0.61 vs 0.53)
        return [0.61 if t.startswith("竞业限制的范围") else 0.53 for t in texts]

    assert "不得超过二年" in deciding_clause("竞业限制最长能约定几年？", [art], nearest_first).clause.text
    assert deciding_clause("竞业限制的约定要遵守什么？", [art], nearest_first).clause.text.startswith("竞业限制的范围")



CPL_25 = ("经营者采用网络、电视、电话、邮购等方式销售商品，消费者有权自收到商品之日起七日内退货，且无需说明理由，"
          "但下列商品除外：（一）消费者定作的；（二）鲜活易腐的；（三）在线下载或者消费者拆封的音像制品、计算机软件等"
          "数字化商品；（四）交付的报纸、期刊。除前款所列商品外，其他根据商品性质并经消费者在购买时确认不宜退货的商品，"
          "不适用无理由退货。")


def test_asked_which_things_the_whole_list_is_quoted_not_the_nearest_item():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer import form
    from agentic_rag.stages.answer.deciding import deciding_clause

    art = Article(id="cpl#25", title="第二十五条", law="消费者权益保护法", article=25, article_cn="第二十五条", text=CPL_25)

    def third_nearest(question, texts):  # as the embedder did: the item 0.022 above the rule, another clause between
        return [0.645 if "（三）" in t else 0.623 if t.startswith("除前款") else 0.607 for t in texts]

    listed = form.quote(art, deciding_clause("网购七天无理由退货，哪些商品不能退？", [art], third_nearest).clause, True)
    assert all(f"（{n}）" in listed for n in "一二三四") and not listed.endswith("…")
    # a yes/no ask is still decided by the item it is about
    item = deciding_clause("网购的游戏光盘拆封了还能七天无理由退吗？", [art], third_nearest).clause
    assert item.item == "（三）"


def test_a_permission_the_law_gives_the_other_side_is_not_the_askers():
    terminate = clauses("有下列情形之一的，用人单位提前三十日以书面形式通知劳动者本人或者额外支付劳动者一个月工资后，"
                        "可以解除劳动合同：（一）劳动者患病或者非因工负伤，在规定的医疗期满后不能从事原工作的；")[0]
    # it was 「可以。」: 第四十条 lets the employer terminate, the asker is the employee who wants to quit
    assert decide("上一问题：公司拖欠工资三个月了；追问：我能立刻辞职吗？", terminate).label == "视情况"
    # the asker who is the employer is the one it lets act
    assert decide("我们公司效益不好，我能解除劳动合同吗？", terminate).label == "可以"


def test_who_bears_it_is_explained_and_a_sanctioned_act_is_not_allowed():
    freight = clauses("退回商品的运费由消费者承担；经营者和消费者另有约定的，按照约定。")[0]
    # it was 「视情况。」 with a condition from another clause of the article
    assert decide("上一问题：网上买的衣服七天内能退吗？；追问：退货运费谁出？", freight).label == "说明"
    seized = clauses("用人单位违反本法规定，扣押劳动者居民身份证等证件的，由劳动行政部门责令限期退还劳动者本人，"
                     "并依照有关法律规定给予处罚。")[0]
    assert decide("公司能扣我的身份证吗？", seized).label == "不可以"  # it was 「视情况。」
    assert decide("公司能查看我的身份证吗？", seized).label == "视情况"  # 查看 is not 扣押: one shared bigram


def test_an_excepted_item_decides_only_a_question_that_names_its_case():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import deciding_clause

    art = Article(id="cpl#25", title="第二十五条", law="消费者权益保护法", article=25, article_cn="第二十五条", text=CPL_25)

    def item_ahead(item):  # the embedder put this item 0.02 above the rule, as it did for 衣服 and (三)
        return lambda question, texts: [0.625 if item in t else 0.605 for t in texts]

    # 「不可以。」 from 音像制品 for clothes: now the rule with its list decides
    assert not deciding_clause("网上买的衣服七天内能退吗？", [art], item_ahead("（三）")).clause.item
    assert deciding_clause("定做的T恤七天内能退吗？", [art], item_ahead("（一）")).clause.item == "（一）"



def test_items_of_a_list_quoted_whole_are_not_listed_again_as_conditions():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer import form
    from agentic_rag.stages.answer.deciding import deciding_clause

    text = ("有下列情形之一的，个人信息处理者应当事前进行个人信息保护影响评估，并对处理情况进行记录：（一）处理敏感个人信息；"
            "（二）利用个人信息进行自动化决策；（三）委托处理个人信息、向其他个人信息处理者提供个人信息、公开个人信息；"
            "（四）向境外提供个人信息；（五）其他对个人权益有重大影响的个人信息处理活动。")
    art = Article(id="pipl#55", title="第五十五条", law="pipl", article=55, article_cn="第五十五条", text=text)
    question = "我们的App上线前，法律上要做好哪些准备？"
    best = deciding_clause(question, [art], lambda q, texts: [0.6 if "（四）" in t else 0.5 for t in texts])
    plan = form.AskPlan(question=question, label="说明", rule="info", article=art, clause=best.clause)
    shown = form.reason(plan, True) + form.tail([plan], True, [art])
    # the 条件与例外 line repeated items (二) and (三) of the list the 依据 line had just quoted
    assert shown.count("利用个人信息进行自动化决策") == 1 and "（五）" in shown


def test_keeping_told_before_asking_whether_it_is_lawful_is_not_allowed():
    purpose = by_text("有下列情形之一的，个人信息处理者应当主动删除个人信息；个人信息处理者未删除的，个人有权请求删除："
                      "（一）处理目的已实现、无法实现或者为实现处理目的不再必要；（二）个人信息处理者停止提供产品或者服务，"
                      "或者保存期限已届满；", "（一）")
    # it was 「可以。」 (a tryout's opposite): the individual's right to ask read as a ground the platform keeps on
    assert decide("处理目的都实现了，它还不删我的信息，这样合法吗？", purpose).label == "不可以"
    # the other side's reason told before the ask decides, not the keeping (held-out fresh-pipl-110 stays)
    assert decide("它说技术上没法单独删，只能保证不再使用、加密存着。这种说法站得住吗？", purpose).label == "可以"


def test_keeping_what_must_be_deleted_refusing_a_duty_and_more_than_allowed_are_not_allowed():
    account = by_text("有下列情形之一的，个人信息处理者应当主动删除个人信息；个人信息处理者未删除的，个人有权请求删除："
                      "（一）处理目的已实现；（二）个人信息处理者停止提供产品或者服务，或者保存期限已届满；（三）个人撤回同意；", "（二）")
    # it was 「可以。」: the individual's right to ask for deletion read as the platform's permission to keep
    assert decide("我注销了账号，平台还能留着我的信息吗？", account).label == "不可以"
    assert decide("我注销了账号，我能要求平台删除我的信息吗？", account).label == "可以"
    invoice = clauses("经营者提供商品或者服务，应当按照国家有关规定或者商业惯例向消费者出具发票等购货凭证或者服务单据；"
                      "消费者索要发票等购货凭证或者服务单据的，经营者必须出具。")[-1]
    assert decide("商家拒绝给我开发票，合法吗？", invoice).label == "不可以"  # it was 「视情况。」
    assert decide("商家给我开的是收据，合法吗？", invoice).label == "视情况"
    once = clauses("同一用人单位与同一劳动者只能约定一次试用期。")[0]
    assert decide("同一家公司可以跟我约定两次试用期吗？", once).label == "不可以"  # it was 「视情况。」
    assert decide("公司第二次跟我约定试用期，可以吗？", once).label == "不可以"
    assert decide("公司可以跟我约定一次试用期吗？", once).label != "不可以"


def test_an_approval_the_law_does_not_ask_is_not_needed():
    quit_ = clauses("劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。劳动者在试用期内提前三日通知用人单位，"
                    "可以解除劳动合同。")[0]
    assert decide("辞职需要公司批准吗？", quit_).label == "不需要"  # it was 「视情况。取决于劳动者是否提前通知…」
    assert decide("辞职需要提前通知公司吗？", quit_).label != "不需要"


@pytest.mark.parametrize("question, kind", [
    ("个人在朋友圈卖自己做的手工艺品，要办营业执照吗？", "need"),  # it was a permission: 「可以。」
    ("上一问题：邻居家的狗咬了我；追问：我能要求赔哪些钱？", "info"),  # which sums: it was 「可以。」
])
def test_what_the_question_asks_stop_56(question, kind):
    assert ask_kind(question) == kind


def test_a_question_whether_something_is_lawful_is_answered_lawful_or_not():
    from agentic_rag.eval.answers import conclusion_label
    from agentic_rag.stages.answer.conclusion import shown_label
    # it was 「结论：可以。」 to 「…之前处理我信息的行为还算合法吗？」
    assert shown_label("我撤回同意以后，App之前处理我信息的行为还算合法吗？", "可以") == "合法"
    assert shown_label("商家拒绝给我开发票，合法吗？", "不可以") == "不合法"
    assert shown_label("商家拒绝给我开发票，合法吗？", "视情况") == "视情况"
    assert shown_label("大数据杀熟违法吗？", "不可以") == "不可以"  # 不合法 would answer 违法吗 in the negative's words
    assert shown_label("公司能扣我的身份证吗？", "不可以") == "不可以"
    # the answers eval reads the shown word back as the label
    assert conclusion_label("**结论**：不合法。\n\n**依据**：…") == "不可以"
    assert conclusion_label("**结论**：合法。") == "可以"


def test_a_follow_up_that_puts_the_asker_in_the_previous_asks_place_asks_their_own_act():
    notice = clauses("劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。劳动者在试用期内提前三日通知用人单位，"
                     "可以解除劳动合同。")[1]
    # it was 「视情况。取决于劳动者是否提前通知用人单位。」
    assert decide("上一问题：我在试用期，公司能随时辞退我吗？；追问：那我自己想走呢？", notice).label == "可以"
    assert ask_kind("上一问题：电商平台能删除差评吗？；追问：违反了会被怎么罚？") == "info"  # it was 视情况


def test_asked_a_number_the_general_rule_answers_before_a_special_case_and_a_sanction_lists_the_act_told():
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import conditions, deciding_clause

    text = ("经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。六个月以上不满一年的，按一年计算；"
            "不满六个月的，向劳动者支付半个月工资的经济补偿。劳动者月工资高于用人单位所在直辖市、设区的市级人民政府公布的"
            "本地区上年度职工月平均工资三倍的，向其支付经济补偿的标准按职工月平均工资三倍的数额支付，向其支付经济补偿的年限"
            "最高不超过十二年。")
    art = Article(id="lcl#47", title="第四十七条", law="劳动合同法", article=47, article_cn="第四十七条", text=text)

    def cap_nearest(question, texts):  # the embedder put the high-wage cap nearest to 「补偿标准是多少？」
        return [0.6 if "三倍" in t else 0.5 for t in texts]

    # it was the cap: 「劳动者月工资高于三倍职工月平均工资的…」 as the answer to what the standard is
    asked = "上一问题：公司跟我解除劳动合同，要给经济补偿吗？；追问：补偿标准是多少？"
    assert deciding_clause(asked, [art], cap_nearest).clause.text.startswith("经济补偿按劳动者在本单位工作的年限")
    assert "三倍" in deciding_clause("我月工资高于当地平均工资三倍，补偿标准是多少？", [art], cap_nearest).clause.text

    fines = ("电子商务平台经营者违反本法规定，有下列行为之一的，由市场监督管理部门责令限期改正，可以处二万元以上十万元以下的罚款；"
             "情节严重的，处十万元以上五十万元以下的罚款：（一）未在首页显著位置持续公示平台服务协议、交易规则信息的；"
             "（二）修改交易规则未在首页显著位置公开征求意见的；（三）未以显著方式区分标记自营业务和平台内经营者开展的业务的；"
             "（四）未为消费者提供对平台内销售的商品或者提供的服务进行评价的途径，或者擅自删除消费者的评价的。")
    fined = Article(id="ec#81", title="第八十一条", law="电子商务法", article=81, article_cn="第八十一条", text=fines)
    question = "上一问题：电商平台能删除差评吗？；追问：违反了会被怎么罚？"
    best = deciding_clause(question, [fined], lambda q, texts: [0.6 if "（" not in t else 0.5 for t in texts])
    assert conditions(fined, best.clause, question)[0].item == "（四）"  # it was item (一), about the home page


LABOUR_19 = ("劳动合同期限三个月以上不满一年的，试用期不得超过一个月；劳动合同期限一年以上不满三年的，试用期不得超过二个月；"
             "三年以上固定期限和无固定期限的劳动合同，试用期不得超过六个月。同一用人单位与同一劳动者只能约定一次试用期。"
             "以完成一定工作任务为期限的劳动合同或者劳动合同期限不满三个月的，不得约定试用期。")


@pytest.mark.parametrize("question, bracket, label", [
    # it was 「不可以。」 from 「…不满三个月的，不得约定试用期」 whatever the months asked
    ("公司能不能跟我约定试用期6个月？我的合同是两年的", "一年以上不满三年", "不可以"),
    ("公司能不能跟我约定试用期1个月？我的合同是两年的", "一年以上不满三年", "可以"),
    ("我的劳动合同签了三年，试用期能约定半年吗？", "三年以上", "可以"),
    ("合同签了八个月，试用期能约定两个月吗？", "三个月以上不满一年", "不可以"),
])
def test_the_bracket_of_time_the_question_tells_decides_and_its_limit_is_compared(question, bracket, label):
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import deciding_clause

    art = Article(id="lcl#19", title="第十九条", law="劳动合同法", article=19, article_cn="第十九条", text=LABOUR_19)
    # the embedder put 「…不满三个月的，不得约定试用期」 nearest, as it did for the tryout's question
    best = deciding_clause(question, [art], lambda q, texts: [0.6 if "不得约定试用期" in t else 0.5 for t in texts])
    assert best.clause.text.startswith(("劳动合同期限" + bracket, bracket)) and decide(question, best.clause).label == label


@pytest.mark.parametrize("question, label", [("竞业限制能约定一年吗？", "可以"), ("竞业限制能约定三年吗？", "不可以"),
                                             ("公司跟我约定竞业限制三年，合法吗？", "不可以")])
def test_a_limit_after_a_comma_limits_what_the_segment_before_it_names(question, label):
    limit = next(c for c in clauses("在解除或者终止劳动合同后，前款规定的人员到其他用人单位的竞业限制期限，不得超过二年。"))
    assert decide(question, limit).label == label  # 一年 was 「不可以。」: 不得 read whatever the span asked


def test_refusing_what_the_other_side_may_not_impose_is_allowed():
    overtime = clauses("用人单位应当严格执行劳动定额标准，不得强迫或者变相强迫劳动者加班。")[0]
    # it was 「不可以。」: the employer's prohibition read as a prohibition of the asker's refusal
    assert decide("公司规定每天必须加班到晚上10点，不加班就扣绩效，我能拒绝吗？", overtime).label == "可以"
    assert decide("公司能强迫我加班吗？", overtime).label == "不可以"
    inspection = clauses("当事人应当予以协助、配合，不得拒绝、阻挠。")[0]
    assert decide("监管部门来检查，我能拒绝吗？", inspection).label == "不可以"  # the prohibition is the asker's own


@pytest.mark.parametrize("question, kind, sanction", [
    ("某个App泄露了几百万用户的信息，除了我们自己去告，还有谁可以起诉它？", "info", False),  # who may: it was 「视情况。」
    ("老板拖欠了我两个月工资，除了去劳动仲裁，还有别的办法吗？", "howto", False),  # it was 「视情况。」
    ("上一问题：国外法院要求我们公司把数据交给他们；追问：要是没批准就给了，会怎么处理？", "info", True),  # it was how to
    ("我爸去世了没留遗嘱，家里还有我妈、我和奶奶，遗产怎么分？", "info", False),  # it was 「视情况。」
    ("公司被别的公司合并了，我的个人信息会被怎么处理？", "howto", False),  # what becomes of the data: not a sanction
    ("遇到这种情况怎么处理？", "howto", False),
    ("银行这样合适吗？是不是应该给残疾人留别的办法？", "permission", False),
])
def test_who_may_other_ways_how_it_is_shared_and_what_is_done_to_the_one_who_did_it(question, kind, sanction):
    assert (ask_kind(question), asks_penalty(question)) == (kind, sanction)


def test_a_liability_for_a_failure_the_question_does_not_tell_depends_on_it():
    review = clauses("对关系消费者生命健康的商品或者服务，电子商务平台经营者对平台内经营者的资质资格未尽到审核义务，或者对消费者"
                     "未尽到安全保障义务，造成消费者损害的，依法承担相应的责任。")[-1]
    # it was 「需要。」: the platform's liability stated as if its failure were told
    assert decide("在外卖平台点了一家店的菜，吃完食物中毒进了医院，平台要不要担责？", review).label == "视情况"
    assert decide("外卖平台没审核商家的资质，我吃坏了肚子，平台要不要担责？", review).label == "需要"


CIVIL_278 = ("下列事项由业主共同决定：（一）制定和修改业主大会议事规则；（二）制定和修改管理规约；（三）选举业主委员会或者更换业主"
             "委员会成员；（四）选聘和解聘物业服务企业或者其他管理人；（五）使用建筑物及其附属设施的维修资金；（六）筹集建筑物及其"
             "附属设施的维修资金；（七）改建、重建建筑物及其附属设施；（八）改变共有部分的用途或者利用共有部分从事经营活动；"
             "（九）有关共有和共同管理权利的其他重大事项。业主共同决定事项，应当由专有部分面积占比三分之二以上的业主且人数占比"
             "三分之二以上的业主参与表决。决定前款第六项至第八项规定的事项，应当经参与表决专有部分面积四分之三以上的业主且参与表决"
             "人数四分之三以上的业主同意。决定前款其他事项，应当经参与表决专有部分面积过半数的业主且参与表决人数过半数的业主同意。")


@pytest.mark.parametrize("matter, applies, passed_over", [
    ("选聘和解聘物业服务企业", "其他事项", "第六项至第八项"),  # 换物业 was answered 四分之三 (the rule of items 6-8)
    ("改建、重建建筑物", "第六项至第八项", "其他事项"),
])
def test_a_rule_for_some_items_of_a_list_decides_only_the_questions_of_those_items(matter, applies, passed_over):
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import rank_clauses

    article = Article(id="278", title="第二百七十八条", law="民法典", article=278, article_cn="第二百七十八条",
                      text=CIVIL_278)

    def embed(q, texts):  # the question's matter stands out among the items; the two vote rules a shade nearer
        return np.array([0.45 if matter in t else 0.46 if "前款" in t and passed_over in t else
                         0.44 if "前款" in t else 0.3 for t in texts])

    ranked = [r.clause.text for r in rank_clauses("想做这件事，得多少业主同意才算数？", [article], embed)]
    rules = [t for t in ranked if "前款" in t]
    assert applies in rules[0] and passed_over in ranked[-1]


def test_an_item_that_does_not_stand_out_leaves_the_item_rules_as_they_rank():
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import rank_clauses

    article = Article(id="278", title="第二百七十八条", law="民法典", article=278, article_cn="第二百七十八条",
                      text=CIVIL_278)

    def embed(q, texts):  # 「公共绿地改成停车场」: as near （四） as （八）: which item it is, the cosine cannot tell
        return np.array([0.367 if "物业服务企业" in t else 0.359 if "改变共有部分" in t else
                         0.40 if "第六项至第八项" in t else 0.39 if "其他事项" in t else 0.3 for t in texts])

    ranked = [r.clause.text for r in rank_clauses("公共绿地改成停车场，得多少业主同意？", [article], embed)]
    assert "第六项至第八项" in ranked[0] and "其他事项" in ranked[1]


def test_a_negation_that_tells_the_conditions_own_case_does_not_deny_it():
    sublet = clauses("承租人未经出租人同意转租的，出租人可以解除合同。")[0]
    # it was 「不可以。」: 没经过出租人同意 read as denying the case 承租人…的 (a word of it after the question's 没)
    for question in ("承租人没经过出租人同意就把房子转租了，出租人能解除合同吗？",
                     "承租人没经过出租人同意就把房子转租了，出租人能不能解除合同？"):
        assert decide(question, sublet).label == "可以"
    damage = clauses("侵权人违反法律规定故意污染环境、破坏生态造成严重后果的，被侵权人有权请求相应的惩罚性赔偿。")[0]
    assert decide("厂里也承认不是故意的，我还能让他们额外再赔一笔惩罚性的钱吗？", damage).label == "不可以"


def test_a_ground_for_what_is_necessary_does_not_permit_more_than_the_question_says_is_needed():
    hr = by_text(ART_13, "人力资源管理所必需")
    question = "公司新上了一个考勤打卡App，要读通讯录、相册、通话记录，不给权限就打不了卡。就打个卡要这么多权限，合理吗？"
    assert decide(question, hr).label == "视情况"  # it was 「可以。」: the ground taken as met
    assert decide("公司为了发工资收集我的银行卡号，这样可以吗？", hr).label == "可以"
    assert decide("打卡App要读我的通讯录，就打个卡要这么多权限，需要我同意吗？", hr).label == "视情况"


def test_a_clause_that_only_points_to_the_paragraph_before_it_loses_a_near_tie():
    import numpy as np

    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import rank_clauses

    text = ("被派遣劳动者享有与用工单位的劳动者同工同酬的权利。用工单位应当按照同工同酬原则，对被派遣劳动者与本单位同类岗位的"
            "劳动者实行相同的劳动报酬分配办法。劳务派遣单位与被派遣劳动者订立的劳动合同和与用工单位订立的劳务派遣协议，载明或者"
            "约定的向被派遣劳动者支付的劳动报酬应当符合前款规定。")
    article = Article(id="63", title="第六十三条", law="劳动合同法", article=63, article_cn="第六十三条", text=text)

    def embed(q, texts):  # as the embedder put it for the question below: the pointer nearest by 0.03
        return np.array([0.542 if "符合前款规定" in t else 0.514 if "分配办法" in t else 0.509 for t in texts])

    question = "我是劳务派遣过去的，跟厂里的正式工干一模一样的活，正式工一个月6000多，我们派遣的才3500，这合法吗？"
    # it was quoted 「…支付的劳动报酬应当符合前款规定」, which says nothing of what 前款 requires
    assert "前款" not in rank_clauses(question, [article], embed)[0].clause.text


def test_asked_how_many_the_rule_for_other_items_is_not_chosen_for_its_item_numbers():
    import numpy as np

    from agentic_rag.legal.numerals import QUANTITY
    from agentic_rag.retrieval.types import Article
    from agentic_rag.stages.answer.deciding import deciding_clause

    assert [m.group(0) for m in QUANTITY.finditer("决定前款第六项至第八项规定的事项，应当经…四分之三以上…过半数")] == \
        ["四分之三", "过半数"]  # an item's ordinal counts nothing; a fraction and a majority do
    article = Article(id="278", title="第二百七十八条", law="民法典", article=278, article_cn="第二百七十八条",
                      text=CIVIL_278)

    def embed(q, texts):  # as the embedder put it for the question below
        return np.array([0.421 if "物业服务企业" in t else 0.416 if "参与表决。" in t else 0.414 if "第六项" in t else
                         0.402 if "其他事项" in t else 0.37 for t in texts])

    best = deciding_clause("小区400户，想把物业换掉，得多少业主同意才算数？", [article], embed)
    # it was the rule of items 6-8 (四分之三), first among clauses with a number for its 第六项
    assert "四分之三" not in best.clause.text and QUANTITY.search(best.clause.text)


@pytest.mark.parametrize("question", [
    "入职快5个月了，公司一直拖着不跟我签劳动合同，说先干着。这种情况我能要什么？",
    "上一问题：公司一直拖着不跟我签劳动合同。这种情况我能要什么？；追问：要是一直拖到满一年还是不签呢？",  # was 视情况
    "公司不签合同，我可以主张些什么？",
])
def test_what_the_asker_can_claim_is_explained(question):
    assert ask_kind(question) == "info"  # it was a yes/no ask (permission): 视情况 with a condition from another list


def test_asked_whether_the_other_sides_conduct_is_lawful_a_list_of_its_wrongs_that_free_the_asker_says_no():
    wages = by_text("用人单位有下列情形之一的，劳动者可以解除劳动合同：（一）未按照劳动合同约定提供劳动保护或者劳动条件的；"
                    "（二）未及时足额支付劳动报酬的；", "劳动报酬")
    # it was 「可以。」 (shown 「合法。」), read as a list of lawful grounds — as 第十三条's are the processor's: this list is
    # of the employer's wrongs, and the right to leave is the asker's
    assert decide("公司连着三个月拖欠工资，这样合法吗？", wages).label == "不可以"
    assert decide("公司连着三个月拖欠工资，我能辞职吗？", wages).label == "可以"
    assert decide("公司为了发工资收集我的银行卡号，这样合法吗？", by_text(ART_13, "人力资源管理所必需")).label == "可以"
    # a list a duty introduces (第四十七条: 应当主动删除；…未删除的，个人有权请求删除) is read as before: held-out
    # fresh-pipl-110 (a copy that cannot be deleted technically, 「这种说法站得住吗」) is 可以
    deletion = by_text(ART_47, "处理目的已实现")
    assert decide("我注销了账号，它说技术上删不掉，只能加密存着，这种说法站得住吗？", deletion).label == "可以"


def test_a_reason_that_tells_what_the_other_side_did_which_the_question_never_told_is_dropped():
    article = "用人单位有下列情形之一的，劳动者可以解除劳动合同：（二）未及时足额支付劳动报酬的；（三）未依法为劳动者缴纳社会保险费的；"
    question = ("原问题：公司这么扣钱合法吗？；补充：劳动合同里写着未满三年主动辞职需支付违约金1万元，我干了一年半提了离职，"
                "现在公司说要从我最后一个月工资里直接扣这1万。")
    # shown under 「不合法。」: the deciding item's case told as the user's fact
    verdict = judge_sentence("因为公司没有依法为劳动者缴纳社会保险费。", article, "不可以", question=question)
    assert not verdict.kept and verdict.why == "说了问题里没有的事实"
    told = "公司一直没有依法为我缴纳社会保险费，这样合法吗？"  # told by the user: not this check's to drop
    assert judge_sentence("因为公司没有依法为劳动者缴纳社会保险费。", article, "不可以", question=told).why != \
        "说了问题里没有的事实"
    # its cost: told in lay words (「没给我缴社保」) the model's statutory restatement shares too little with the question
    # and is dropped too — a sentence lost, the label and the quoted clause stay (2 of 148 stored sentences flagged, both
    # facts never told)
    lay = judge_sentence("因为公司没有依法为劳动者缴纳社会保险费。", article, "不可以", question="公司没给我缴社保，合法吗？")
    assert lay.why == "说了问题里没有的事实"
    rule = judge_sentence("因为用人单位应当依法为劳动者缴纳社会保险费。", article + "用人单位应当依法为劳动者缴纳社会保险费。",
                          "不可以", question=question)
    assert rule.why != "说了问题里没有的事实"  # a rule stated, not a fact of the case
    # the statute's own name for the other side (个人信息处理者) tells the same untold fact (a tryout's 早教机构, which
    # the question says keeps the data for 回访; nothing says it broke a law or an agreement)
    pipl = "有下列情形之一的，个人信息处理者应当主动删除个人信息：（四）个人信息处理者违反法律、行政法规或者违反约定处理个人信息；"
    asked = "孩子在早教机构报过试听课，后来没报班，他们说要留着做回访，我能要求他们删吗？"
    assert judge_sentence("因为个人信息处理者违反了法律、行政法规或者违反约定处理个人信息。", pipl, "可以",
                          question=asked).why == "说了问题里没有的事实"
    # … but a rule quoted as the reason, whose condition names that side, states no fact (held-out fresh-pipl-106)
    suit = "个人信息处理者违反本法规定处理个人信息，侵害众多个人的权益的，人民检察院、法律规定的消费者组织可以依法向人民法院提起诉讼。"
    assert judge_sentence("因为" + suit, suit, "可以", question="消费者协会能不能出面替大家去法院告它？").why != \
        "说了问题里没有的事实"


def test_a_reduced_liability_is_not_owed_in_full_and_a_burden_on_the_business_is_not_the_askers():
    ride = clauses("非营运机动车发生交通事故造成无偿搭乘人损害，属于该机动车一方责任的，应当减轻其赔偿责任，"
                   "但是机动车使用人有故意或者重大过失的除外。")[0]
    # it was 「需要。」 (a tryout's opposite): a duty to reduce the liability read as the duty to pay all of it
    assert decide("我免费捎同事回家，路上追尾了，同事受伤花了3万医药费，交警认定我全责。这3万我得全赔吗？", ride).label == "不需要"
    shares = clauses("二人以上分别实施侵权行为造成同一损害，能够确定责任大小的，各自承担相应的责任；")[0]
    # it was 「可以。」 (lab-305, the opposite): each owes its share, so the smaller one cannot be made to pay it all
    assert decide("一家占七成责任一家占三成，我能要求只占三成的那家把损失全赔了吗？", shares).label == "不可以"
    assert decide("一家占七成责任一家占三成，我能要求占七成的那家赔吗？", shares).label == "可以"
    proof = clauses("经营者提供的机动车、计算机、电视机、电冰箱、空调器、洗衣机等耐用商品或者装饰装修等服务，消费者自接受商品"
                    "或者服务之日起六个月内发现瑕疵，发生争议的，由经营者承担有关瑕疵的举证责任。")[0]
    # it was 「视情况。」: whether the asker is the party that bears the burden is told by who asks — a consumer
    assert decide("洗衣机用了5个月开始漏水，商家说是我操作不当弄坏的，要我拿出证据。我得自己举证吗？", proof).label == "不需要"
    assert decide("我们店卖的洗衣机用了5个月漏水，顾客说是质量问题，我得举证吗？", proof).label != "不需要"
    thief = clauses("因盗窃、抢劫或者抢夺的机动车发生交通事故造成损害的，由盗窃人、抢劫人或者抢夺人承担赔偿责任。")[0]
    assert decide("我的车被偷了，小偷开着撞了人，我得赔吗？", thief).label == "视情况"  # unchanged: a party anyone may be


def test_a_duty_whose_object_the_question_says_is_missing_is_breached():
    ads = clauses("对于竞价排名的商品或者服务，应当显著标明“广告”。")[0]
    # it was 「视情况。取决于…是否显著标明“广告”」 although the question says it is not marked
    assert decide("排在最前面的都是竞价排名，页面上一点“广告”字样都没有，平台这样合法吗？", ads).label == "不可以"
    assert decide("排在最前面的都是竞价排名，平台这样合法吗？", ads).label == "视情况"


def test_an_age_the_asker_has_not_reached_decides_a_list_of_requirements():
    from agentic_rag.stages.answer.deciding import deciding_clause

    text = ("收养人应当同时具备下列条件：（一）无子女或者只有一名子女；（二）有抚养、教育和保护被收养人的能力；"
            "（三）未患有在医学上认为不应当收养子女的疾病；（四）无不利于被收养人健康成长的违法犯罪记录；（五）年满三十周岁。")
    art = statute(1098, text, "民法典")

    def embed(question, texts):  # the illness item is the nearest, as the embedder ranks it
        return [0.53 if "疾病" in t else 0.50 for t in texts]

    young = "我今年28岁，没结过婚也没孩子，想去福利院收养一个3岁的小女孩，可以吗？"
    best = deciding_clause(young, [art], embed)
    assert "年满三十周岁" in best.clause.full and decide(young, best.clause).label == "不可以"  # it was 视情况
    older = "我今年32岁，没结过婚也没孩子，想去福利院收养一个3岁的小女孩，可以吗？"
    assert "疾病" in deciding_clause(older, [art], embed).clause.full
    # the child's age is not the asker's
    assert decide("想去福利院收养一个3岁的小女孩，可以吗？", by_text(text, "年满三十")).label != "不可以"
