"""A quote that repeats a sentence but says the opposite, negates it or names another thing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracer.conflict import Conflict, quote_addition, quote_conflict, rank_conflict
from tracer.options import TraceOptions, Tuning
from tracer.pipeline import explain_support, trace

CLIMATE = {"url": "https://climate.example/ice", "title": "Climate", "content": (
    "Global sea levels rose by about 20 centimetres during the twentieth century. Arctic sea ice "
    "extent has decreased sharply since 1979. Snow cover in the Northern Hemisphere declined. "
    "Microsoft did not acquire the patents outright.")}
OTHER = {"url": "https://garden.example", "title": "Garden", "content": "Tomatoes need full sun and water."}


def test_the_opposite_word_a_negation_or_another_name_is_a_conflict() -> None:
    assert quote_conflict("Arctic sea ice extent has increased sharply since 1979.",
                          "Arctic sea ice extent has decreased sharply since 1979.", "en") == Conflict(
        "opposite", "increased", "decreased")
    assert quote_conflict("Microsoft acquired the patents outright.",
                          "Microsoft did not acquire the patents outright.", "en") == Conflict(
        "negation", "", "did not acquire")
    assert quote_conflict("Microsoft didn't acquire the patents outright.",
                          "Microsoft acquired the patents outright.", "en") == Conflict(
        "negation", "didn't acquire", "")
    assert quote_conflict("Deaths among people aged 55 and older fell faster than among younger adults.",
                          "Deaths among people aged 55 and older fell more slowly than among younger adults.",
                          "en") == Conflict("opposite", "faster", "slowly")
    assert quote_conflict("Snow cover in the Southern Hemisphere declined.",
                          "Snow cover in the Northern Hemisphere declined.", "en") == Conflict(
        "opposite", "Southern", "Northern")
    assert quote_conflict("The capital of Germany is Paris, not Bonn.",
                          "The capital of Germany is Berlin, not Bonn.", "en") == Conflict(
        "name", "Paris", "Berlin")
    assert quote_conflict("逼抢以及防守硬度不如曼联能跑，好在球队还有德布劳内。",
                          "逼抢以及防守硬度不如利物浦能跑，好在球队还有德布劳内。", "zh") == Conflict(
        "name", "曼联", "利物浦")
    assert quote_conflict("该药物对儿童有效，副作用很小。",
                          "该药物对儿童无效，副作用很小。", "zh") == Conflict("opposite", "有效", "无效")
    assert quote_conflict("今年一季度出口同比增长5%。", "今年一季度出口同比下降5%。", "zh") == Conflict(
        "opposite", "增长", "下降")
    assert quote_conflict("雷克萨斯 ES 2022款200卓越版的方向盘材质是真皮。",
                          "雷克萨斯ES 2021款 200 卓越版 方向盘材质： 真皮", "zh") == Conflict(
        "figure", "2022", "2021")
    assert quote_conflict("The bridge opened in 1937 after four years.",
                          "The bridge opened in 1936 after four years.", "en") == Conflict(
        "figure", "1937", "1936")
    assert quote_conflict("Revenue rose in the first half of 2020.",
                          "Revenue rose in the second half of 2020.", "en") == Conflict(
        "figure", "first", "second")
    assert quote_conflict("在2022年的世界杯上，法国队第二次拿到大力神杯。",
                          "在2022年的世界杯上，法国队第一次拿到大力神杯。", "zh") == Conflict(
        "figure", "第二次", "第一次")
    assert quote_conflict("法国队第二次拿到了大力神杯。", "法国队第2次拿到了大力神杯。", "zh") is None
    assert quote_conflict("He was born on 12 May 1950 in Leeds.",
                          "He was born on 12 June 1950 in Leeds.", "en") == Conflict("figure", "May", "June")
    assert quote_conflict("It may rain today.", "It will rain today.", "en") is None  # "may", the verb
    assert quote_conflict("该公司批准了这项计划。", "该公司没有批准这项计划。", "zh") == Conflict(
        "negation", "", "没有批准")


def test_paraphrase_and_agreement_are_no_conflict() -> None:
    same = "Arctic sea ice extent has decreased sharply since 1979."
    assert quote_conflict(same, same, "en") is None
    # reworded, not contradicted
    assert quote_conflict("Arctic sea ice has shrunk a lot since 1979.", same, "en") is None
    # the same figure written another way, or a figure the quote adds
    assert quote_conflict("It cost 1200 dollars in 1937.", "It cost 1,200 dollars in 1937.", "en") is None
    assert quote_conflict("It cost dollars in 1937.", "It cost 1,200 dollars in 1937.", "en") is None
    # an opposite word negated says the same
    assert quote_conflict("Prices did not fall in 2020.", "Prices rose in 2020.", "en") is None
    assert quote_conflict("今年的价格没有下降，市场很稳定。", "今年的价格上升，市场很稳定。", "zh") is None
    # a negation the quote takes back: a contrast, not a denial
    assert quote_conflict("The vaccine is effective.",
                          "The vaccine is not 100% effective, but it is effective.", "en") is None
    # "not only", "no doubt": no negation at all ("no longer" is one)
    assert quote_conflict("It improves speed and accuracy.",
                          "It improves not only speed but also accuracy.", "en") is None
    assert quote_conflict("It is the best choice.", "It is no doubt the best choice.", "en") is None
    assert quote_conflict("The shop sells bread.", "The shop no longer sells bread.", "en") == Conflict(
        "negation", "", "no longer sells")
    # a negation both sides share, or one the quote has elsewhere too
    assert quote_conflict("Aspirin is not recommended for children.",
                          "Aspirin is not recommended for children under 16.", "en") is None
    # a sentence's first word is capitalised whatever it is; so is every word of a heading
    assert quote_conflict("Researchers found that smoking causes cancer.",
                          "Scientists found that smoking causes cancer.", "en") is None
    assert quote_conflict("The Effects of Smoking on Health in Europe",
                          "The Impacts of Smoking on Health in Europe", "en") is None
    # a pronoun in the name's place is a reference, not another name
    assert quote_conflict("Google acquired Nest Labs in 2014.",
                          "It acquired Nest Labs in 2014.", "en") is None
    # another form of the same name, not another name
    assert quote_conflict("Barack Obama signed the law in 2010.",
                          "President Obama signed the law in 2010.", "en") is None
    assert quote_conflict("据报道，美国总统奥巴马在2010年签署了该法律。",
                          "据报道，美国参议员奥巴马在2010年签署了该法律。", "zh") is None
    # the quote names both: the claim's name is there too
    assert quote_conflict("Apple acquired Beats in 2014.",
                          "Google acquired Beats in 2014, and Apple watched.", "en") is None
    # a whole clause rewritten is paraphrase, however its words differ
    assert quote_conflict("Prices went up after the war.",
                          "After the war the cost of living fell.", "en") is None
    # the 城商行 sentence CiteCheck judges faithful: "几乎没有" replaces a word, it is not inserted
    assert quote_conflict("而城商行的投行部，即使有，也只是负责投资其他银行发行的理财。",
                          "而城商行几乎没有投行部，即使有，也只是负责投资其他银行发行的理财。", "zh") is None


def test_one_edit_unfaithful_sentences_that_the_rules_once_missed_are_conflicts() -> None:
    # the quote's word may come again elsewhere in the sentence ("那么多沙"): the sentence's own
    # word at that spot is still nowhere in the quote
    assert quote_conflict("这条河的沙特别少，如果用挖沙的办法来治理，那么多沙是挖不完的。",
                          "这条河的沙特别多，如果用挖沙的办法来治理，那么多沙是挖不完的。", "zh") == Conflict(
        "opposite", "少", "多")
    # a name at the start of both texts, after a connective
    assert quote_conflict("然而，瓦良格的争议也一直存在，有研究表明它会致癌。",
                          "但阿斯巴甜的争议也一直存在，有研究表明它会致癌。", "zh") == Conflict(
        "name", "瓦良格", "阿斯巴甜")
    assert quote_conflict("However, Google acquired the startup in 2014 for three billion dollars.",
                          "But Apple acquired the startup in 2014 for three billion dollars.",
                          "en") == Conflict("name", "Google", "Apple")
    # words that differ only in an opposite character ("太少" and "太多")
    assert quote_conflict("他的改革步子迈得太大，忽略了太少的不利因素，很快效果就出现下降。",
                          "他的改革步子迈得太大，忽略了太多的不利因素，很快效果就出现下降。",
                          "zh") == Conflict("opposite", "太少", "太多")
    # a figure among small words ("为49284" where the quote has "49283")
    assert quote_conflict("城镇居民人均可支配收入为49284元，名义增长3.9%。",
                          "城镇居民人均可支配收入49283元，比上年名义增长3.9%。", "zh") == Conflict(
        "figure", "49284", "49283")
    # a negation before a modal negates the verb after it, which does not come again
    assert quote_conflict("饭盒由不同材质层叠而成，其中不可能包含金属材料，金属在微波炉中可能会产生火花。",
                          "饭盒由不同材质层叠而成，其中可能包含金属材料，金属在微波炉中可能会产生火花。",
                          "zh") == Conflict("negation", "不可能", "")
    # a negation in a part of the quote that the sentence does not repeat is no answer to it
    assert quote_conflict("这首歌的曲风让人心情舒畅，不放松。",
                          "这首歌的曲风让人心情舒畅，放松。歌手说他不会再唱这首歌了。", "zh") == Conflict(
        "negation", "不放松", "")


def test_a_negation_where_the_quote_affirms_is_a_conflict() -> None:
    # an affirming adverb, or the negation's positive form, in the negation's place
    assert quote_conflict("The album was not very much ahead of its time, with the bass sounds they made.",
                          "The album was also very much ahead of its time, with the bass sounds they made.",
                          "en") == Conflict("negation", "not very", "")
    assert quote_conflict("The album was very much ahead of its time, without the bass sounds they made.",
                          "The album was very much ahead of its time, with the bass sounds they made.",
                          "en") == Conflict("negation", "without the", "")
    assert quote_conflict("The drug is always used in children under five.",
                          "The drug is never used in children under five.", "en") == Conflict(
        "negation", "", "never used")
    assert quote_conflict("这款底料的香气不来自天然香料，如草果、香叶、八角。",
                          "这款底料的香气都来自天然香料，如草果、香叶、八角。", "zh") == Conflict(
        "negation", "不来自", "")
    # "not often" and "rarely" say the same
    assert quote_conflict("The drug is not often used in children under five.",
                          "The drug is rarely used in children under five.", "en") is None


def test_a_negation_far_from_the_spot_does_not_answer_one_the_sentence_adds() -> None:
    # the quote's "无法" is in a clause the sentence does not repeat
    sentence = "当地球与另一个天体之间不存在着一个强引力场天体，在地球上观测到的光是偏离原本方向的。"
    quote = ("假如地球与另一个天体之间存在着一个强引力场天体，远方的光无法以直线到达地球，"
             "因此在地球上观测到的光是偏离原本方向的。")
    assert quote_conflict(sentence, quote, "zh") == Conflict("negation", "不存在", "")
    # a negation near the spot may be the same one, moved: no conflict is read
    assert quote_conflict("该地区不存在着明显的污染问题，居民对此很满意。",
                          "该地区存在着不明显的污染问题，居民对此很满意。", "zh") is None


def test_names_in_a_list_and_names_among_small_words_are_read() -> None:
    # punctuation between two names: the one that changed is another name, not part of the other
    assert quote_conflict("易烊千玺能与于和伟、小高潮、张译、郭晓东等实力派演员竞争最佳男主角。",
                          "易烊千玺能与于和伟、刘烨、张译、郭晓东这些实力派演员竞争最佳男主角。",
                          "zh") == Conflict("name", "小高潮", "刘烨")
    capitals = "The capitals are Paris, {} and Berlin."
    assert quote_conflict(capitals.format("Rome"), capitals.format("Madrid"), "en") == Conflict(
        "name", "Rome", "Madrid")
    # a particle beside the name does not hide it; one word is flank enough between two places
    play = "这部话剧反映{}人民解放前后的不同命运。"
    assert quote_conflict(play.format("了上海"), play.format("中国"), "zh") == Conflict(
        "name", "上海", "中国")
    sent = "以求在未来8-10个月内将其送至{}战区。"
    assert quote_conflict(sent.format("陈瑞"), sent.format("乌克兰"), "zh") == Conflict(
        "name", "陈瑞", "乌克兰")


def test_chinese_leading_clauses_that_name_another_thing_or_period_are_read() -> None:
    tail = "具有良好的散热性和耐磨性能，可以在高温条件下工作，也可以在恶劣环境中使用。"
    # the clause right before the long aligned run ends in another name
    assert quote_conflict(f"铝合金外壳手感好，同时铝合金外壳{tail}", f"不锈钢外壳{tail}", "zh") == Conflict(
        "name", "铝合金", "不锈钢")
    assert quote_conflict(f"它手感好，同时它{tail}", f"不锈钢外壳{tail}", "zh") is None  # a pronoun
    # the leading parts name different historical periods
    arts = "诗歌、绘画、音乐等艺术形式都得到了空前的发展。"
    assert quote_conflict(f"唐代在文化艺术方面繁荣创新，{arts}", f"在宋代，{arts}", "zh") == Conflict(
        "name", "唐代", "宋代")
    assert quote_conflict(f"唐代在文化艺术方面繁荣创新，{arts}", f"在唐代，{arts}", "zh") is None
    # "now" in other words is no other time; last year is
    assert quote_conflict(f"目前，{arts}", f"今年，{arts}", "zh") is None
    assert quote_conflict(f"去年，{arts}", f"今年，{arts}", "zh") == Conflict("name", "去年", "今年")


def test_a_figure_at_the_end_and_a_name_before_a_generic_head_are_read() -> None:
    released = "Gauthe was arrested for violating the sex offender law and was released in April"
    assert quote_conflict(f"{released} 2011.", f"{released} 2010.", "en") == Conflict(
        "figure", "2011", "2010")
    # "County" names a kind of place, so the word before it is the name that changed
    assert quote_conflict("Harney died in 1889, months after Baker County was named for him.",
                          "Harney died in 1889, months after Harney County was named for him.",
                          "en") == Conflict("name", "Baker", "Harney")
    # the end of the text is no flank for a Chinese word: "科研活动" and "科研" say the same
    assert quote_conflict("中国误入美国的无人飞艇用于气象等科研活动。",
                          "该飞艇属民用性质，用于气象等科研。", "zh") is None


def test_a_record_whose_best_passage_contradicts_the_sentence_is_not_cited_by_another() -> None:
    filler = " ".join(f"Unrelated note {i} about local weather and the harbour." for i in range(40))
    content = ("Critics wrote that the debut album Northern Lights by Mara Quinn was very much ahead of its "
               "time, with the bass and electro sounds that her producers made. " + filler + " Later, Mara "
               "Quinn said the debut album Northern Lights and its bass and electro sounds were made with "
               "her producers ahead of its time of release.")
    record = {"url": "https://music.example/quinn", "title": "Mara Quinn", "content": content}
    negated = ("Critics wrote that the debut album Northern Lights by Mara Quinn was not very much ahead of "
               "its time, with the bass and electro sounds that her producers made.")
    result = trace(f"# Music\n\n{negated}\n", [record, OTHER])
    assert result.stats.passages >= 3  # the record is cut in two; its second passage alone scores 0.79
    assert result.citations == ()
    (u,) = result.unsupported
    assert u.closest is not None and u.closest.score <= 0.3
    assert u.closest.conflict == 'the sentence negates its quote ("not very")'
    affirmed = negated.replace("was not very", "was very")
    assert [c.sentence for c in trace(f"# Music\n\n{affirmed}\n", [record, OTHER]).citations] == [affirmed]


def test_the_relaxed_rules_still_leave_paraphrase_alone() -> None:
    # the same figure, and a pronoun at the start
    assert quote_conflict("城镇居民人均可支配收入为49283元，名义增长3.9%。",
                          "城镇居民人均可支配收入49283元，比上年名义增长3.9%。", "zh") is None
    assert quote_conflict("然而，它的争议也一直存在，有研究表明它会致癌。",
                          "但阿斯巴甜的争议也一直存在，有研究表明它会致癌。", "zh") is None
    # a capital at the very start of the quote says nothing about a name
    assert quote_conflict("However, Google acquired the startup in 2014 for three billion dollars.",
                          "Researchers acquired the startup in 2014 for three billion dollars.", "en") is None
    # "not X, but X" and "并非…但…": a contrast, not a denial
    assert quote_conflict("疫苗是有效的。", "疫苗并非百分之百有效，但它是有效的。", "zh") is None
    # a word that comes again without a contrast between is still negated
    assert quote_conflict("The plant is not able to grow in shade, and the plant needs full sun.",
                          "The plant is able to grow in shade, and the plant needs full sun.",
                          "en") == Conflict("negation", "not able", "")


_SOUP = st.lists(st.sampled_from(
    "rose fell not no did Paris Berlin He the capital of in 1979 . ,".split()
    + "不 没有 增加 减少 的 了 曼联 利物浦 公司 批准".split()
    + [" "]), max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_SOUP, _SOUP)
def test_a_quote_that_repeats_the_sentence_never_conflicts_with_it(text: str, more: str) -> None:
    """Whatever the sentence says, a quote that says it and then something else agrees with it."""
    for lang in ("en", "zh"):
        assert quote_conflict(text, text, lang) is None
        assert quote_conflict(text, f"{text} {more}", lang) is None


def test_a_contradicted_sentence_is_never_cited_and_its_near_miss_scores_low() -> None:
    report = ("# Climate\n\nArctic sea ice extent has increased sharply since 1979.\n\n"
              "Global sea levels fell by about 20 centimetres during the twentieth century.\n\n"
              "Microsoft acquired the patents outright.\n\n"
              "Arctic sea ice extent has decreased sharply since 1979.\n")
    result = trace(report, [CLIMATE, OTHER])
    cited = [c.sentence for c in result.citations]
    assert cited == ["Arctic sea ice extent has decreased sharply since 1979."]
    assert len(result.unsupported) == 3
    for u in result.unsupported:
        assert u.closest is not None and u.closest.record_index == 0 and u.closest.score <= 0.3
    # however low min_score goes, a contradicted pair is not cited
    for min_score in (0.35, 0.1, 0.0):
        low = trace(report, [CLIMATE, OTHER], TraceOptions(min_score=min_score))
        assert [c.sentence for c in low.citations] == cited, min_score


def test_the_reason_names_the_conflict_and_the_figures_the_conflict_does_not() -> None:
    record = {"url": "https://cap.example", "title": "Capitals", "content": (
        "The capital of Germany has been Berlin, where the Bundestag sits, since 1991.")}
    report = "# R\n\nThe capital of Germany has been Paris, where the Bundestag sits, since 1990.\n"
    (u,) = trace(report, [record, OTHER]).unsupported
    assert u.closest is not None
    assert u.closest.conflict == 'its quote says "Berlin" where the sentence says "Paris"'
    assert u.reason == ("no record supports this sentence; the closest contradicts it: its quote says "
                        '"Berlin" where the sentence says "Paris"; does not state 1990 '
                        "(its quote states 1991)")


SUPOR_ZH = {"url": "https://a.example/supor", "title": "苏泊尔业绩", "content": (
    "据快报显示，苏泊尔2018年上半年营收为88.49亿元，较上年同期增长25.27%。公司表示将继续扩大小家电业务。")}
SUPOR_EN = {"url": "https://a.example/supor-en", "title": "Supor results", "content": (
    "According to the flash report, Supor posted revenue of 8.849 billion yuan in the first half of "
    "2018, up 25.27% year on year. The company plans to expand.")}


def test_a_figure_the_record_lacks_where_its_quote_states_another_contradicts_a_chinese_sentence() -> None:
    # reworded, so no word-level spot differs; the record states 2018 and never 2019
    wrong = "在2019年上半年，苏泊尔的营业收入为88.49亿元，同比增长25.27%。"
    result = trace(f"## 业绩\n\n{wrong}\n", [SUPOR_ZH, OTHER])
    assert result.citations == ()
    (u,) = result.unsupported
    assert u.closest is not None and u.closest.score <= 0.3
    said = "its quote states 2018 where the sentence says 2019, which the record does not state"
    assert u.closest.conflict == said
    # the conflict names the figure, so the reason does not repeat it
    assert u.reason == f"no record supports this sentence; the closest contradicts it: {said}"
    right = trace(f"## 业绩\n\n{wrong.replace('2019', '2018')}\n", [SUPOR_ZH, OTHER])
    assert all(u.closest is None or not u.closest.conflict for u in right.unsupported)


def test_chinese_negated_forms_opposite_compounds_and_a_place_at_the_end_are_read() -> None:
    quote = "中国是全球最大的汽车出口国。"
    # a word and its negated form, either way round
    for said in ("不是", "并非"):
        assert quote_conflict(f"中国{said}全球最大的汽车出口国。", quote, "zh") == Conflict(
            "negation", f"{said}全球", "")
    assert quote_conflict(quote, "中国不是全球最大的汽车出口国。", "zh") == Conflict(
        "negation", "", "不是全球")
    assert quote_conflict("该公司没有盈利能力。", "该公司有盈利能力。", "zh") == Conflict(
        "negation", "没有盈利", "")
    # opposites inside longer words: 进口国 and 出口国 differ in 进 and 出
    assert quote_conflict("中国是全球最大的汽车进口国。", quote, "zh") == Conflict(
        "opposite", "进口国", "出口国")
    # the end of both texts flanks another place, person or organisation
    assert quote_conflict("阿里巴巴集团总部位于上海。", "阿里巴巴集团总部位于杭州。", "zh") == Conflict(
        "name", "上海", "杭州")
    # the same thing said otherwise is none of these
    assert quote_conflict("阿里巴巴集团总部位于杭州市。", "阿里巴巴集团总部位于杭州。", "zh") is None
    assert quote_conflict("中国是全球最大的汽车出口国家。", quote, "zh") is None
    assert quote_conflict("中国仍是全球最大的汽车出口国。", quote, "zh") is None


def test_a_chinese_figure_in_trillions_is_no_figure_in_hundred_millions() -> None:
    # 万亿 was read as 万 alone: "47.1万亿元" was 471,000 yuan and met no figure of its sort
    record = {"url": "https://a.example/retail", "title": "统计公报",
              "content": "全国社会消费品零售总额47.1亿元。"}
    wrong = "全国社会消费品零售总额47.1万亿元。"
    result = trace(f"## 消费\n\n{wrong}\n", [record, OTHER])
    assert result.citations == ()
    (u,) = result.unsupported
    assert u.closest is not None and u.closest.conflict == (
        "its quote states CNY 4,710,000,000 where the sentence says CNY 47,100,000,000,000, "
        "which the record does not state")
    right = trace(f"## 消费\n\n{wrong.replace('万亿', '亿')}\n", [record, OTHER])
    assert [c.sentence for c in right.citations] == ["全国社会消费品零售总额47.1亿元。"]


def test_a_range_in_the_quote_states_its_first_figure_in_the_second_ones_unit() -> None:
    record = {"url": "https://a.example/vote", "title": "公投", "content": (
        "赫尔松州行政机构副负责人称，赫尔松州将举行全民公投，至少60-70%的人将投票支持加入俄罗斯联邦。")}
    sentence = "赫尔松州行政机构副负责人表示，赫尔松州将举行全民公投，至少61%的人将投票支持加入俄罗斯联邦。"
    (u,) = trace(f"## 公投\n\n{sentence}\n", [record, OTHER]).unsupported
    assert u.closest is not None
    assert u.closest.conflict == ("its quote states 60%, 70% where the sentence says 61%, "
                                  "which the record does not state")


def test_english_counts_a_figure_the_record_lacks_only_when_asked_to() -> None:
    wrong = "In the first half of 2019, Supor reported revenue of 8.849 billion yuan, up 25.27% year on year."
    report = f"## Results\n\n{wrong}\n"
    # by default, partly supported (dev's English annotations say so): cited
    assert [c.sentence for c in trace(report, [SUPOR_EN, OTHER]).citations] == [wrong]
    said = "its quote states 2018 where the sentence says 2019, which the record does not state"
    both = Tuning(figure_conflicts=("zh", "en"))
    for strict in (TraceOptions(strict_figures=True), TraceOptions(tuning=both)):
        result = trace(report, [SUPOR_EN, OTHER], strict)
        assert result.citations == ()
        (u,) = result.unsupported
        assert u.closest is not None and u.closest.conflict == said
    # the right year is cited either way
    right = report.replace("2019", "2018")
    assert len(trace(right, [SUPOR_EN, OTHER], TraceOptions(strict_figures=True)).citations) == 1


def test_a_chinese_sentence_that_adds_a_noun_its_record_never_states_claims_more_than_it() -> None:
    quote = "2023春节档票房冠军是《满江红》，总票房超过45亿元。"
    added = "2023年春节档首日票房冠军是《满江红》。"
    assert quote_addition(added, quote, quote) == Conflict("addition", "首日", "")
    said = 'the sentence adds "首日", which the record never states'
    assert Conflict("addition", "首日", "").describe() == said
    # stated elsewhere in the record, or no noun added (a particle, an adjective): no addition
    assert quote_addition(added, quote, quote + "首日票房同样领先。") is None
    assert quote_addition("2023年春节档的票房冠军是《满江红》。", quote, quote) is None
    assert quote_addition("2023年春节档非常火爆的票房冠军是《满江红》。", quote, quote) is None
    record = {"url": "https://film.example/box", "title": "春节档", "content": quote}
    result = trace(f"## 票房\n\n{added}\n", [record, OTHER])
    assert result.citations == ()
    (u,) = result.unsupported
    assert u.closest is not None and u.closest.score <= 0.3
    assert u.reason == ('no record supports this sentence; the closest contradicts it: the sentence adds '
                        '"首日", which the record never states')


def test_a_negation_the_alignment_does_not_reach_is_read_on_its_own() -> None:
    # the clauses come in another order, so the word-by-word alignment pairs other words; the
    # quote affirms the very phrase the sentence negates
    sentence = ("Some scholars have not challenged the view that it belongs to Philip II and instead argue "
                "that it may belong to Arrhidaeus, the half-brother of Alexander the Great.")
    quote = ("Tomb II is most commonly associated with Philip II and his widow Cleopatra but many scholars "
             "have challenged this view arguing that it may in fact belong to Arrhidaeus, the "
             "half-brother of Alexander the Great.")
    assert quote_conflict(sentence, quote, "en") == Conflict("negation", "not challenged", "")
    # the sentence denies what a quote that repeats half of it never denies
    got = quote_conflict("The committee did not fund the plan for the new bridge over the river in 2020.",
                         "In 2020 the committee backed the plan for the new bridge over the river.", "en")
    assert got == Conflict("unanswered", "not fund", "")
    assert "never denies" in got.describe()
    assert quote_conflict("首先，这将不有利于缓解房企的偿债压力，降低房企的融资成本。",
                          "发行此类债券，有利于缓解房企偿债压力，降低房企的融资成本。", "zh") is not None


def test_a_denial_is_read_against_a_quote_that_repeats_less_than_half() -> None:
    """A paraphrase quote (under half of the sentence's words in order) on the negated clause
    that never denies what the sentence denies, or states it plainly, contradicts it."""
    sentence = "Upon release, the film was not praised for its visual style and its haunting score."
    assert quote_conflict(sentence, "Reviewers singled out the visual style of the film, calling its "
                                    "score haunting.", "en") == Conflict("unanswered", "not praised", "")
    treaty = "The treaty was never ratified by the Senate, which voted it down in 1920."
    assert quote_conflict(treaty, "The Senate ratified the treaty in 1920 after a long debate.", "en") == \
        Conflict("negation", "never ratified", "")
    # in a conditional clause the quote states a rule, not the fact
    assert quote_conflict(treaty, "If the Senate ratified the treaty, the league would gain its largest "
                                  "member.", "en") is None
    # a denial of a part ("not the sole"), a limiting word, a clause break after the negation
    assert quote_conflict("Childhood experiences are not the sole determinants of psychopathology.",
                          "Genetic factors also shape psychopathology in children.", "en") is None
    assert quote_conflict("Doctors may not have the required accreditation in rural areas.",
                          "Rural areas rely on doctors trained abroad.", "en") is None
    assert quote_conflict("The ABC agreed that its status was not, according to the government, based "
                          "on occupation.", "The government listed its status for other reasons.",
                          "en") is None
    # a denial inside a direct quotation, with a typographic apostrophe ("isn’t")
    assert quote_conflict('He said that "the plan isn’t working at all" and left the meeting early.',
                          "He left the meeting early after criticising the plan.", "en") is None
    # answered in other terms
    assert quote_conflict(sentence, "Critics were unimpressed and rarely mentioned its visual style.",
                          "en") is None
    # a quote that speaks of another clause of the sentence supports that clause; it does not
    # answer or deny the negated one (partial support)
    assert quote_conflict("Upon release, the film was not praised for its visual style, and it earned 40 "
                          "million dollars.", "The film earned 40 million dollars in its first month.",
                          "en") is None
    # Chinese too: a denial of a verb the quote states plainly, or never denies
    assert quote_conflict("他不来自欧洲，以出色的车技和领先的优势夺得了冠军。",
                          "这个冠军是一位年轻的车手，他来自欧洲，名字叫做马克斯。", "zh") == \
        Conflict("negation", "不来自", "")
    assert quote_conflict("这种对话不有助于增强中美宏观政策沟通协调，共同维护全球产业链供应链稳定。",
                          "双方认为，加强中美宏观政策沟通协调意义重大，共同维护全球产业链供应链稳定，有利于中美两国"
                          "和整个世界。", "zh") == Conflict("unanswered", "不有助于", "")
    assert quote_conflict("据报道，海淀区环保局对现场检测未发现有害气体，同时清华已发布停课紧急通知，"
                          "所有实验课全部暂停。", "目前清华已发布停课紧急通知，周五下午所有在化学旧馆的实验课"
                          "全部暂停。", "zh") is None


def test_a_trace_reports_the_denial_its_closest_quote_never_makes() -> None:
    record = {"url": "https://film.example/review", "title": "Review", "content": (
        "The film opened in March to strong reviews. Reviewers singled out the visual style of the film, "
        "calling its score haunting. It earned 40 million dollars in its first month.")}
    result = trace("# Film\n\nUpon release, the film was not praised for its visual style and its haunting "
                   "score.\n", [record, OTHER])
    assert not result.citations
    closest = result.unsupported[0].closest
    assert closest is not None
    assert closest.conflict == 'the sentence denies what its quote never denies ("not praised")'


def test_a_negation_answered_in_other_terms_or_quoted_speech_is_no_conflict() -> None:
    # the quote denies too, in other words: "unable", an "un-" word, the opposite, "lack", "缺乏"
    assert quote_conflict("Patients can not walk without help after the surgery for six weeks.",
                          "Patients are unable to walk without help after the surgery for six weeks.",
                          "en") is None
    assert quote_conflict("The drug is not available in most pharmacies across the country.",
                          "The drug is unavailable in most pharmacies across the country.", "en") is None
    assert quote_conflict("The team did not win the final match of the season in Madrid.",
                          "The team lost the final match of the season in Madrid.", "en") is None
    assert quote_conflict("该地区的农村学校没有足够的合格教师和教学设备。",
                          "该地区的农村学校缺乏足够的合格教师和教学设备。", "zh") is None
    # a negation inside a direct quotation: the record may paraphrase an idiom
    assert quote_conflict('He regretted his vote, saying that "he hasn\'t done anything" and he is "taking '
                          'care of the people he\'s supposed to be getting rid of".',
                          '"All he\'s done," he said, "is shown that he\'s taking care of the people '
                          'he\'s supposed to be getting rid of."', "en") is None
    # a Chinese negation of a noun says that a thing is absent; the quote may say how it is
    assert quote_conflict("而城商行几乎没有投行部，即使有，也只是负责投资其他银行发行的理财。",
                          "而城商行的投行部，即使有，也只是负责投资其他银行发行的理财。", "zh") is None
    # a text that states the negated word plainly as well may be contrasting two things
    assert quote_conflict("The federal law doesn't require employers to pay for mileage, but some states "
                          "require employers to pay.",
                          "Some states require employers to pay for mileage and other costs.", "en") is None


def test_a_sentence_that_denies_what_its_record_affirms_is_not_cited() -> None:
    record = {"url": "https://council.example/bridge", "title": "Council minutes", "content": (
        "In 2020 the committee backed the plan for the new bridge over the river. Work starts in spring.")}
    report = ("# Bridge\n\nThe committee did not fund the plan for the new bridge over the river in 2020.\n\n"
              "In 2020 the committee backed the plan for the new bridge over the river.\n")
    result = trace(report, [record, OTHER])
    assert [c.sentence for c in result.citations] == [
        "In 2020 the committee backed the plan for the new bridge over the river."]
    (u,) = result.unsupported
    assert u.closest is not None and u.closest.score <= 0.3
    assert u.closest.conflict == 'the sentence denies what its quote never denies ("not fund")'


def test_another_head_of_a_name_or_another_king_of_a_number_is_another_name() -> None:
    assert quote_conflict("Kinshasa, the capital of the Democratic Republic of Ghana, deployed robots.",
                          "Kinshasa, the capital of the Democratic Republic of Congo, deployed robots.",
                          "en") == Conflict("name", "Ghana", "Congo")
    assert quote_conflict("The wound matches accounts of an injury Alexander II sustained in battle in 339.",
                          "The wound matches accounts of an injury Philip II sustained in battle in 339.",
                          "en") == Conflict("name", "Alexander", "Philip")
    # a company's suffix, and a title before the same surname, are forms of one name
    assert quote_conflict("The patents were bought by Apple Inc. in 2012 for two million dollars.",
                          "The patents were bought by Apple Corporation in 2012 for two million dollars.",
                          "en") is None
    assert quote_conflict("The bill was signed by Barack Obama in the Oval Office in 2010.",
                          "The bill was signed by President Obama in the Oval Office in 2010.", "en") is None


def test_another_chinese_proper_name_before_an_aligned_run_is_another_name() -> None:
    # what comes before the names differs entirely, so no aligned word flanks them on that side
    assert quote_conflict("然而，巴黎和加拿大的大部分高等院校要求外国学生申请时提供托福考试成绩。",
                          "至今为止，美国和加拿大共有2300多所院校规定，外国学生申请时必须提供托福考试成绩。",
                          "zh") == Conflict("name", "巴黎", "美国")
    assert quote_conflict("据报道，张伟和李娜的研究团队发现了新的化合物。",
                          "据新华社报道，王芳和李娜的研究团队发现了新的化合物。",
                          "zh") == Conflict("name", "张伟", "王芳")
    # a fuller form of the same name, or an abbreviation of it, is no other name
    assert quote_conflict("长江大桥于1957年建成通车。", "武汉长江大桥于1957年建成通车，是长江上第一座大桥。",
                          "zh") is None
    assert quote_conflict("中科院的研究人员发现了一种新的材料。", "中国科学院的研究人员发现了一种新的材料。",
                          "zh") is None
    assert quote_conflict("港府公布了新的住房政策，以解决住房短缺问题。",
                          "香港政府公布了新的住房政策，以解决住房短缺问题。", "zh") is None
    # the same names in another order are no other name
    assert quote_conflict("北京和上海的大部分高校要求提供成绩。",
                          "上海和北京的大部分高校要求提供成绩。", "zh") is None


def test_a_negation_paraphrasing_little_or_none_is_no_conflict() -> None:
    """"副作用轻微" ("the side effects are mild") may be what "不会引起严重的副作用" paraphrases, even
    where the minimising word stands after the part the two texts share; the same quote without it
    still contradicts the sentence."""
    sentence = "临床试验表明，该药物不会引起严重的副作用。"
    assert quote_conflict(sentence, "临床试验表明，该药物的副作用轻微，患者耐受良好。", "zh") is None
    assert quote_conflict(sentence, "临床试验表明，该药物会引起严重的副作用。", "zh") == \
        Conflict("negation", "不会引起", "")
    english = "The trial showed that the drug does not cause serious side effects in adults."
    assert quote_conflict(english, "The trial showed that side effects of the drug in adults were mild "
                                   "and transient.", "en") is None
    assert quote_conflict(english, "The trial showed that the drug causes serious side effects in adults.",
                          "en") == Conflict("negation", "does not cause", "")


def test_a_negation_that_opens_an_idiom_denies_nothing() -> None:
    for sentence, quote in (
        ("Applications must be submitted no later than 30 June 2024 to the county office.",
         "Applications must be submitted by 30 June 2024 to the county office."),
        ("The hall holds no more than 200 guests at a time for weddings.",
         "The hall holds at most 200 guests at a time for weddings."),
        ("The team was led by none other than the former coach John Smith.",
         "The team was led by the former coach John Smith."),
        ("The drug is not unlike aspirin in its effect on blood clotting.",
         "The drug is similar to aspirin in its effect on blood clotting."),
        ("The bridge was not completed until 1932, two years behind schedule.",
         "The bridge was completed in 1932, two years behind schedule."),
    ):
        assert quote_conflict(sentence, quote, "en") is None, sentence
    # "no longer" without "than" still denies, and so does a negation before "more than"
    assert quote_conflict("The shop no longer sells newspapers or magazines to its customers.",
                          "The shop sells newspapers and magazines to its customers.", "en") == Conflict(
        "negation", "no longer sells", "")
    assert quote_conflict("The store does not sell more than ten brands of coffee in the city.",
                          "The store sells more than ten brands of coffee in the city.", "en") == Conflict(
        "negation", "does not sell", "")


def test_two_spellings_of_one_english_name_are_no_swap_but_two_close_names_are() -> None:
    for said, quoted in (("Organization", "Organisation"), ("Tchaikovsky", "Tchaikovski"),
                         ("Medicine", "Med")):
        assert quote_conflict(f"The paper by the World Health {said} appeared in March 2020 in print.",
                              f"The paper by the World Health {quoted} appeared in March 2020 in print.",
                              "en") is None, said
    assert quote_conflict("The team from Austria won the final match in Vienna last year.",
                          "The team from Australia won the final match in Vienna last year.",
                          "en") == Conflict("name", "Austria", "Australia")
    # a state's abbreviation ending both texts
    assert quote_conflict("The company is headquartered in Cupertino, California.",
                          "The company is headquartered in Cupertino, Calif.", "en") is None


def test_another_name_ending_both_english_texts_is_a_swap() -> None:
    assert quote_conflict(
        "Meridian plans to fund the purchase with cash on hand and a new $1.5 billion term loan from "
        "Wells Fargo and Citigroup.",
        "Meridian plans to finance the purchase with cash on hand and a new $1.5 billion term loan from "
        "Wells Fargo and Barclays.", "en") == Conflict("name", "Citigroup", "Barclays")
    assert quote_conflict("The paper was published in the journal Nature.",
                          "The paper was published in the journal Science.", "en") == Conflict(
        "name", "Nature", "Science")
    # another form of the same name, or more of it, is none
    for sentence, quote in (
        ("The study was funded by the National Institutes of Health.", "The study was funded by the NIH."),
        ("The bill was signed into law by President Biden.", "The bill was signed into law by Joe Biden."),
        ("The paper was published in Nature Astronomy.", "The paper was published in Nature."),
        ("The film was directed by Christopher Nolan.", "The film was directed by Nolan."),
    ):
        assert quote_conflict(sentence, quote, "en") is None, sentence


def test_a_negative_form_of_the_negated_word_and_chinese_times_that_say_the_same_are_no_conflict() -> None:
    assert quote_conflict("Without treatment, the infection can spread to the kidneys within days.",
                          "If untreated, the infection can spread to the kidneys within days.", "en") is None
    assert quote_conflict("截至2023年底，该市常住人口达到1200万人。",
                          "截至2023年末，该市常住人口为1200万。", "zh") is None
    assert quote_conflict("截至2023年底，该市常住人口达到1200万人。", "截至2023年初，该市常住人口为1200万。",
                          "zh") == Conflict("name", "年底", "年初")


def test_a_negation_the_record_states_next_to_the_quote_is_answered() -> None:
    sentence = "The committee did not fund the plan for the new bridge over the river in 2020."
    quote = "In 2020 the committee discussed the plan for the new bridge over the river."
    assert quote_conflict(sentence, quote, "en") == Conflict("unanswered", "not fund", "")
    around = "Members argued for hours.\nIt refused the money."
    assert quote_conflict(sentence, quote, "en", around=around) is None
    # through a trace: the record's next sentence answers it, so the record may support the sentence
    record = {"url": "https://council.example/minutes", "title": "Minutes", "content": (
        "Members met on Monday. " + quote + " It refused the money. Work on the school goes on.")}
    support = explain_support(sentence, [record, OTHER], 0)
    assert support is not None and support.match != "contradicted"


def test_a_negation_next_to_the_quote_answers_only_when_it_speaks_of_the_negated_clause() -> None:
    sentence = "The committee did not fund the plan for the new bridge over the river in 2020."
    quote = "In 2020 the committee discussed the plan for the new bridge over the river."
    # a negation about something else, next to the quote, leaves the denial unanswered
    for around in ("Members met on Monday.\nNo minutes were kept of the school budget.",
                   "Members met on Monday.\nThe mayor, who was not present, sent apologies by letter."):
        got = quote_conflict(sentence, quote, "en", around=around)
        assert got == Conflict("unanswered", "not fund", ""), around
    # near the negated word, or a word of its clause, or in a sentence about the quote's subject
    for around in ("Members met on Monday.\nIn the end the council did not fund it.",
                   "Members met on Monday.\nThe plan got no money that year.",
                   "Members met on Monday.\nThey declined the money."):
        assert quote_conflict(sentence, quote, "en", around=around) is None, around


def test_a_denying_word_both_texts_hold_answers_neither_negation() -> None:
    # "little" denies in other terms, but the sentence has it too: it is no answer to "had not"
    assert quote_conflict("Composers paid little attention to the chorus, which had not a more prominent "
                          "role in Florentine court productions.",
                          "Composers paid little attention to the chorus, which had played a more prominent "
                          "role in Florentine court productions.", "en") is not None
    # one only the quote holds still answers it
    assert quote_conflict("Composers paid attention to the chorus, which had not a more prominent role in "
                          "Florentine court productions.",
                          "Composers paid attention to the chorus, which lacked a more prominent role in "
                          "Florentine court productions.", "en") is None


def test_an_opposite_the_alignment_does_not_reach_is_read_unless_its_clause_is_about_another_thing() -> None:
    assert quote_conflict("The population increased sharply in the northern provinces during the 1990s.",
                          "During the 1990s, in the northern provinces, the population decreased sharply.",
                          "en") == Conflict("opposite", "increased", "decreased")
    # the quote's clause speaks of another region or place than the sentence
    assert quote_conflict("今年北方地区降水增加，气温偏高。",
                          "今年南方地区降水减少，北方地区降水偏多，气温偏高。", "zh") is None
    assert quote_conflict("今年广东降水增加，气温偏高。",
                          "今年广西降水减少，广东降水偏多，气温偏高。", "zh") is None
    assert quote_conflict("Sales increased strongly in the northern region last year.",
                          "Last year, sales in the northern region climbed strongly, while sales decreased "
                          "strongly in the Southern Cone.", "en") is None
    # the next sentence's capitalised first word is no name of the clause
    assert quote_conflict("The population increased sharply in the northern provinces during the 1990s.",
                          "During the 1990s, in the northern provinces, the population decreased sharply. "
                          "Snow in the Southern Alps fell.",
                          "en") == Conflict("opposite", "increased", "decreased")
    # the sentence states both directions itself
    assert quote_conflict("肌肉力量会有所减损，但之后如果恢复训练，想要达到之前相同的水平会容易很多。",
                          "肌肉力量都有所减损。但之后如果恢复训练，想要达到此前相同的水平，则会容易很多。",
                          "zh") is None


def test_a_clause_the_sentence_adds_is_no_negation_of_the_quote() -> None:
    # "with no pupils" adds a fact; the quote states neither it nor its opposite
    sentence = "The composer lived alone in a small flat in Vienna with no pupils in his later years."
    assert quote_conflict(sentence, "The composer lived alone in a small flat in Vienna in his later years, "
                          "and he did not remarry.", "en") is None
    # the bare negation of what the quote states still is one
    got = quote_conflict(sentence, "The composer lived alone in a small flat in Vienna with pupils in his "
                         "later years, and he did not remarry.", "en")
    assert got == Conflict("negation", "no pupils", "")


def test_a_restricting_word_next_to_the_spot_answers_a_negation() -> None:
    sentence = "The vaccine does not contain live virus, so it is safe for people with weak immune systems."
    assert quote_conflict(sentence, "The vaccine contains only inactivated virus, so it is safe for people "
                          "with weak immune systems.", "en") is None
    assert quote_conflict(sentence, "The vaccine contains live virus, so it is safe for people with weak "
                          "immune systems.", "en") == Conflict("negation", "does not contain", "")


def test_chinese_words_with_a_negating_character_that_deny_nothing_answer_no_negation() -> None:
    # 非常 (very) is no denial: the quote states 公布 plainly
    got = quote_conflict("该公司没有公布这次收购的具体条款和价格。",
                         "该公司非常低调地公布了这次收购的具体条款和价格。", "zh")
    assert got == Conflict("negation", "没有公布", "")


def test_a_word_with_less_made_from_a_short_stem_is_its_negative_form() -> None:
    sentence = "Penguins cannot fly, but they are excellent swimmers that hunt fish underwater."
    assert quote_conflict(sentence, "Penguins are flightless birds and excellent swimmers that hunt fish "
                          "underwater.", "en") is None
    assert quote_conflict(sentence, "Penguins are large birds and excellent swimmers that hunt fish "
                          "underwater.", "en") == Conflict("unanswered", "cannot fly", "")


def test_an_acronym_a_joined_spelling_or_another_name_of_a_country_is_no_swap() -> None:
    for said, quoted in (("US", "United States"), ("WHO", "World Health Organization"),
                         ("JPMorgan", "J.P. Morgan"), ("UK", "Britain"), ("America", "USA"),
                         ("Myanmar", "Burma")):
        assert quote_conflict(f"The report by the {said} was released in Geneva in May 2020 to the press.",
                              f"The report by the {quoted} was released in Geneva in May 2020 to the press.",
                              "en") is None, said
    for said, quoted in (("US", "UK"), ("America", "Canada"), ("IMF", "WTO")):
        text = "The report by the {} was released in Geneva in May 2020 to the press."
        got = quote_conflict(text.format(said), text.format(quoted), "en")
        assert got == Conflict("name", said, quoted), said


def test_faithful_negative_paraphrases_the_check_reads_as_agreeing() -> None:
    """A sentence that denies what its quote puts in other terms: a restricting word ("only"), an
    impossibility, a rejection, a delay (the restricting word next to the spot and the negative
    form "flightless" have tests of their own above). (Other faithful negative paraphrases,
    whose quote uses a plain word such as "single" or "endemic", are still read as unanswered
    denials: docs/quality.md.)"""
    for sentence, quote, lang in (
        ("The drug was not approved by the FDA for use in children under twelve years of age.",
         "The FDA has approved the drug only for patients aged twelve and older.", "en"),
        ("The bridge was not completed until 1932 because of funding problems during the Depression.",
         "Funding problems during the Depression delayed the completion of the bridge to 1932.", "en"),
        ("Early settlers could not grow wheat in the region because the soil was too acidic.",
         "The acidic soil of the region made wheat cultivation impossible for early settlers.", "en"),
        ("The treaty was never ratified by the Senate, so the United States did not join the league.",
         "The Senate rejected the treaty, and the United States stayed out of the league.", "en"),
        ("不是所有患者都需要手术治疗，多数可以通过药物控制症状。",
         "多数患者可以通过药物控制症状，只有少数患者需要手术治疗。", "zh"),
        # words that deny in other terms: kept confidential, endemic, a flop, delayed, died
        ("The company did not disclose the terms of the acquisition of the startup in its filing.",
         "Terms of the startup acquisition were kept confidential in the company filing.", "en"),
        ("The species is not found outside Madagascar, where it lives in dry forests of the west.",
         "The species is endemic to Madagascar, where it inhabits the dry forests of the west.", "en"),
        ("The film did not perform well at the box office, earning only $2 million against a $30 million "
         "budget.", "The film was a box office flop, earning $2 million against a $30 million budget.", "en"),
        ("The patient did not survive the surgery, according to the hospital statement.",
         "The patient died during the surgery, the hospital said in a statement.", "en"),
        ("该项目并未按期完工，直到2015年才正式投入使用。", "该项目延期完工，于2015年正式投入使用。", "zh"),
    ):
        assert quote_conflict(sentence, quote, lang) is None, sentence


def test_a_chinese_negation_before_a_place_denies_the_verb_after_it() -> None:
    # the aligned run after 没有 is only a place (在议会); what it denies, 获得通过, the quote does not repeat
    assert quote_conflict("该法案没有在议会获得通过。", "该法案在议会表决中被否决。", "zh") is None
    assert quote_conflict("该法案没有在议会获得通过。", "该法案在议会获得通过。", "zh") == Conflict(
        "negation", "没有在", "")


def test_no_longer_negates_the_word_after_it() -> None:
    sentence = "The company no longer manufactures typewriters at its Ohio plant."
    affirms = "The company manufactures typewriters at its Ohio plant in large numbers."
    assert quote_conflict(sentence, affirms, "en") == Conflict("negation", "no longer manufactures", "")
    other = "The company opened a new typewriter line at its Ohio plant last spring."
    assert quote_conflict(sentence, other, "en") == Conflict("unanswered", "no longer manufactures", "")


def test_a_rounded_or_hedged_figure_is_stated_by_the_value_it_stands_for() -> None:
    record = {"url": "https://a.example/byd", "title": "比亚迪公告",
              "content": "比亚迪公告，2023年全年新能源汽车销量为302.44万辆，同比增长61.9%，稳居全球第一。"}

    def cited(sentence: str) -> bool:
        return bool(trace(f"## 销量\n\n{sentence}\n", [record, OTHER]).citations)

    for near in ("超过300万辆", "约300万辆", "302.4万辆", "302万辆", "300多万辆"):
        assert cited(f"比亚迪2023年新能源汽车销量为{near}。"), near
    assert cited("比亚迪2023年新能源汽车销量同比增长约62%。")
    for far in ("300万辆", "超过320万辆", "不到300万辆", "约290万辆"):
        assert not cited(f"比亚迪2023年新能源汽车销量为{far}。"), far
    assert quote_conflict("比亚迪销量约300万辆。", "比亚迪销量302.44万辆。", "zh") is None
    assert quote_conflict("比亚迪销量300万辆。", "比亚迪销量302.44万辆。", "zh") == Conflict(
        "figure", "300", "302.44")


def test_year_on_year_for_month_on_month_and_points_for_percent_are_read() -> None:
    assert quote_conflict("一季度GDP环比增长6.3%。", "一季度GDP同比增长6.3%。", "zh") == Conflict(
        "opposite", "环比", "同比")
    assert quote_conflict("全年失业率最高值5.2%。", "全年失业率平均值5.2%。", "zh") == Conflict(
        "opposite", "最高值", "平均值")
    record = {"url": "https://a.example/grain", "title": "统计公报",
              "content": "2023年全国粮食总产量13908亿斤，比上年增长1.3%。"}
    assert not trace("## 粮食\n\n2023年全国粮食总产量13908亿斤，比上年增长1.3个百分点。\n",
                     [record, OTHER]).citations
    assert trace("## 粮食\n\n2023年全国粮食总产量13908亿斤，比上年增长1.3%。\n", [record, OTHER]).citations


def test_a_quote_that_only_asks_denies_or_reports_a_claim_does_not_state_it() -> None:
    from tracer.conflict import framed

    quote = "A large review found no link. There is no evidence that the vaccine causes autism in children."
    assert framed("The vaccine causes autism in children.", quote, "en") == Conflict(
        "framed", "", "There is no evidence that")
    denied = "The company denied that it had laid off 300 workers."
    assert framed("The company had laid off 300 workers.", denied, "en") is not None
    assert framed("央行将在下月降息。", "市场关注央行是否将在下月降息。", "zh") is not None
    # the sentence carries the frame itself, or the quote states the fact plainly
    assert framed("Scientists are investigating whether the drug reduces the risk.",
                  "Scientists are investigating whether the drug reduces the risk.", "en") is None
    said = "Regulators said that the vaccine is safe for children."
    assert framed("The vaccine is safe for children.", said, "en") is None
    # an exact quote inside the frame is not cited either
    records = [{"url": "https://a.example/review", "title": "Review", "content": quote}, OTHER]
    result = trace("## Vaccines\n\nThe vaccine causes autism in children.\n", records)
    assert result.citations == ()
    assert result.unsupported[0].closest is not None and result.unsupported[0].closest.conflict.startswith(
        "its quote only reports it as a question or a claim")


def test_chinese_frames_in_their_natural_order_and_a_question_do_not_state_the_claim() -> None:
    from tracer.conflict import asked, framed

    claim = "比亚迪2024年海外销量超过41万辆。"
    fact = claim[:-1]
    unclear = "尚不清楚比亚迪2024年海外销量是否超过41万辆。"
    for quote in ("没有证据表明" + claim, unclear, "目前尚无证据显示" + claim):
        assert framed(claim, quote, "zh") is not None, quote
    assert asked(claim, fact + "？", "zh") == Conflict("framed", "", fact + "？")
    # stated plainly, answered, or stated beside the question: no conflict
    for quote in (claim, fact + "吗？是的。", fact + "？数据显示，" + claim,
                  "最佳答案：海外市场拓展顺利，" + fact + "，欧洲增长最快，那么国内份额是多少?"):
        assert framed(claim, quote, "zh") is None and asked(claim, quote, "zh") is None, quote
    # answered after the question, in the quote or in the record's next words
    assert asked(claim, fact + "？数据显示，2024年比亚迪海外共售出41.7万辆，同比大增。", "zh") is None
    assert asked(claim, fact + "？", "zh", "答：是的。") is None
    assert asked(claim, fact + "？", "zh", "分析师意见不一。") is not None
    question = "Did BYD sell more than 410,000 vehicles overseas in 2024?"
    sentence = "BYD sold more than 410,000 vehicles overseas in 2024."
    assert asked(sentence, question + " Analysts disagree.", "en") is not None
    # stated after the question, in a last sentence with no full stop
    assert asked(sentence, question + " Analysts disagree. In fact " + sentence[:-1], "en") is None
    assert asked(sentence, question + " Yes.", "en") is None and asked(question, question, "en") is None
    records = [{"url": "https://a.example/q", "title": "Q", "content": unclear},
               {"url": "https://b.example/o", "title": "O", "content": "全年社会消费品零售总额487895亿元。"}]
    assert trace(claim, records).citations == ()


def test_english_words_that_move_a_figure_the_other_way_and_negative_adjectives_are_opposites() -> None:
    for said, quoted in (("lowered", "raised"), ("plunged", "surged"), ("cut", "boosted"),
                         ("slowed", "accelerated"), ("downgraded", "upgraded")):
        got = quote_conflict(f"The company {said} its full-year forecast to $2 billion.",
                             f"The company {quoted} its full-year forecast to $2 billion.", "en")
        assert got == Conflict("opposite", said, quoted), said
    assert quote_conflict("The contract was declared invalid by the court.",
                          "The contract was declared valid by the court.", "en") == Conflict(
        "opposite", "invalid", "valid")
    assert quote_conflict("The firm hired 300 workers in March.", "The firm laid off 300 workers in March.",
                          "en") == Conflict("opposite", "hired", "laid")
    # words of one direction say the same; "inflammable" means "flammable"
    assert quote_conflict("Revenue rose 5% to $3 billion.", "Revenue jumped 5% to $3 billion.", "en") is None
    assert quote_conflict("The gas is inflammable at room temperature.",
                          "The gas is flammable at room temperature.", "en") is None


def test_up_and_down_beside_a_figure_are_opposites() -> None:
    assert quote_conflict("Tesla delivered 462,890 vehicles in Q3 2024, down 6.4% from the previous quarter.",
                          "Tesla delivered 462,890 vehicles in the third quarter of 2024, up 6.4% from the "
                          "previous quarter.", "en") == Conflict("opposite", "down", "up")
    # a phrasal verb's particle elsewhere is no direction of the figure
    assert quote_conflict("Shares were up 3% after the company set up a new plant.",
                          "Shares were up 3% after the company set up a new plant in Texas.", "en") is None


def test_chinese_words_that_move_a_figure_the_other_way_are_opposites() -> None:
    for said, quoted in (("下滑", "增长"), ("萎缩", "增长"), ("上涨", "下滑"), ("回升", "回落"),
                         ("提升", "下滑")):
        got = quote_conflict(f"公司2024年净利润同比{said}12%。", f"公司2024年净利润同比{quoted}12%。", "zh")
        assert got is not None and got.kind == "opposite", (said, got)
    # words of one direction say the same
    for said, quoted in (("下滑", "下降"), ("增长", "上涨"), ("收窄", "缩小")):
        got = quote_conflict(f"公司2024年净利润同比{said}12%。", f"公司2024年净利润同比{quoted}12%。", "zh")
        assert got is None or got.kind != "opposite", (said, got)
    # a fall that widens, a sale seen from the buyer's side, a negative profit: the same
    assert quote_conflict("A股跌幅扩大至3%。", "A股下跌3%。", "zh") is None
    assert quote_conflict("联想从IBM收购了PC业务。", "IBM将PC业务出售给联想。", "zh") is None
    assert quote_conflict("公司2023年净利润为-2亿元。", "公司2023年净亏损2亿元。", "zh") is None
    # but the same subject buying or selling, a profit or a loss, widening or narrowing: opposites
    for sentence, quote in (("阿里巴巴于2023年出售了饿了么的股份。", "阿里巴巴于2023年收购了饿了么的股份。"),
                            ("公司2024年净利润为5亿元。", "公司2024年净亏损为5亿元。"),
                            ("公司2024年亏损同比收窄20%。", "公司2024年亏损同比扩大20%。"),
                            ("公司2024年市场份额扩大至12%。", "公司2024年市场份额下降至12%。")):
        got = quote_conflict(sentence, quote, "zh")
        assert got is not None and got.kind == "opposite", (sentence, got)
    # at the end of both texts too, and not where a figure is negative
    for sentence, quote in (("2023年公司经营亏损扩大。", "2023年公司经营亏损收窄。"),
                            ("公司2024年实现净亏损。", "公司2024年实现净利润。")):
        got = quote_conflict(sentence, quote, "zh")
        assert got is not None and got.kind == "opposite", (sentence, got)
    assert quote_conflict("公司2024年净亏损为5亿元。", "公司2024年净利润为-5亿元。", "zh") is None


def test_chinese_text_with_another_latin_code_or_a_denied_plan_is_a_conflict() -> None:
    for sentence, quote, kind in (
            ("英伟达H100芯片的售价约为3万美元。", "英伟达A100芯片的售价约为3万美元。", "name"),
            ("该模型基于GPT-4开发。", "该模型基于GPT-4o开发。", "name"),
            ("公司没有计划在2025年扩建工厂。", "公司计划在2025年扩建工厂。", "negation")):
        got = quote_conflict(sentence, quote, "zh")
        assert got is not None and got.kind == kind, (sentence, got)
    # the same code written otherwise
    assert quote_conflict("该模型基于GPT4开发。", "该模型基于GPT-4开发。", "zh") is None
    assert quote_conflict("该模型基于gpt-4开发。", "该模型基于GPT-4开发。", "zh") is None
    # a model with its maker's name, a ticker for a name: the same thing
    assert quote_conflict("该模型基于R1开发。", "该模型基于DeepSeek-R1开发。", "zh") is None
    assert quote_conflict("分析师看好TSLA股价。", "分析师看好Tesla股价。", "zh") is None
    got = quote_conflict("英伟达B200芯片的售价约为3万美元。", "英伟达GB200芯片的售价约为3万美元。", "zh")
    assert got is not None and got.kind == "name"
    assert quote_conflict("英特尔14900K处理器售价约4000元。", "英特尔i9-14900K处理器售价约4000元。",
                          "zh") is None


def test_another_name_opening_an_english_sentence_is_a_swap_when_the_record_shows_it_is_a_name() -> None:
    record = ("Pfizer developed the vaccine together with the German company BioNTech. "
              "The shot made by Pfizer was approved in 2020.")
    quote = record.split(". ")[0] + "."
    assert quote_conflict("Moderna developed the vaccine together with the German company BioNTech.", quote,
                          "en", record=record) == Conflict("name", "Moderna", "Pfizer")
    # without the record's evidence, or for common words, the opening word is no name
    assert quote_conflict("Moderna developed the vaccine together with the German company BioNTech.", quote,
                          "en") is None
    study = "Scientists found that the drug lowered blood pressure. Other scientists agreed."
    assert quote_conflict("Researchers found that the drug lowered blood pressure.", study.split(". ")[0],
                          "en", record=study) is None


def test_another_name_opening_an_english_sentence_is_a_swap_when_one_is_written_as_only_names_are() -> None:
    # "BYD", "OpenAI", "McKinsey": a capital after the first letter; the other side is written in
    # capitals by neither text
    byd = "BYD cut the starting price of its Seagull hatchback to 69,800 yuan in February 2024."
    assert quote_conflict(byd.replace("BYD", "Tesla"), byd, "en", record=byd) == Conflict(
        "name", "Tesla", "BYD")
    gpt = "OpenAI launched the GPT Store in January 2024."
    assert quote_conflict(gpt.replace("OpenAI", "Meta"), gpt, "en", record=gpt) == Conflict(
        "name", "Meta", "OpenAI")
    assert quote_conflict(gpt, gpt.replace("OpenAI", "Meta"), "en", record=gpt.replace("OpenAI", "Meta")) \
        == Conflict("name", "OpenAI", "Meta")
    # two letters stand for a demonym as often as not; a word the texts write in lower case is no name
    spent = "US consumers spent $9.8 billion online on Black Friday."
    assert quote_conflict(spent.replace("US", "American"), spent, "en", record=spent) is None
    study = "NASA scientists found that the ice sheet lost mass. Other scientists agreed."
    assert quote_conflict("Researchers found that the ice sheet lost mass.", "Scientists found that the ice "
                          "sheet lost mass.", "en", record=study.replace("NASA s", "S")) is None


def test_another_name_opening_an_english_sentence_is_a_swap_when_another_record_shows_it_is_one() -> None:
    toyota = {"url": "https://a.example/toyota", "title": "Toyota results",
              "content": "Toyota sold 11.2 million vehicles in 2023, remaining the world's best-selling "
                         "carmaker for the fourth year in a row."}
    market = {"url": "https://b.example/market", "title": "Car market",
              "content": "Japanese carmakers gained share in Asia, led by Toyota and Honda, while European "
                         "brands lost ground in China."}
    report = "Honda sold 11.2 million vehicles in 2023, remaining the world's best-selling carmaker.\n"
    out = trace(report, [toyota, market])
    assert not out.citations
    (gap,) = out.unsupported
    assert gap.closest is not None and gap.closest.conflict and "Honda" in gap.closest.conflict
    # the right name is cited, and a common word opening both texts is no name
    assert trace(report.replace("Honda", "Toyota"), [toyota, market]).citations
    # a name only the quote's side is written as elsewhere ("hosted by Qatar"): no evidence enough
    talks = "Qatar mediated the ceasefire talks in May."
    assert quote_conflict(talks.replace("Qatar", "Doha"), talks, "en", record=talks,
                          written=lambda w: (False, w == "Qatar")) is None
    # a capital standing for its country, a city's old name: one name
    for said, quoted in (("Beijing", "China"), ("Mumbai", "Bombay")):
        assert quote_conflict(f"{said} announced export controls on gallium in July 2023.",
                              f"{quoted} announced export controls on gallium in July 2023.", "en",
                              record=f"Officials said {said} and {quoted} agreed.",
                              written=lambda w: (False, True)) is None
    study = {"url": "https://c.example/study", "title": "Blood pressure trial",
             "content": "Scientists found that the new drug lowered blood pressure in older adults. "
                        "The trial was run by Oxford researchers and funded by Wellcome."}
    out = trace("Researchers found that the new drug lowered blood pressure in older adults.\n",
                [study, market])
    assert [s.url for c in out.citations for s in c.sources] == ["https://c.example/study"]


def test_a_chinese_bound_the_other_way_is_a_conflict() -> None:
    for said, quoted in (
            ("该药物获准用于65岁以下成年人。", "该药物获准用于65岁以上成年人，不建议孕妇使用。"),
            ("年收入不到10万元的家庭需缴纳该税。", "年收入超过10万元的家庭需缴纳该税，税率为3%。"),
            ("排量在1.6升以上的乘用车可享受减半征收购置税。",
             "排量在1.6升以下的乘用车可享受减半征收购置税。")):
        got = quote_conflict(said, quoted, "zh")
        assert got is not None and got.kind == "opposite", (said, got)
    # the same bound in other words is none
    assert quote_conflict("年收入超过10万元的家庭需缴纳该税。", "年收入高于10万元的家庭需缴纳该税。",
                          "zh") is None


def test_a_claim_the_record_reports_as_denied_or_rumoured_is_framed() -> None:
    from tracer.conflict import framed
    said = "The government will raise the retirement age to 67."
    for quote in ("The minister denied reports that the government will raise the retirement age to 67.",
                  "Reports said the government will raise the retirement age to 67, but the ministry "
                  "called it a fabrication.",
                  "Officials refuted suggestions that the government will raise the retirement age to 67."):
        got = framed(said, quote, "en")
        assert got is not None and got.kind == "framed", quote
    for quote in ("养老金改革讨论仍在继续。网传政府将把退休年龄提高到67岁，人社部回应称该消息不实。",
                  "针对政府将把退休年龄提高到67岁的说法，官方辟谣称系谣言。",
                  "据传政府将把退休年龄提高到67岁。"):
        got = framed("政府将把退休年龄提高到67岁。", quote, "zh")
        assert got is not None and got.kind == "framed", quote
    # a rumour by other words: "有消息称", "传闻称，", what spreads online; a company's claim
    for said, quote in (
            ("监管部门将对外卖平台佣金设定统一的15%上限。",
             "此前有消息称，监管部门将对外卖平台佣金设定统一的15%上限。"),
            ("成都一环路以内老旧片区将于2025年整体拆迁。",
             "近日，网络上流传“成都一环路以内老旧片区将于2025年整体拆迁”的消息，引发市民关注。"),
            ("欧洲私募基金哈尔登资本曾以更高报价参与竞购凯斯特纳。",
             "此前有市场传闻称，欧洲私募基金哈尔登资本（Halden Capital）曾以更高报价参与竞购。"),
            ("江浩已与一家国际运动品牌签约。",
             "有媒体报道称，江浩已与一家国际运动品牌签约，但浙江队对此未予置评。")):
        got = framed(said, quote, "zh")
        assert got is not None and got.kind == "framed", quote
    got = framed("The startup's battery can charge to 80% in five minutes.",
                 "The startup claims its battery can charge to 80% in five minutes.", "en")
    assert got is not None and got.quote_says == "The startup claims", got
    # ... a time between the verb and its "that"
    duty = "the tower had three controllers on duty that night."
    for quote, frame in ((f"The union claimed on Monday that {duty}", "The union claimed on Monday that"),
                         (f"Activists alleged last week that {duty}", "Activists alleged last week that")):
        got = framed(duty.capitalize(), quote, "en")
        assert got is not None and got.quote_says == frame, got
    assert framed(duty.capitalize(), f"The board said on Monday that {duty}", "en") is None
    # ... but "claims" the noun, official news, and a claim the sentence makes a claim stay
    assert framed("Insurance claims rose 5% in 2023 across the country.",
                  "Insurance claims rose 5% in 2023 across the country.", "en") is None
    assert framed("The startup claims its battery can charge to 80% in five minutes.",
                  "The startup claims its battery can charge to 80% in five minutes.", "en") is None
    assert framed("国务院常务会议通过了新的数据安全条例。",
                  "新华社消息称，国务院常务会议通过了新的数据安全条例。", "zh") is None
    assert framed("国务院常务会议通过了新的数据安全条例。",
                  "据报道，国务院常务会议通过了新的数据安全条例。", "zh") is None
    # a denial of something else in the sentence, a rumour then confirmed, a thing that is fake
    for said, quote in (
            ("2023年公司营收增长20%。", "2023年公司营收增长20%，公司同时表示，关于裁员的传闻不实。"),
            ("中央网信办举报中心2023年受理举报2.06亿件。",
             "中央网信办举报中心2023年受理举报2.06亿件，其中涉及谣言的举报500万件。"),
            ("该公司宣布将裁员1000人。",
             "此前有传闻称该公司将裁员，今日该公司正式宣布将裁员1000人。"),
            ("该公司计划明年在港股上市。", "此前市场猜测该公司将上市，公司今日宣布计划明年在港股上市。"),
            ("小米将推出新款电动汽车。", "网传小米将推出新款电动汽车，小米官方已经确认。")):
        assert framed(said, quote, "zh") is None, quote
    assert framed("Customs officers seized 10,000 counterfeit watches.",
                  "Customs officers seized 10,000 watches that were fake.", "en") is None
    # confirmed, or denied in another sentence about something else: no frame
    assert framed(said, "The government will raise the retirement age to 67, the minister confirmed.",
                  "en") is None
    assert framed("政府将把退休年龄提高到67岁。",
                  "政府将把退休年龄提高到67岁。此前关于取消公积金的消息不实。", "zh") is None


def test_another_event_of_the_same_thing_or_another_share_of_it_is_a_conflict() -> None:
    for said, quoted in (("The court overturned the ruling in March 2024.",
                          "The court upheld the ruling in March 2024."),
                         ("Italy left the alliance in 2019.", "Italy joined the alliance in 2019."),
                         ("Police released the suspect on Monday.", "Police arrested the suspect on Monday."),
                         ("The Wright brothers made the last powered flight in 1903.",
                          "The Wright brothers made the first powered flight in 1903."),
                         ("Most of the bank's branches will remain open on Saturdays.",
                          "Only a minority of the bank's branches will remain open on Saturdays.")):
        assert quote_conflict(said, quoted, "en") is not None, said
    for said, quoted in (("意大利于2019年退出该联盟。", "意大利于2019年加入该联盟。"),
                         ("警方于周一释放了嫌疑人。", "警方于周一逮捕了嫌疑人。")):
        assert quote_conflict(said, quoted, "zh") is not None, said


def test_a_figure_the_quote_states_a_thousand_times_over_is_a_slip_of_scale() -> None:
    nvidia = {"url": "https://a.example/nvidia", "title": "Nvidia results",
              "content": "Nvidia reported revenue of US$26.0 billion for the first quarter of fiscal 2025, "
                         "up 262% from a year ago."}
    report = "Nvidia reported revenue of US$26.0 million for the first quarter of fiscal 2025.\n"
    out = trace(report, [nvidia])
    assert not out.citations
    (gap,) = out.unsupported
    assert gap.closest is not None and "USD 26,000,000,000" in gap.closest.conflict
    assert trace(report.replace("million", "billion"), [nvidia]).citations


def test_chinese_names_rjieba_reads_poorly_and_another_dynasty_are_another_name() -> None:
    for said, quoted in (
            # a person's name against one rjieba cuts into characters ("毕" "昇", "屠" "呦" "呦")
            ("活字印刷术由北宋时期的沈括发明，比欧洲早约400年。",
             "活字印刷术由北宋时期的毕昇发明，比欧洲早约400年。"),
            ("袁隆平因发现青蒿素获得2015年诺贝尔生理学或医学奖。",
             "屠呦呦因发现青蒿素获得2015年诺贝尔生理学或医学奖，是首位获得诺贝尔科学类奖项的中国科学家。"),
            # two long proper names
            ("长征五号遥八运载火箭于2024年在西昌卫星发射中心成功发射。",
             "长征五号遥八运载火箭于2024年在文昌航天发射场成功发射。"),
            # a dynasty before a name ("永乐", which rjieba tags a place)
            ("郑和七下西洋发生在清朝永乐至宣德年间。", "郑和七下西洋发生在明朝永乐至宣德年间。")):
        got = quote_conflict(said, quoted, "zh")
        assert got is not None and got.kind == "name", (said, got)
    # the same name written otherwise, and the same period, are none
    assert quote_conflict("郑和七下西洋发生在明代永乐至宣德年间。", "郑和七下西洋发生在明朝永乐至宣德年间。",
                          "zh") is None
    assert quote_conflict("活字印刷术由北宋时期的毕昇发明。", "活字印刷术是北宋时期的毕昇发明的。",
                          "zh") is None


def test_a_chinese_place_the_record_never_names_where_its_quote_names_another_is_another_place() -> None:
    from tracer.conflict import zh_other_place
    quote = "初步核算，2023年江西地区生产总值2.41万亿元，比上年增长3.1%。"
    record = "江西2023年统计公报\n" + quote
    got = zh_other_place("江苏2023年地区生产总值2.41万亿元。", quote, record)
    assert got == Conflict("name", "江苏", "江西")
    # the record's own place, written with its suffix or its one-character name, and a word rjieba
    # tags a place far from the quote's place ("归国" against "印度") are none
    assert zh_other_place("江西省2023年地区生产总值2.41万亿元。", quote, record) is None
    shanghai = "上海、深圳两市成交额突破1万亿元。"
    assert zh_other_place("沪深两市成交额突破1万亿元。", shanghai, shanghai) is None
    history = "宣德八年，郑和在第七次下西洋的归途中于古里（今印度卡利卡特）去世。"
    assert zh_other_place("郑和在第七次下西洋归国途中于古里去世。", history, history) is None
    jiangxi = {"url": "https://a.example/jx", "title": "江西2023年统计公报", "content": quote}
    jiangsu = {"url": "https://a.example/js", "title": "江苏2023年统计公报",
               "content": "初步核算，2023年江苏地区生产总值12.82万亿元，比上年增长5.8%。"}
    assert not trace("江苏2023年地区生产总值2.41万亿元。\n", [jiangxi, jiangsu]).citations


def test_a_fiscal_year_code_is_its_year_and_a_figure_before_the_quotes_clause_break_is_in_its_place() -> None:
    from tracer.text import numbers, stated_numbers
    assert numbers("The backlog reached €3.2 billion in Q1 FY24.") == {"2024", "3200000000"}
    assert "2023" in stated_numbers("Revenue for FY2023 was high.") and numbers("FY '24 results") == {"2024"}
    siemens = {"url": "https://a.example/siemens", "title": "Siemens Energy",
               "content": "Siemens Energy said its order backlog reached €3.2 billion in Q1 FY24, while the "
                          "wind unit Gamesa posted a loss."}
    said = "Siemens Energy said its order backlog reached €3.2 billion in Q1 FY{}.\n"
    assert not trace(said.format("23"), [siemens]).citations
    assert trace(said.format("2024"), [siemens]).citations and trace(said.format("24"), [siemens]).citations
    assert quote_conflict("The product was released in April 2011.",
                          "The product was released in April 2010, and sold well.", "en") == Conflict(
        "figure", "2011", "2010")
    assert quote_conflict("ChatGPT reached 100 million weekly active users in January 2023.",
                          "ChatGPT reached 100 million monthly active users in January 2023.",
                          "en") is not None


def test_a_fronted_cause_is_read_up_to_its_comma_and_a_link_in_other_words_stands() -> None:
    other = {"url": "https://b.example/weather", "title": "Weather outlook",
             "content": "The national weather service expects a mild winter across the northern plains."}
    lhr = {"url": "https://a.example/lhr", "title": "Heathrow 2023",
           "content": "Heathrow handled a record 83.9 million passengers in 2023. The new baggage system in "
                      "Terminal 5 made this possible."}
    # a cause the record never gives, opening the sentence
    out = trace("Thanks to lower landing fees, Heathrow handled a record 83.9 million passengers in 2023.\n",
                [lhr, other])
    assert not out.citations and out.unsupported[0].closest is not None
    assert "Thanks to lower landing fees" in out.unsupported[0].closest.conflict
    # the record gives the link in words no list holds ("made this possible", "drove"): no addition
    # (a differential sweep found 55 such faithful pairs refused when the link had to be a listed word)
    from tracer.conflict import cause_addition, record_stems
    for said, record in (
            ("Thanks to the new baggage system in Terminal 5, Heathrow handled a record 83.9 million "
             "passengers in 2023.", lhr["content"]),
            ("Revenue rose 10% in the quarter because of strong cloud sales.",
             "Revenue rose 10% in the quarter. Strong cloud sales drove the gain."),
            ("Output fell 3% due to maintenance at the refinery.",
             "Output fell 3%, reflecting maintenance at the refinery.")):
        quote = record.split(". ")[0]
        assert cause_addition(said, quote, record_stems(record)) is None, said
    rain = {"url": "https://a.example/rain", "title": "粮食",
            "content": "今年降雨量减少40%，以致粮食产量下降15%。"}
    assert trace("由于降雨量减少40%，粮食产量下降15%。\n", [rain]).citations


def test_years_swapped_between_events_are_a_conflict() -> None:
    from tracer.conflict import year_role_conflict
    record = "公司成立于2015年，2019年在深圳证券交易所上市，2021年进入港股通。"
    assert year_role_conflict("公司成立于2019年，2015年在深圳证券交易所上市。", record, "zh") == Conflict(
        "figure", "2019", "2015")
    assert year_role_conflict("公司成立于2015年，2019年在深圳证券交易所上市。", record, "zh") is None
    english = "The company was founded in May 2010 and listed on the Nasdaq in 2014."
    assert year_role_conflict("The company was founded in 2014 and listed on the Nasdaq in 2010.", english,
                              "en") == Conflict("figure", "2014", "2010")
    # one year moved, another verb for the event, a year for one place of several: left to the score
    # (a differential sweep found eleven faithful pairs refused when one moved year was a conflict)
    assert year_role_conflict("The company was founded in 2010.", english, "en") is None
    assert year_role_conflict("Tesla released the Model S in 2012.",
                              "Tesla launched the Model S in 2012 and released the Model 3 in 2017.",
                              "en") is None
    assert year_role_conflict("She joined Google in 2019 after leaving Microsoft.",
                              "She joined Microsoft in 2012. She left Microsoft in 2019 to join Google.",
                              "en") is None
    company = {"url": "https://a.example/co", "title": "公司概况", "content": record}
    assert not trace("公司成立于2019年，2015年在深圳证券交易所上市。\n", [company]).citations


def test_a_chinese_figure_whose_clause_the_record_writes_with_another_figure_is_a_conflict() -> None:
    from tracer.conflict import zh_clause_figure
    record = ("初步核算，2023年江西地区生产总值32200亿元，比上年增长4.1%。其中，第一产业增加值增长3.9%，"
              "第二产业增加值增长5.0%，第三产业增加值增长5.8%。全年居民消费价格比上年上涨0.3%。")
    got = zh_clause_figure("第二产业增加值增长5.8%。", record)
    assert got == Conflict("figure", "5.8%", "5.0%")
    # a figure outside the quote the verifier reads: the clause is found in the whole record
    got = zh_clause_figure("2023年江西地区生产总值32200亿元，比上年增长4.1%，"
                           "全年居民消费价格比上年上涨0.5%。", record)
    assert got == Conflict("figure", "0.5%", "0.3%")
    # the clause's own figure, or one rounded from it, agrees
    assert zh_clause_figure("2023年江西第三产业增加值增长5.8%。", record) is None
    assert zh_clause_figure("第一产业增加值增长3.90%。", record) is None
    # ... and so does one within the sentence's hedge, but not past it
    share = "全国并网太阳能发电量8341亿千瓦时，占全社会用电量的比重为8.5%，较上年提高2.2个百分点。"
    assert zh_clause_figure("占全社会用电量的比重超过8%。", share) is None
    assert zh_clause_figure("占全社会用电量的比重约为8.4%。", share) is None
    assert zh_clause_figure("占全社会用电量的比重超过9%。", share) == Conflict("figure", "9%", "8.5%")
    assert zh_clause_figure("占全社会用电量的比重为8.6%。", share) == Conflict("figure", "8.6%", "8.5%")
    jx = {"url": "https://a.example/jx", "title": "江西统计公报", "content": record}
    assert not trace("第二产业增加值增长5.8%。\n", [jx]).citations
    # the words ending a longer measure, or another period's: none (faithful pairs a sweep found)
    for said, page in (
            ("归属于上市公司股东的净利润同比增长20.1%。",
             "归属于上市公司股东的净利润10.2亿元，同比增长20.1%；"
             "归属于上市公司股东的扣除非经常性损益的净利润同比增长15.3%。"),
            ("公司营业收入同比增长12.5%。",
             "公司营业收入85.3亿元，同比增长12.5%；其中第四季度营业收入同比增长18.2%。"),
            ("全年规模以上工业增加值同比增长4.6%。",
             "12月份，规模以上工业增加值同比增长6.8%。全年规模以上工业增加值比上年增长4.6%。")):
        assert zh_clause_figure(said, page) is None, said


def test_a_chinese_plan_expectation_claim_or_accusation_is_no_fact() -> None:
    from tracer.conflict import framed
    got = quote_conflict("小米集团于2024年上半年推出首款电动汽车SU7。",
                         "小米集团表示，计划于2024年上半年推出首款电动汽车SU7。", "zh")
    assert got is not None and got.kind == "plan"
    for said, quote in (("苹果于2026年推出折叠屏iPhone。", "分析人士预计，苹果将于2026年推出折叠屏iPhone。"),
                        ("该公司的电池可在5分钟内充电至80%。", "该公司宣称，其电池可在5分钟内充电至80%。"),
                        ("市长挪用公款建设体育场。", "反对派指责市长挪用公款建设体育场。")):
        got = framed(said, quote, "zh")
        assert got is not None and got.kind == "framed", quote
    # the sentence that keeps the frame, and a plain report, are none
    assert framed("分析人士预计，苹果将于2026年推出折叠屏iPhone。",
                  "分析人士预计，苹果将于2026年推出折叠屏iPhone。", "zh") is None
    assert quote_conflict("小米集团于2024年3月推出首款电动汽车SU7。",
                          "小米集团表示，已于2024年3月推出首款电动汽车SU7。", "zh") is None


def test_another_quantity_of_the_same_things_is_a_conflict() -> None:
    assert quote_conflict("Several of the passengers on the ferry were injured in the crash.",
                          "None of the passengers on the ferry were injured in the crash.", "en") == Conflict(
        "quantifier", "Several", "None")
    assert quote_conflict("All economists surveyed expect a recession next year.",
                          "Most economists surveyed expect a recession next year.", "en") == Conflict(
        "quantifier", "All", "Most")
    # the same quantity in other words
    for said, quoted in (("Most", "A majority of"), ("Some of the", "Several of the"), ("Each", "Every")):
        assert quote_conflict(f"{said} economists surveyed expect a recession next year.",
                              f"{quoted} economists surveyed expect a recession next year.", "en") is None


def test_a_quote_that_only_says_it_may_be_so_does_not_state_it() -> None:
    quote = "The drug may reduce the risk of heart attack in older adults."
    got = quote_conflict("The drug reduces the risk of heart attack in older adults.", quote, "en")
    assert got == Conflict("modality", "", "may")
    assert got.describe() == 'its quote only says it may be so ("may")'
    assert quote_conflict("Sea levels will rise by 1 metre by 2100 under high emissions.",
                          "Sea levels could rise by 1 metre by 2100 under high emissions.", "en") == Conflict(
        "modality", "will", "could")
    # a sentence as weak as its quote, or weaker, is no conflict
    assert quote_conflict(quote, "The drug reduces the risk of heart attack in older adults.", "en") is None
    could = "The drug could reduce the risk of heart attack in older adults."
    assert quote_conflict(could, quote, "en") is None
    # 有望 ("is hoped to") only hopes: "将" and a bare statement claim more; 预计 and 有望 as little
    hoped = "队医表示，韩志远有望在6月恢复训练。"
    assert quote_conflict("韩志远将在6月恢复训练。", hoped, "zh") == Conflict("modality", "将", "有望")
    assert quote_conflict("韩志远预计在6月恢复训练。", hoped, "zh") is None
    assert quote_conflict("韩志远有望在6月恢复训练。", hoped, "zh") is None


def test_an_english_sentence_that_adds_a_cause_the_record_never_gives_claims_more() -> None:
    from tracer.conflict import cause_addition

    quote = "Net income fell 6% to $612 million as the company increased spending on data centres."
    record = "Altura reported quarterly results. " + quote
    got = cause_addition("Net income fell 6% to $612 million because of weaker demand in Europe.", quote,
                         record)
    assert got == Conflict("addition", "because of weaker demand in Europe", "")
    assert got.describe() == ('the sentence adds "because of weaker demand in Europe", '
                              "which the record never states")
    # the record's own cause, in other words, or a quote that gives a cause with "because"
    assert cause_addition("Net income fell 6% to $612 million because the company increased spending on "
                          "data centres.", quote, record) is None
    assert cause_addition("Sales fell because of weak demand.", "Sales fell because of weak demand in Asia.",
                          "Sales fell because of weak demand in Asia.") is None


def test_an_english_sentence_that_adds_a_clause_a_name_or_a_causal_link_claims_more() -> None:
    from tracer.conflict import cause_addition, clause_addition

    quake = ("A magnitude 6.4 earthquake struck the coast early on Sunday, killing at least 23 people and "
             "injuring more than 300, officials said.")
    added = "The earthquake killed at least 23 people, most of them in the collapsed market district."
    assert clause_addition(added, quake, quake) == Conflict(
        "addition", "most of them in the collapsed market district", "")
    profit = "The company reported a net profit of $3.2 billion for 2023."
    doubled = "The company reported a net profit of $3.2 billion for 2023, double the previous year's figure."
    assert clause_addition(doubled, profit, profit) == Conflict(
        "addition", "double the previous year's figure", "")
    drug = "The drug was approved in the United States for adults with severe asthma in 2021."
    europe = "The drug was approved in the United States and Europe for adults with severe asthma in 2021."
    assert clause_addition(europe, drug, drug) == Conflict("addition", "and Europe", "")
    # what the record states elsewhere is no addition, nor is a source named after a comma
    assert clause_addition(doubled, profit, profit + " That was double the previous year's figure.") is None
    assert clause_addition("The company reported a net profit of $3.2 billion for 2023, the filing says.",
                           profit, profit) is None
    # a causal link the quote does not make, though it states both facts
    while_ = "Unemployment rose to 6.1% in May, while consumer spending fell."
    assert cause_addition("Unemployment rose to 6.1% in May because consumer spending fell.", while_,
                          while_) == Conflict("addition", "because consumer spending fell", "")


WEATHER = {"url": "https://example.org/other", "title": "Weather report",
           "content": "Heavy rain is expected across the coastal region on Tuesday. Forecasters advise "
                      "residents to carry umbrellas and avoid flooded roads."}


@pytest.mark.parametrize(("sentence", "record"), [
    # found by a review of the twentieth session's conflict rules: faithful sentences they rejected
    ("Inspectors found no damage to the structure and the bridge reopened to traffic on Monday morning.",
     "Inspectors found no evidence of damage to the structure and the bridge reopened to traffic on Monday "
     "morning. The repairs cost $2 million."),
    ("The company would cut 500 jobs in its retail division this year.",
     "The chief executive confirmed rumours that the company would cut 500 jobs in its retail division "
     "this year."),
    ("This policy effectively reduced the unemployment rate in the region.",
     "Critics cannot deny that this policy effectively reduced the unemployment rate in the region. "
     "It was launched in 2015."),
    ("The drug reduces systolic blood pressure by 10 points in adults over 60.",
     "A trial that tested whether the drug works found that it reduces systolic blood pressure by 10 "
     "points in adults over 60."),
    ("The prime minister resigned in June after losing a confidence vote in parliament.",
     "Prime Minister May resigned in June after losing a confidence vote in parliament."),
    ("Regular exercise can lower blood pressure in older adults with hypertension.",
     "Regular exercise may lower blood pressure in older adults with hypertension."),
    ("Some analysts expect the central bank to cut interest rates in September.",
     "Most analysts expect the central bank to cut interest rates in September."),
    ("The king fell ill in the spring of 1547 and died a few months later.",
     "The king grew ill in the spring of 1547 and died a few months later. His son succeeded him."),
    ("Officers arrested two men near the stadium on Saturday night after the match.",
     "A statement from the Metropolitan Police said more arrests were likely. Police arrested two men near "
     "the stadium on Saturday night after the match."),
    ("The bridge was closed for two weeks in March, police say.",
     "The bridge was closed for two weeks in March for repairs."),
    ("The plant opened in 1998 in Ohio, employing 2,000 local workers.",
     "The plant opened in 1998 in Ohio. It employs 2,000 people from the area."),
    ("Global oil demand rose by 2.3 million barrels a day in 2023 (Source: IEA, 2024).",
     "Global oil demand rose by 2.3 million barrels a day in 2023, the agency said."),
])
def test_faithful_sentences_the_conflict_rules_leave_alone(sentence: str, record: str) -> None:
    from tracer.conflict import clause_addition

    # an acronym or a title beside the aligned name is no added name
    rules = "The rules were approved by the European Central Bank in 2023."
    assert clause_addition("The rules were approved by the European Central Bank (ECB) in 2023.", rules,
                           rules) is None
    result = trace(sentence + "\n", [{"url": "https://example.org/a", "title": "Report", "content": record},
                                     WEATHER])
    assert [c.sources[0].url for c in result.citations] == ["https://example.org/a"], (
        result.unsupported[0].closest if result.unsupported else None)


@pytest.mark.parametrize(("sentence", "record"), [
    ("青海省境内有很多湖泊和河流，水资源十分丰富。",
     "青海省境内有无数湖泊和河流，水资源十分丰富。青海湖是中国最大的咸水湖。"),
    ("这一政策有效降低了该地区的失业率。",
     "不能否认这一政策有效降低了该地区的失业率。该政策于2015年开始实施。"),
    ("一季度国内生产总值同比增长5.8%。", "一季度国内生产总值比上年同期增长5.8%，3月份环比增长0.3%。"),
])
def test_faithful_chinese_sentences_the_conflict_rules_leave_alone(sentence: str, record: str) -> None:
    result = trace(sentence + "\n", [{"url": "https://example.org/a", "title": "报告", "content": record},
                                     {"url": "https://example.org/zh", "title": "天气",
                                      "content": "预计周二沿海地区将有大雨。周末气温将保持温和。"}])
    assert [c.sources[0].url for c in result.citations] == ["https://example.org/a"]


def test_another_chinese_name_opening_the_sentence_is_read_though_rjieba_tags_it_otherwise() -> None:
    quote = "比亚迪公告，2023年全年新能源汽车销量为302.44万辆，同比增长61.9%，稳居全球新能源汽车销量第一。"
    # rjieba tags 蔚来 a verb; it opens the sentence where the quote names another company
    assert quote_conflict("蔚来公告，2023年全年新能源汽车销量为302.44万辆，同比增长61.9%。", quote, "zh",
                          record=quote) == Conflict("name", "蔚来", "比亚迪")
    # a particle glued to a name by the segmenter ("张三于") is no part of it
    person = "张三于2020年担任该公司董事长。"
    assert quote_conflict("李四于2020年担任该公司董事长。", person, "zh", record=person) == Conflict(
        "name", "李四", "张三于")
    assert quote_conflict(person, person, "zh", record=person) is None


@pytest.mark.parametrize(
    ("sentence", "quote", "lang"),
    [
        ("The government has built 12 new hospitals in the northern provinces.",
         "The government plans to build 12 new hospitals in the northern provinces by 2030.", "en"),
        ("Talks on a ceasefire resumed in Cairo last week.",
         "Talks on a ceasefire are expected to resume in Cairo next week.", "en"),
        ("The minister raised the retirement age to 67 by 2030.",
         "The minister proposed raising the retirement age to 67 by 2030.", "en"),
        ("锐能动力在西班牙萨拉戈萨的合资工厂已于2026年底投产。",
         "公司还表示，位于西班牙萨拉戈萨的合资电池工厂预计将于2026年底开始投产。", "zh"),
        ("蓝海电池已向全体股东每10股派发现金红利8.6元。",
         "公司董事会拟向全体股东每10股派发现金红利8.6元。", "zh"),
        ("蓝海电池匈牙利欧洲工厂的二期项目已经建成。",
         "位于匈牙利的欧洲工厂一期项目已于2024年10月投产；二期项目计划于2026年建成。", "zh"),
        ("人民银行已于年内再次下调存款准备金率0.25至0.5个百分点。",
         "人民银行负责人表示，将视市场流动性情况，年内择机进一步下调存款准备金率0.25至0.5个百分点。", "zh"),
    ],
)
def test_a_plan_or_forecast_stated_as_done_is_a_conflict(sentence: str, quote: str, lang: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is not None and got.kind == "plan", got
    assert got.describe().startswith("its quote only says it is planned or expected")


@pytest.mark.parametrize(
    ("sentence", "quote", "lang"),
    [
        # the sentence plans too, or says "may"
        ("The government intends to build 12 new hospitals in the northern provinces.",
         "The government plans to build 12 new hospitals in the northern provinces.", "en"),
        ("The company will open five stores in Ohio next year.",
         "The company is set to open five stores in Ohio next year.", "en"),
        ("Talks on a ceasefire may resume in Cairo next week.",
         "Talks on a ceasefire are expected to resume in Cairo next week.", "en"),
        ("合资工厂计划于2026年底投产。", "合资电池工厂预计将于2026年底开始投产。", "zh"),
        # "will" that says where a thing the sentence names takes place, not that it was done
        ("In October 2018, she was named in India's squad for the 2018 ICC Women's World Twenty20 "
         "tournament in the West Indies.",
         "The sixth edition of the tournament will be held in the West Indies.", "en"),
        # "expected" with no "to" compares, it plans nothing
        ("Revenue rose 5% in the third quarter, beating analyst estimates.",
         "Revenue rose 5% in the third quarter, more than expected.", "en"),
        # "将" before a noun is "把": "决定将存款准备金率下调" plans nothing
        ("人民银行下调存款准备金率0.5个百分点。", "人民银行决定将存款准备金率下调0.5个百分点。", "zh"),
    ],
)
def test_a_plan_the_sentence_plans_too_is_no_conflict(sentence: str, quote: str, lang: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is None or got.kind != "plan", got


@pytest.mark.parametrize(
    ("sentence", "quote", "lang", "conflict"),
    [
        ("商业银行必须将存量房贷利率降至新发放贷款利率附近。",
         "此外，人民银行将引导商业银行将存量房贷利率降至新发放贷款利率附近。", "zh", True),
        ("绍洛表示，《巴黎协定》设定的1.5摄氏度温控目标一定会被突破。",
         "绍洛表示，《巴黎协定》设定的1.5摄氏度温控目标从未如此接近被突破。", "zh", True),
        ("Under the rule, banks must hold more capital against risky loans.",
         "Under the rule, banks will hold more capital against risky loans.", "en", True),
        ("商业银行必须将存量房贷利率降至新发放贷款利率附近。",
         "人民银行要求商业银行将存量房贷利率降至新发放贷款利率附近。", "zh", False),
        ("Under the rule, banks must hold more capital against risky loans.",
         "Under the rule, banks are required to hold more capital against risky loans.", "en", False),
    ],
)
def test_a_sentence_surer_than_its_quote_is_a_conflict(sentence: str, quote: str, lang: str,
                                                      conflict: bool) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert (got is not None and got.kind == "certainty") is conflict, got


@pytest.mark.parametrize(
    ("sentence", "quote", "lang"),
    [
        ("The company confirmed reports that it would close its plant in Ohio next year.",
         "The company denied reports that it would close its plant in Ohio next year.", "en"),
        ("The museum opened its wing dedicated to Islamic art in 2019.",
         "The museum closed its wing dedicated to Islamic art in 2019.", "en"),
        ("这笔交易在9月被市场监管总局的反垄断审查否决。",
         "这笔交易于9月获得市场监管总局的反垄断审查批准。", "zh"),
        ("新政实施后首个周末，杭州新建商品住房成交量大幅增长。",
         "新政实施后的首个周末，杭州新建商品住房成交量则基本持平。", "zh"),
        ("新能源汽车报废更新补贴标准被下调到2万元。",
         "相关部门进一步将新能源汽车报废更新补贴标准提高至2万元。", "zh"),
    ],
)
def test_more_opposite_words(sentence: str, quote: str, lang: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is not None and got.kind == "opposite", got


@pytest.mark.parametrize(
    ("sentence", "quote", "lang", "said", "quoted"),
    [
        ("东海航运集团是国内最大的集装箱航运企业。",
         "东海航运集团是国内第三大集装箱航运企业，运营船舶约230艘。", "zh",
         "国内最大", "国内第三大"),
        ("这是人民银行2024年第一次全面降准。",
         "这是2024年以来人民银行第二次全面降准，此前一次是在2月5日。", "zh",
         "第一次", "第二次"),
        ("杭州是中国七大古都之首。", "杭州是中国七大古都之一，五代时期为吴越国都城。", "zh", "之首", "之一"),
        ("新疆队在本赛季常规赛中排名第二。", "新疆队本赛季常规赛排名第一，季后赛中先后淘汰了广厦队。", "zh",
         "排名第二", "排名第一"),
        ("钱学森是国防部第五研究院的第二任院长。",
         "钱学森受命组建国防部第五研究院，担任首任院长。", "zh", "第二任", "首任"),
        ("蓝海电池的储能电池出货量位列全球第一。",
         "在储能电池领域，公司出货量位列全球前三。", "zh", "位列全球第一", "位列全球前三"),
        ("这是今年国内工业软件领域金额最大的并购交易。",
         "分析人士指出，这是今年国内工业软件领域金额最大的并购交易之一。",
         "zh", "最大", "最大的并购交易之一"),
        ("The Mekong is the longest river in Southeast Asia.",
         "The Mekong is one of the longest rivers in Southeast Asia.", "en", "longest", "one of the longest"),
        ("Samsung is the largest smartphone maker in the world.",
         "Samsung is the second-largest smartphone maker in the world.", "en", "largest", "second-largest"),
        ("Delphine would be the costliest hurricane to strike Louisiana since Ida in 2021.",
         "That would make Delphine the second-costliest hurricane to hit Louisiana since Ida in 2021.", "en",
         "costliest", "second-costliest"),
        ("Zurich is the most expensive city in Europe.",
         "Zurich is the second most expensive city in Europe.", "en",
         "most expensive", "second most expensive"),
        ("Lyon is the best team in France.", "Lyon is one of the best teams in France.", "en",
         "best", "one of the best"),
        ("Zurich is the single most expensive city in Europe.", "Zurich is one of the most expensive cities.",
         "en", "most expensive", "one of the most expensive"),
    ],
)
def test_another_rank_is_a_conflict(sentence: str, quote: str, lang: str, said: str, quoted: str) -> None:
    assert rank_conflict(sentence, quote, lang) == Conflict("rank", said, quoted)


@pytest.mark.parametrize(
    ("sentence", "quote", "lang"),
    [
        ("东海航运集团是国内第三大集装箱航运企业。", "东海航运集团是国内第三大集装箱航运企业。", "zh"),
        # third is within the top five
        ("该公司的销量排名前五。", "该公司的销量排名第三。", "zh"),
        # the first is one of them
        ("杭州是中国七大古都之一。", "杭州是中国七大古都之首。", "zh"),
        ("这是今年金额最大的并购交易之一。", "这是今年金额最大的并购交易之一。", "zh"),
        # 前三季度 ranks nothing
        ("公司前三季度营收增长5%。", "公司第三季度营收增长5%，排名第二。", "zh"),
        ("公司第一时间发布了公告。", "公司随后发布公告，股价排名第二。", "zh"),           # nor does 第一时间
        # the sentence names the quote's rank too: it compares the two
        ("根据第四次全国大熊猫调查，野生大熊猫数量为1864只，比第三次调查增长了16.8%。",
         "野生大熊猫种群数量达1864只。与第三次调查相比，种群数量增加268只，增长16.8%。", "zh"),
        ("The second survey counted 1,864 pandas, 16.8% more than the first survey.",
         "Compared with the first survey, the count rose 16.8% to 1,864.", "en"),
        ("The Mekong is one of the longest rivers in Asia.",
         "The Mekong is the longest river in Asia.", "en"),
        ("Lagos is the largest city in Nigeria.", "Lagos, the largest city in Nigeria, grew fast.", "en"),
        # a rank of another kind says nothing of this one
        ("Lagos is the largest city in Nigeria.", "Lagos is the busiest port in Nigeria.", "en"),
        # "most" as a quantifier or an adverb ranks nothing, nor "best" without a determiner
        ("Most of the cities are expensive.", "One of the most expensive cities is Zurich.", "en"),
        ("Most economists in the poll expect a cut.", "Among those polled, most economists expect a cut.",
         "en"),
        ("Most stores in Leeds closed early on June 5th.", "On June 5th most stores in Leeds closed early.",
         "en"),
        ("Best practices were shared.", "Among the firms, best practices were shared.", "en"),
        ("It is most likely the oldest bridge.", "It is one of the most likely causes.", "en"),
    ],
)
def test_a_rank_the_quote_backs_or_does_not_give_is_no_conflict(sentence: str, quote: str, lang: str) -> None:
    assert rank_conflict(sentence, quote, lang) is None


def test_a_verbatim_quote_that_goes_on_to_say_one_of_is_not_cited() -> None:
    record = {"url": "https://news.example/deal", "title": "并购",
              "content": "分析人士指出，这是今年国内工业软件领域金额最大的并购交易之一。交易对价为48亿元。"}
    res = trace("这是今年国内工业软件领域金额最大的并购交易。\n", [record], TraceOptions())
    assert not res.citations
    assert res.unsupported and "之一" in res.unsupported[0].reason


@pytest.mark.parametrize(
    ("sentence", "quote"),
    [
        # "公司" stands for the company the sentence names
        ("蓝海电池2024年研发投入约72亿元，约占营收的5.6%。",
         "研发方面，公司2024年研发投入为71.8亿元，占营业收入的5.6%，研发人员数量超过1.6万人。"),
        ("2023年全球近地表平均气温比工业化前高出约1.45℃。",
         "报告确认2023年是有记录以来最暖的年份，全球近地表平均温度比工业化前水平高出1.45摄氏度。"),
    ],
)
def test_a_generic_subject_or_a_synonym_is_no_other_name(sentence: str, quote: str) -> None:
    assert quote_conflict(sentence, quote, "zh") is None


@pytest.mark.parametrize(
    ("sentence", "quote", "conflict"),
    [
        ("蓝海电池在匈牙利的欧洲工厂一期并未于2024年10月投产。",
         "公司表示，位于匈牙利德布勒森的欧洲工厂一期项目已于2024年10月投产。", True),
        ("锐能动力尚未与任何欧洲车企签署长期供货协议。",
         "此外，锐能动力在公告中披露，公司已与一家欧洲车企签署长期供货协议。", True),
        ("欧洲工厂一期项目已于2024年10月投产。", "欧洲工厂一期项目并未于2024年10月投产。", True),
        ("欧洲工厂一期项目尚未投产。", "欧洲工厂一期项目至今仍未投产。", False),
        ("屠呦呦已故的导师楼之岑并未获奖。", "屠呦呦的导师楼之岑并未获奖。", False),
    ],
)
def test_not_done_for_done_is_a_conflict(sentence: str, quote: str, conflict: bool) -> None:
    got = quote_conflict(sentence, quote, "zh")
    assert (got is not None and got.kind == "negation") is conflict, got


@pytest.mark.parametrize(
    ("sentence", "quote", "conflict"),
    [
        ("联盟提示，所有中小动力电池企业都面临较大的经营压力。",
         "联盟同时提示，行业产能利用率仍然偏低，部分中小企业面临较大的经营压力。", True),
        ("大多数中小股东认为华锐医药的收购价格过高。", "部分中小股东认为收购价格过高。", True),
        ("所有投资者都认为48亿元的收购价格估值偏高。",
         "不过，也有投资者担心，48亿元的收购价格估值偏高。", True),
        # the sentence says less than its quote, or as much
        ("部分中小股东认为收购价格过高。", "大多数中小股东认为收购价格过高。", False),
        ("大部分中小股东认为收购价格过高。", "绝大多数中小股东认为收购价格过高。", False),
    ],
)
def test_more_of_them_than_the_quote_says_is_a_conflict_in_chinese(sentence: str, quote: str,
                                                                  conflict: bool) -> None:
    got = quote_conflict(sentence, quote, "zh")
    assert (got is not None and got.kind == "quantifier") is conflict, got


@pytest.mark.parametrize(
    ("sentence", "quote", "lang", "swapped"),
    [
        ("Apple overtook Samsung as the world's largest smartphone seller in 2023.",
         "Samsung overtook Apple as the world's largest smartphone seller in 2023.", "en", True),
        ("星图软件已完成对远航科技的全资收购。",
         "远航科技股份有限公司宣布，已完成对国内工业软件企业星图软件的全资收购。", "zh", True),
        ("交易完成后，远航科技将成为星图软件的全资子公司。",
         "交易完成后，星图软件将成为远航科技的全资子公司。", "zh", True),
        ("征免年限由2年调整为5年。", "征免年限从5年调整为2年。", "zh", True),
        # a name the quote repeats elsewhere is taken where it stands nearest the shared word
        ("星图软件已完成对远航科技的全资收购，交易对价为48亿元。",
         "远航科技股份有限公司宣布，已完成对星图软件的全资收购，交易总对价为48亿元，其余18亿元以远航科技新发行股份支付。",
         "zh", True),
        ("新疆伊力特队总比分4比1战胜辽宁本钢队，夺得总冠军。",
         "辽宁本钢队以106比95战胜新疆伊力特队，从而以总比分4比1夺得总冠军。", "zh", True),
        # a verb may stand for its like; "比" compares two roles
        ("泰山队以2比1击败海港队。", "上海海港队主场以2比1逆转战胜山东泰山队，提前两轮锁定冠军。",
         "zh", True),
        ("哥伦布首次航行到美洲比郑和船队的远航早87年。", "郑和船队的首次远航比哥伦布首次航行到美洲早87年。",
         "zh", True),
        ("北京和上海的高等教育毛入学率仅次于浙江。",
         "2024年浙江高等教育毛入学率达到71.3%，在全国各省区中位居第三，仅次于北京和上海。", "zh", True),
        ("Olsen Dairy has agreed to buy Meridian Foods for $2.3 billion in cash.",
         "Meridian Foods said it had agreed to acquire Olsen Dairy for $2.3 billion in cash.", "en", True),
        # what follows the verb turns the roles round, or makes them one
        ("Olsen Dairy was bought by Meridian Foods for $2.3 billion in cash.",
         "Meridian Foods bought Olsen Dairy for $2.3 billion in cash.", "en", False),
        ("Olsen Dairy signed a supply agreement with Meridian Foods in May.",
         "Meridian Foods signed a supply agreement with Olsen Dairy in May.", "en", False),
        # plain nouns and years are no roles
        ("铜蓝蛋白是一类参与电子传递反应的铜蛋白，一般呈深蓝色。",
         "目前已知的型铜蛋白都是参与电子传递反应的铜蛋白，该类蛋白一般呈深蓝色，所以也称蓝铜蛋白。",
         "zh", False),
        ("辽宁本钢队总比分4比1战胜新疆伊力特队，夺得2023—2024赛季CBA总冠军。",
         "2023—2024赛季CBA总决赛第五场，辽宁本钢队以106比95战胜新疆伊力特队，从而以总比分4比1夺得总冠军。",
         "zh", False),
        # the other text turns the roles round or makes them one
        ("Samsung was overtaken by Apple as the largest smartphone seller in 2023.",
         "Apple overtook Samsung as the largest smartphone seller in 2023.", "en", False),
        ("Merkel met Macron in Paris on Monday.", "Macron met Merkel in Paris on Monday.", "en", False),
        ("远航科技被星图软件收购。", "星图软件收购了远航科技。", "zh", False),
        ("The deal between Apple and Samsung ended in 2023.",
         "The deal between Samsung and Apple ended in 2023.",
         "en", False),
    ],
)
def test_roles_the_other_way_round_are_a_conflict(sentence: str, quote: str, lang: str,
                                                  swapped: bool) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert (got is not None and got.kind == "swap") is swapped, got


@pytest.mark.parametrize(
    ("sentence", "quote", "said", "quoted"),
    [
        ("星图软件2023年净利润为6.2亿元。",
         "2023年营业收入为6.2亿元，净利润为0.9亿元。", "净利润6.2亿元", "净利润0.9亿元"),
        ("蓝海电池第四季度营收为372.5亿元，同比增长12.4%。",
         "第四季度实现营业收入372.5亿元，环比增长12.4%，同比增长9.8%。", "同比增长12.4%", "同比增长9.8%"),
        ("锐能动力2024年第三季度营收922.8亿元，同比增长12.1%。",
         "当季公司实现营业收入922.8亿元，同比下降12.1%；归母净利润131.4亿元，同比增长25.9%。",
         "同比增长12.1%", "同比增长25.9%"),
        # the sentence rounds the figure the quote gives another measure
        ("蓝海电池2024年净利润约1286亿元，同比增长18.7%。",
         "公司全年实现营业收入1286.4亿元，同比增长18.7%；归属于上市公司股东的净利润为96.3亿元，同比增长33.5%。",
         "净利润1286亿元", "净利润96.3亿元"),
        ("锐能动力三季度营业收入约131亿元，比去年同期增长25.9%。",
         "当季公司实现营业收入922.8亿元，同比下降12.1%；归母净利润131.4亿元，同比增长25.9%。",
         "营业收入131亿元", "营业收入922.8亿元"),
        # a measure opening its clause is the one the clause before qualifies; a figure of four
        # characters is no year
        ("普通本专科在校生42.7万人，比上年增长3.8%。",
         "全省共有普通高校109所；普通本专科招生42.7万人，比上年增长3.8%，在校生131.5万人。",
         "本专科在校生42.7", "本专科在校生131.5"),
        # four digits before a measure word are no year
        ("龙脊山火灾造成受害森林面积约1460公顷。", "此次火灾过火面积约1460公顷，其中受害森林面积约610公顷。",
         "森林面积1460", "森林面积610"),
    ],
)
def test_a_figure_of_another_measure_in_the_quote_is_a_conflict(sentence: str, quote: str, said: str,
                                                                quoted: str) -> None:
    assert quote_conflict(sentence, quote, "zh") == Conflict("figures-slot", said, quoted)


@pytest.mark.parametrize(
    ("sentence", "quote"),
    [
        # the quote gives the measure this figure too, or a figure near it
        ("公司净利润为6.2亿元。", "2023年营业收入为6.2亿元，净利润为6.2亿元。"),
        ("公司全年营收约1286亿元，同比增长18.7%。", "全年实现营业收入1286.4亿元，同比增长18.7%。"),
        # the quote does not give the measure another figure: nothing says the figure is wrong
        ("公司净利润为6.2亿元。", "2023年营业收入为6.2亿元。"),
        # dates are no measure's figure
        ("公司于2023年上市，募资50亿元。", "公司2024年营收50亿元，于2021年上市。"),
        # a list of figures ("分别…和…") measures what its first figure does
        ("2024年新能源汽车销量同比增长35.5%。",
         "2024年，新能源汽车产销分别完成1288.8万辆和1286.6万辆，同比分别增长34.4%和35.5%。"),
        # the quote gives it under a word the sentence says too: the quarter
        ("2024年三季度国内生产总值同比增长4.6%。",
         "2024年分季度看，一季度国内生产总值同比增长5.3%，二季度增长4.7%，三季度增长4.6%。"),
        # the quote gives the figure to the measure as the clause opens ("增长…6.3%"), the
        # sentence under a word more ("名义增长6.3%")
        ("农村居民人均可支配收入为20133元，名义增长6.3%，实际增长4.2%。",
         "全国居民人均可支配收入36883元，比上年名义增长5.0%，扣除价格因素，实际增长2.9%。"
         "分城乡看，城镇居民人均可支配收入49283元，增长3.9%，扣除价格因素，实际增长1.9%；"
         "农村居民人均可支配收入20133元，增长6.3%，扣除价格因素，实际增长4.2%。"),
    ],
)
def test_a_figure_the_quote_gives_its_measure_is_no_slot_conflict(sentence: str, quote: str) -> None:
    got = quote_conflict(sentence, quote, "zh")
    assert got is None or got.kind != "figures-slot", got


@pytest.mark.parametrize(
    ("sentence", "quote", "said", "quoted"),
    [
        ("She was awarded the Davy Medal in 2018 and was elected a Fellow of the Royal Society in 2016.",
         "She was awarded the Davy Medal in 2016 and was elected a Fellow of the Royal Society in 2018.",
         "Davy Medal 2018", "Davy Medal 2016"),
        ("Zelvatan lowered systolic blood pressure by an average of 3.1 mmHg, compared with 12.4 mmHg "
         "in the placebo group.",
         "Zelvatan lowered systolic blood pressure by an average of 12.4 mmHg over 24 weeks, compared "
         "with 3.1 mmHg in the placebo group.", "blood pressure 3.1 mmHg", "blood pressure 12.4 mmHg"),
        ("Eastern Shipping operates about 85 vessels.",
         "Eastern Shipping operates about 230 vessels; Southern Marine operates about 85 vessels.",
         "Shipping operates 85 vessels", "Shipping operates 230 vessels"),
        ("Samsung sold 50 million phones.",
         "Apple sold 50 million iPhones in the quarter, while Samsung sold 60 million phones.",
         "Samsung sold 50 million", "Samsung sold 60 million"),
        # the sentence gives the other figure too, but with the qualifier the quote gives its own
        ("Zelvatan lowered systolic blood pressure by an average of 3.1 mmHg over 24 weeks, versus 12.4 mmHg "
         "in the placebo group.",
         "Zelvatan lowered systolic blood pressure by an average of 12.4 mmHg over 24 weeks, compared "
         "with 3.1 mmHg in the placebo group.", "blood pressure 3.1 mmHg", "blood pressure 12.4 mmHg"),
        ("Eastern Shipping operates about 85 vessels, against 230 for Southern Marine.",
         "Eastern Shipping operates about 230 vessels; Southern Marine operates about 85 vessels.",
         "Shipping operates 85 vessels", "Shipping operates 230 vessels"),
        # a full stop ends the clause: "iPhone revenue" measures the figure after it, not the one
        # of the sentence before
        ("Services revenue reached a record $69.1 billion.",
         "Apple reported quarterly revenue of $124.3 billion. iPhone revenue was $69.1 billion, while "
         "services revenue reached a record $26.3 billion.",
         "revenue record 69.1 billion", "revenue record 26.3 billion"),
    ],
)
def test_an_english_figure_the_quote_gives_another_measure_is_a_conflict(sentence: str, quote: str,
                                                                         said: str, quoted: str) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("figures-slot", said, quoted)


@pytest.mark.parametrize(
    ("sentence", "quote"),
    [
        # what qualifies a figure comes after it in English: another qualifier, another measure
        ("The drug lowered blood pressure by 9.1 mmHg in women.",
         "It lowered blood pressure by 12.4 mmHg in men and by 9.1 mmHg in women."),
        ("Temperatures reached 45 degrees on Monday.",
         "Temperatures reached 42 degrees on Sunday and 45 degrees on Monday."),
        # the quote's words before the figure begin like the sentence's: the same measure
        ("Net income fell 6% in the quarter.",
         "For the full year, net income fell 3%; in the quarter, it fell 6%."),
        ("Revenue was $4.8 billion in 2024.", "Revenue was $4.3 billion in 2023 and $4.8 billion in 2024."),
        ("The museum attracted 900,000 visitors in 2018.",
         "The museum attracted 1.2 million visitors in 2019, up from 900,000 in 2018."),
        ("The company employs 1,200 people in Europe.",
         "The company employs 5,000 people worldwide, 1,200 of them in Europe."),
        ("Unemployment was 3.7% in August.", "Unemployment fell to 3.5% in September from 3.7% in August."),
        # time series: a year or a time after a figure qualifies it, the sentence gives both
        # figures, the words before a figure stop at the one before's qualifier
        ("Glimmer sales reached 500 units in 2021, up from 400 units in 2020.",
         "Glimmer sales reached 400 units in 2020, rising to 500 units in 2021."),
        ("The Zorbex plant employs 1,500 workers today, up from 1,200 workers in 2019.",
         "The Zorbex plant employed 1,200 workers in 2019 and today employs 1,500 workers."),
        ("Revenue at Acme reached $10 million this year, up from $8 million the prior year.",
         "Revenue at Acme was $8 million in the prior year; this year it reached $10 million."),
        ("Life expectancy is 82 years.", "Life expectancy was 75 years in 1980 and is now 82 years."),
        ("The temperature reached 40 degrees.",
         "The temperature was 35 degrees at noon before it reached 40 degrees."),
        # a date's day or year is no measure's figure
        ("It launched worldwide on Netflix on March 6, 2019.",
         "Secret City Season 2 Coming to Netflix in March 2019, by Kasey Moore on February 6, 2019."),
    ],
)
def test_an_english_figure_in_its_place_is_no_slot_conflict(sentence: str, quote: str) -> None:
    got = quote_conflict(sentence, quote, "en")
    assert got is None or got.kind != "figures-slot", got


def test_a_percent_written_out_is_a_percent_sign() -> None:
    """"9 percent" and "6.1%" are two figures of one sort: the change is read like "9%" for "6.1%"."""
    sentence = "Net income fell 6.1% to $212 million as higher milk and packaging costs squeezed margins."
    for written in ("9 percent", "9 per cent", "9 pct.", "9 Percent"):
        quote = f"Net income fell {written} to $212 million, or $1.18 per share, as higher milk and " \
                "packaging costs squeezed margins."
        assert quote_conflict(sentence, quote, "en") == Conflict("figure", "6.1", "9"), written
    same = "Net income fell 6.1 percent to $212 million as higher milk and packaging costs squeezed margins."
    assert quote_conflict(sentence, same, "en") is None


def test_a_sentence_past_the_alignment_limit_is_still_read_at_its_start() -> None:
    """Past _MAX_ALIGN words only the start is aligned (difflib is quadratic where words
    repeat); the ops still cover both texts, and a change near the start is still read."""
    from tracer.conflict import _MAX_ALIGN, _aligned

    ka, kb = ["x", "为"] * _MAX_ALIGN, ["x", "为"] * (3 * _MAX_ALIGN)
    ops, share = _aligned(ka, kb)
    assert ops[0][1] == ops[0][3] == 0 and ops[-1][2] == len(ka) and ops[-1][4] == len(kb)
    assert all(o[1] == p[2] and o[3] == p[4] for p, o in zip(ops, ops[1:], strict=False))  # contiguous
    assert share == 1.0   # of the part aligned
    filler = "，".join(f"指标{i}为{i}亿元" for i in range(300))
    got = quote_conflict("公司营收增长了5%，" + filler + "。", "公司营收下降了5%，" + filler + "。", "zh")
    assert got is not None and got.kind == "opposite"


@pytest.mark.parametrize(
    ("sentence", "quote", "lang"),
    [
        # the sentence names a plan as one ("offer"), or puts its claim ahead ("定于", "next")
        ("The offer of $41.50 a share is a 28% premium to Olsen's closing price on Friday.",
         "Meridian will pay $41.50 a share, a 28% premium to Olsen's closing price on Friday.", "en"),
        ("X9系列定于9月28日上午10时首销。", "X9系列将于9月28日上午10时首销。", "zh"),
        ("The company opens its new plant in Ohio next year.",
         "The company will open its new plant in Ohio next year.", "en"),
    ],
)
def test_a_sentence_that_names_a_plan_or_looks_ahead_states_no_plan_as_done(sentence: str, quote: str,
                                                                             lang: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is None or got.kind != "plan", got


@pytest.mark.parametrize(
    ("sentence", "quote", "lang", "conflict"),
    [
        ("沿线部分市县计划启动征地拆迁前期准备工作。", "沿线部分市县已启动征地拆迁前期准备工作。",
         "zh", True),
        ("The health department is planning to open four walk-in vaccination clinics.",
         "The department has opened four walk-in vaccination clinics since February.", "en", True),
        # the quote writes the deed in the past: 了 after the verb, an English past tense
        ("全省计划选派1200名城镇骨干教师到乡村学校支教一年。",
         "2024年，全省还选派了1200名城镇骨干教师到乡村学校支教，支教期限为一年。", "zh", True),
        ("省里计划组建澜西引水集团有限公司，负责工程运营管理。",
         "为负责工程建成后的运营管理，省里组建了澜西引水集团有限公司，注册资本200亿元。", "zh", True),
        ("Aster plans to sign a licensing deal with Tomoe Pharma covering velmarotide in Japan.",
         "In August 2024 it signed a licensing deal with Japan's Tomoe Pharma, which paid $150 million "
         "upfront for the rights to develop and sell velmarotide in Japan.", "en", True),
        ("The city plans to expand the bike network.", "The city expanded the bike network in 2023.",
         "en", True),
        # ... not when the quote plans it too, elsewhere
        ("公司计划推出新款手机。", "公司去年推出了新款手机，并计划明年推出新款手机。", "zh", False),
        ("The city plans to expand the bike network.",
         "The city said it expanded the bike network in 2023 and plans to expand it again.", "en", False),
        # the quote plans too, or the sentence says it is done
        ("沿线部分市县计划启动征地拆迁前期准备工作。", "沿线部分市县计划启动征地拆迁前期准备工作。",
         "zh", False),
        ("The health department has opened four walk-in vaccination clinics.",
         "The department has opened four walk-in vaccination clinics since February.", "en", False),
    ],
)
def test_a_plan_where_the_quote_says_it_is_done_is_a_conflict(sentence: str, quote: str, lang: str,
                                                              conflict: bool) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert (got is not None and got.kind == "done") is conflict, got


def test_an_opposite_word_is_read_in_a_paraphrase_that_reorders_its_clauses_too() -> None:
    """Where the quote repeats less than half the sentence in order (its clauses come the other
    way round), an opposite word with two of the sentence's words near it in both still
    contradicts it; "with no" says "without"."""
    got = quote_conflict(
        "After correcting for stellar contamination, the Heidelberg group found the water feature "
        "strengthened by roughly 40%.",
        "The Heidelberg group, led by Dr. Jonas Weber, re-examined three of the four transits and found that "
        "the water feature weakened by about 40 percent after accounting for stellar contamination.", "en")
    assert got is not None and got.kind == "opposite", got
    assert quote_conflict("He scored the winner to help United defeat Arsenal in the cup final.",
                          "In the cup final, a famous victory for United over Arsenal came from his late "
                          "winner.", "en") is None   # "defeat" the verb is no opposite of "victory"
    assert quote_conflict(
        "As of April 2013, the movie is reported to have survived but without a projection print as of yet.",
        "This will probably include Inside of the Cup (surviving but so far with no projection print), "
        "as of April 2013.", "en") is None



@pytest.mark.parametrize(("sentence", "quote", "lang"), [
 ("The flight was delayed because of fog over the airport.",
  "The flight was delayed due to fog over the airport.", "en"),
 ("HSBC is one of the world's largest banks by assets.",
  "HSBC is the world's fifth-largest bank by assets.", "en"),
 ("JPMorgan is among the largest banks in America.", "JPMorgan is the 8th-largest bank in America.", "en"),
 ("Osaka is Japan's second-largest metropolitan area.",
  "Osaka is Japan's largest metropolitan area after Tokyo.", "en"),
 ("日本是全球第三大经济体。", "日本是除美国和中国以外全球最大的经济体。", "zh"),
 ("Both companies will merge next year.", "Both companies have agreed to merge next year.", "en"),
 ("The council will close the library in June.", "The council has voted to close the library in June.", "en"),
 ("The board plans to sell the unit this year.", "The board has decided to sell the unit this year.", "en"),
 ("The firm must pay a fine of $5 million.", "The firm was ordered to pay a fine of $5 million.", "en"),
 ("It was undoubtedly the worst storm in decades.", "It was without doubt the worst storm in decades.", "en"),
 ("所有员工必须参加培训。", "所有员工都要参加培训。", "zh"),
 ("该公司必须赔偿原告50万元。", "法院责令该公司赔偿原告50万元。", "zh"),
 ("该公司不再生产该车型。", "该公司已停止生产该车型。", "zh"),
 ("他没有接受这份邀请。", "他已拒绝这份邀请。", "zh"),
 ("France fought England at Agincourt in 1415.", "England fought France at Agincourt in 1415.", "en"),
 ("Biden debated Trump in Atlanta in June.", "Trump debated Biden in Atlanta in June.", "en"),
 ("宁德时代携手特斯拉建设新工厂。", "特斯拉携手宁德时代建设新工厂。", "zh"),
 ("华为联手比亚迪推出新车型。", "比亚迪联手华为推出新车型。", "zh"),
 ("中国女排以3比1战胜日本女排。", "日本女排以1比3负于中国女排。", "zh"),
])
def test_faithful_pairs_a_review_found_the_new_rules_refused(sentence: str, quote: str, lang: str) -> None:
    """"because of" for "due to", "one of the world's largest" for "fifth-largest", "largest after
    Tokyo", a decision ("has agreed to merge") for a plan, "ordered to pay" for "must pay",
    "不再生产" for "已停止生产", verbs that make roles one ("fought", 携手), and a score read with
    its converse verb ("3比1战胜" / "1比3负于")."""
    assert quote_conflict(sentence, quote, lang) is None
    assert rank_conflict(sentence, quote, lang) is None


def test_ranks_are_read_in_linear_time() -> None:
    """Each superlative looked for its clause's end from its own position (n² for "最大" × n)."""
    from tracer.conflict import _MAX_RANKS, _ranks

    assert len(_ranks("最大" * 100_000, True)) == _MAX_RANKS
    assert rank_conflict("最大" * 100_000, "第三大", "zh") is not None


@pytest.mark.parametrize(("sentence", "quote", "lang"), [
    # a second review: the exemptions above must not hide these real contradictions
    ("Apple overtook Samsung in smartphone sales in 2023 as prices fell.",
     "Samsung overtook Apple in smartphone sales in 2023 as prices fell.", "en"),
    ("Biden spoke before Trump at the convention.", "Trump spoke before Biden at the convention.", "en"),
    ("Acme became the largest bank in Ohio after the merger.",
     "Acme became the third largest bank in Ohio after the merger.", "en"),
    ("Acme was the largest bank in Ohio after 2020.",
     "Acme was the third largest bank in Ohio after 2020.", "en"),
    ("Acme is the largest employer outside the city of Columbus.",
     "Acme is the fifth largest employer outside the city of Columbus.", "en"),
    ("该公司解除限制后成为全国最大的汽车制造商。",
     "该公司解除限制后成为全国第三大汽车制造商。", "zh"),
    ("除夕当天该商场成为全国最大的购物中心。",
     "除夕当天该商场成为全国第三大的购物中心。", "zh"),
    ("The new line opened to passengers in March.",
     "The new line is due to open to passengers in March.", "en"),
    ("星图软件于2023年收购了远航科技，该交易已被监管部门批准。",
     "远航科技于2023年收购了星图软件，该交易已被监管部门批准。", "zh"),
    ("中国队在决赛中战胜了日本队，上座率低于预期。",
     "日本队在决赛中战胜了中国队，上座率低于预期。", "zh"),
    ("企业必须在年底前完成整改。", "企业可能要在年底前完成整改。", "zh"),
    ("The Northwind plant in Toledo will certainly close by the end of 2025, the company said.",
     "The Northwind plant in Toledo is not sure to close by the end of 2025, the company said.", "en"),
])
def test_real_contradictions_the_exemptions_must_not_hide(sentence: str, quote: str, lang: str) -> None:
    assert quote_conflict(sentence, quote, lang) or rank_conflict(sentence, quote, lang)



def test_a_figure_the_quote_gives_another_subject_is_a_conflict() -> None:
    quote = ("公开资料显示，东海航运集团是国内第三大集装箱航运企业，运营船舶约230艘；"
             "南洋船务总部位于新加坡，运营船舶约85艘。")
    assert quote_conflict("东海航运集团运营船舶约85艘。", quote, "zh") == Conflict(
        "figures-slot", "东海运营船舶85艘", "东海运营船舶230艘")
    assert quote_conflict("南洋船务运营船舶约85艘。", quote, "zh") is None
    assert quote_conflict("东海航运集团运营船舶约230艘。", quote, "zh") is None


@pytest.mark.parametrize(("sentence", "quote", "lang", "conflict"), [
    ("补贴资金由中央和地方财政按4:6分担。", "细则规定，补贴资金由中央财政和地方财政按照6:4的比例共同承担。",
     "zh", True),
    ("受试者按1:2的比例随机分配至两组。", "受试者按2:1的比例随机分配至两组。", "zh", True),
    ("两家按6比4的比例分成。", "两家按4比6的比例分成。", "zh", True),
    ("Patients were randomised 1:2 to the drug or placebo.",
     "Patients were randomised 2:1 to the drug or placebo.", "en", True),
    # the same ratio; a score read the other way round with its verb; no word that says ratio
    ("受试者按2:1的比例随机分配至两组。", "受试者按2:1的比例随机分配至两组。", "zh", False),
    ("郑钦文以2比1战胜克贝尔。", "克贝尔以1比2负于郑钦文。", "zh", False),
    ("The meeting began at 10:30 in Paris.", "The meeting began at 30:10 in Paris.", "en", False),
    # the quote states it both ways: the sentence's way counts
    ("The cost is split 1:2 between them.", "The cost is split 1:2 between them, not 2:1.", "en", False),
    # the two sides named the other way round: the same ratio
    ("男女比例为1:2。", "女男比例为2:1。", "zh", False),
    ("The mix is sand to cement 3:1.", "The mix is cement and sand 1:3.", "en", False),
    ("Patients were randomised 2:1 to drug or placebo.", "Patients were randomised 1:2 to placebo or drug.",
     "en", False),
    # a word moved across the ratio turns no sides round
    ("双方按4:6分担费用。", "费用由双方按照6:4的比例分担。", "zh", True),
    # words of another clause are no sides of the ratio
    ("项目于2020年10月开工，由湖北省与国铁集团按6比4的比例共同出资。",
     "项目由湖北省与国铁集团按照4:6的比例共同出资建设，于2020年10月开工。", "zh", True),
])
def test_a_ratio_the_other_way_round_is_a_conflict(sentence: str, quote: str, lang: str,
                                                   conflict: bool) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert (got is not None and got.kind == "ratio") is conflict, got


_GROWTH = "财报显示，星曜科技今年上半年营业收入为486亿元，同比增长21%；净利润为29亿元，同比增长35%。"


@pytest.mark.parametrize(("sentence", "conflict"), [
    ("星曜上半年营收486亿元，同比增长35%。", True),        # the profit's growth given to the revenue
    ("星曜上半年净利润约29亿元，较上年增长21%。", True),
    ("星曜上半年营收486亿元，同比增长21%。", False),
    ("星曜上半年净利润29亿元，同比增长35%。", False),
    ("星曜上半年营收486亿元，净利润同比增长35%。", False),   # the change is not the figure's before it
    ("星曜上半年营收486亿元，同比增长约20%。", False),       # 21% is about 20%
    ("星曜上半年营收486亿元，环比增长35%。", False),         # another kind of change: not compared
    ("星曜上半年营收486亿元，增长35%。", True),               # a plain "增长" is year on year
])
def test_a_change_the_quote_gives_another_figure_is_a_conflict(sentence: str, conflict: bool) -> None:
    got = quote_conflict(sentence, _GROWTH, "zh")
    assert (got is not None and got.kind == "figures-slot") is conflict, got
    if conflict:  # a quote that gives one change only does not say whose the sentence's is
        assert quote_conflict(sentence, "营业收入为486亿元，同比增长21%。", "zh") is None


def test_a_change_is_compared_with_the_same_kind_of_change() -> None:
    """"环比增长35%" is the quote's own 环比 figure, whatever its 同比 one: no conflict."""
    quote = "公司营收486亿元，同比增长21%，环比增长35%；净利润29亿元，同比增长35%。"
    assert quote_conflict("公司营收486亿元，环比增长35%。", quote, "zh") is None
    # a plain "增长35%" may be the quote's 环比 35%: no conflict
    assert quote_conflict("公司营收486亿元，增长35%。", quote, "zh") is None


# each quote, and its sentence: the quote without the bracketed word(s)
_TAKEN_BACK = [
    "Baroque works were [seldom] performed in the 20th century.",
    "The name Michael Collins is [rarely] recalled despite his role.",
    "The drug [probably] reduces the risk of heart attack in older adults.",
    "The company was [sometimes] late in paying its suppliers in 2019.",
    "The tumour was [non-]cancerous and was removed.",
]


@pytest.mark.parametrize("marked", _TAKEN_BACK)
def test_a_quote_that_takes_part_of_the_sentence_back_contradicts_it(marked: str) -> None:
    import re

    m = re.search(r"\[(.+?)-?\]", marked)
    assert m is not None
    word = m.group(1)
    quote = re.sub(r"\[(.+?)\]", r"\1", marked)
    sentence = re.sub(r"\[.+?\] ?", "", marked)
    got = quote_conflict(sentence, quote, "en")
    assert got is not None and got.kind == "qualified" and word in got.quote_says, got
    assert "qualifies" in got.describe()
    # so does a word of polarity or a prefix in place of the sentence's word
    got = quote_conflict("The festival is run by a for-profit company.",
                         "The festival is run by a non-profit company.", "en")
    assert got is not None and got.kind == "qualified"


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Baroque works were seldom performed in the 20th century.",   # the sentence qualifies it too
     "Baroque works were rarely performed in the 20th century."),
    ("The drug is not often used in children.", "The drug is rarely used in children."),   # the same
    ("The drug may reduce the risk of heart attack.", "The drug probably reduces the risk of heart attack."),
    ("Drivers said they had been misclassified as contractors.",   # a verb for a verb
     "Drivers alleged they had been misclassified as contractors."),
    ("The court upheld the fine of 4.3 billion euros.",   # not read: it overstates a little
     "The court largely upheld the fine of 4.3 billion euros."),
    # a review's faithful sentences: the qualifier comes with the word it qualifies, or names the thing
    ("The Titanic sank on 15 April 1912 after striking an iceberg.",
     "The supposedly unsinkable Titanic sank on 15 April 1912 after striking an iceberg."),
    ("Napoleon's invasion of Russia in 1812 cost more than 400,000 lives.",
     "Napoleon's failed invasion of Russia in 1812 cost more than 400,000 lives."),
    ("The bill passed the Senate, 51 votes to 49.", "The bill barely passed the Senate, 51 votes to 49."),
    ("A study of 120,000 nurses found that coffee drinkers had a lower risk of stroke.",
     "A prospective study of 120,000 nurses found that coffee drinkers had a lower risk of stroke."),
    ("The author's nonfiction book won the Pulitzer Prize in 2010.",
     "The author's non-fiction book won the Pulitzer Prize in 2010."),
    ("The peace movement grew rapidly in 1968.", "The anti-war movement grew rapidly in 1968."),
])
def test_a_qualifier_the_sentence_shares_or_a_mild_one_is_no_conflict(sentence: str, quote: str) -> None:
    assert quote_conflict(sentence, quote, "en") is None


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Having enough serotonin is thought to contribute to depression.",
     "Not having enough serotonin is thought to contribute to depression."),
    ("All patients respond to the new drug in the same way.",
     "Not all patients respond to the new drug in the same way."),
])
def test_a_negation_opening_the_quote_is_read(sentence: str, quote: str) -> None:
    got = quote_conflict(sentence, quote, "en")
    assert got is not None and got.kind == "negation", got


@pytest.mark.parametrize("marked", [
    "该药物[很少]用于五岁以下的儿童，医生通常会选择其他药物。",
    "这家公司[偶尔]拖欠供应商的货款，引起了一些不满。",
    "警方表示，该男子[涉嫌]挪用公款超过两百万元。",
    "这种肿瘤是[非]恶性的，已经通过手术切除。",
    "该地区[部分]学校已经恢复线下教学。",
])
def test_a_chinese_quote_that_takes_part_of_the_sentence_back_contradicts_it(marked: str) -> None:
    import re

    quote = re.sub(r"\[(.+?)\]", r"\1", marked)
    sentence = re.sub(r"\[.+?\]", "", marked)
    got = quote_conflict(sentence, quote, "zh")
    assert got is not None and got.kind == "qualified", got


def test_a_chinese_sentence_that_qualifies_it_too_is_no_conflict() -> None:
    assert quote_conflict("该药物极少用于五岁以下的儿童，医生通常会选择其他药物。",
                          "该药物很少用于五岁以下的儿童，医生通常会选择其他药物。", "zh") is None


@pytest.mark.parametrize("frame", ["据称", "据说"])
def test_hearsay_in_chinese_frames_the_quote(frame: str) -> None:
    from tracer.conflict import framed

    got = framed("该市市长收受了开发商的贿赂。", f"{frame}该市市长收受了开发商的贿赂。", "zh")
    assert got is not None and got.kind == "framed" and got.quote_says == frame


@pytest.mark.parametrize(("sentence", "quote", "words"), [
    ("This is a bad way for new players to learn the rules.",
     "This is a good way for new players to learn the rules.", ("bad", "good")),
    ("Employees contribute through a large deduction every month.",
     "Employees contribute through a small deduction every month.", ("large", "small")),
    ("Madonna clasped the old woman's hand while performing.",
     "Madonna clasped the young woman's hand while performing.", ("old", "young")),
    ("The drug can prevent heart disease in adults.", "The drug can cause heart disease in adults.",
     ("prevent", "cause")),
    ("Both groups were statistically different in lung function.",
     "Both groups were statistically similar in lung function.", ("different", "similar")),
])
def test_common_opposites_one_for_the_other_contradict(sentence: str, quote: str,
                                                       words: tuple[str, str]) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("opposite", *words)


@pytest.mark.parametrize(("sentence", "quote"), [
    ("A large study found that coffee lowers the risk.",       # another noun: a paraphrase
     "Using a small sample, researchers found that coffee lowers the risk in a study."),
    ("The police arrested a young man near the station on Friday.",
     "The police arrested a 25-year-old man near the station on Friday."),
])
def test_common_opposites_in_a_longer_change_are_no_conflict(sentence: str, quote: str) -> None:
    assert quote_conflict(sentence, quote, "en") is None


@pytest.mark.parametrize(("sentence", "quote", "lang"), [
    ("The central bank will cut interest rates in June.",
     "If the economy slows, the central bank will cut interest rates in June.", "en"),
    ("Its inspiration came from Asia after the conquests.",
     "Unless the Macedonians invented a vaulted roof, its inspiration came from Asia after the conquests.",
     "en"),
    ("央行将在六月降息。", "如果经济放缓，央行将在六月降息。", "zh"),
])
def test_a_quote_that_only_says_it_on_a_condition_contradicts(sentence: str, quote: str, lang: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is not None and got.kind == "condition", got
    assert "condition" in got.describe()
    assert quote_conflict(quote, quote, lang) is None   # the sentence keeps the condition


def test_a_claim_its_record_states_only_on_a_condition_is_not_cited() -> None:
    recs = [{"url": "https://x.example/", "title": "Rates",
             "content": "If the economy slows, the central bank will cut interest rates in June."}]
    r = trace("The central bank will cut interest rates in June.", recs)
    assert not r.citations, r.citations


@pytest.mark.parametrize(("sentence", "quote", "says"), [
    # a negation the quote lacks far from the spot ("without", eleven words on) does not answer it
    ("Unlike many languages, a new learner cannot make good strides in learning Russian without "
     "worrying about grammar.", "Unlike many languages, a new learner can make good strides in learning "
     "Russian without worrying about grammar.", "cannot make"),
    # the negated word is the one after the article ("not the cause …, but for …" is no contrast)
    ("Basically, the defendant is not the factual or but for cause of the harm if the act starts the chain.",
     "Basically, the defendant is the factual or but for cause of the harm if the act starts the chain.",
     "not the"),
])
def test_a_negation_the_sentence_adds_far_from_another_is_read(sentence: str, quote: str, says: str) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("negation", says, "")


@pytest.mark.parametrize(("quote", "condition"), [
    ("The central bank will cut interest rates in June if the economy slows.", "if the economy slows"),
    ("The central bank will cut interest rates in June, unless inflation rises.", "unless inflation rises"),
    ("The central bank will cut interest rates in June only if the economy slows.",
     "only if the economy slows"),
])
def test_a_condition_after_what_the_sentence_says_contradicts_it(quote: str, condition: str) -> None:
    sentence = "The central bank will cut interest rates in June."
    assert quote_conflict(sentence, quote, "en") == Conflict("condition", "", condition)
    assert not trace(sentence, [{"url": "https://x.example/", "title": "Rates", "content": quote}]).citations
    # "even if" concedes: the rates are cut either way
    even = "The central bank will cut interest rates in June even if the economy grows."
    assert quote_conflict(sentence, even, "en") is None


@pytest.mark.parametrize(("sentence", "quote", "kind"), [
    ("中方首次表达了对美国加征关税的关切。", "中方表达了对美国加征关税的关切。", "addition"),
    ("宋朝是中国历史上一个最重要的朝代。", "宋朝是中国历史上一个重要的朝代。", "addition"),
    ("牛头陆巡的价格最高，配置也最好。", "牛头陆巡的价格较高，配置也很好。", "superlative"),
    ("The company is the only supplier of the chips to the army.",
     "The company is the supplier of the chips to the army.", "addition"),
    ("这种描述完全符合真实的历史。", "这种描述完全不符合真实的历史。", "negation"),   # cut otherwise
])
def test_a_first_a_most_or_a_negation_cut_otherwise_contradicts(sentence: str, quote: str, kind: str) -> None:
    lang = "en" if sentence.isascii() else "zh"
    got = quote_conflict(sentence, quote, lang, record=quote)
    assert got is not None and got.kind == kind, got


@pytest.mark.parametrize(("sentence", "quote", "record"), [
    # the record says it is a first elsewhere
    ("中方首次表达了对美国加征关税的关切。", "中方表达了对美国加征关税的关切。",
     "这是中方首次公开表态。中方表达了对美国加征关税的关切。"),
    # "first" is no such word in English: the first iPhone is the iPhone of 2007
    ("Apple released the first iPhone in 2007 in the US.", "Apple released the iPhone in 2007 in the US.",
     "Apple released the iPhone in 2007 in the US."),
    # qualifiers that qualify nothing: 有 already says "some", 部分 names a part, 所谓 defines
    ("当然也有投资者只看利润，不看其他。", "当然也有一部分投资者只看利润，不看其他。", ""),
    ("捕蝇草叶缘含有蜜腺，能分泌蜜汁。", "捕蝇草叶缘部分含有蜜腺，能分泌蜜汁。", ""),
    ("“八音”，就是乐器的八大类。", "所谓“八音”，就是乐器的八大类。", ""),
    ("这家“网红”餐厅每天接待顾客上千人。", "这家所谓的“网红”餐厅每天接待顾客上千人。", ""),
    ("今年出口增长了8%。", "统计数据说明今年出口增长了8%。", ""),          # 据说 inside 数据说明
    # advice: the condition says when to follow it
    ("建议将食物转移到微波炉专用的容器中加热。",
     "如果需要加热食物，建议将食物转移到微波炉专用的容器中加热。", ""),
])
def test_what_the_new_chinese_rules_leave_alone(sentence: str, quote: str, record: str) -> None:
    lang = "en" if sentence.isascii() else "zh"
    assert quote_conflict(sentence, quote, lang, record=record or quote) is None


@pytest.mark.parametrize(("sentence", "quote"), [
    # a review's faithful sentences: the sentence states the condition in its own words
    ("The museum offers free entry to visitors under 18.",
     "If you are under 18, the museum offers free entry."),
    ("俄罗斯是世界上面积最大的国家。", "若以面积计算，俄罗斯是世界上最大的国家。"),
    # no condition: an idiom, a participle, a concession
    ("The storm made the fuel shortage worse.", "If anything, the storm made the fuel shortage worse."),
    ("The service reaches 2 million households.",
     "Provided free of charge, the service reaches 2 million households."),
    ("The company grew quickly in the 1990s.", "The company grew quickly in the 1990s, if unevenly."),
    # a negation on both sides: "not wearing … can cause" is "wearing … can prevent"
    ("Wearing a seatbelt can prevent serious injury in a crash.",
     "Not wearing a seatbelt can cause serious injury in a crash."),
])
def test_what_the_condition_and_opposite_rules_leave_alone(sentence: str, quote: str) -> None:
    lang = "en" if sentence.isascii() else "zh"
    assert quote_conflict(sentence, quote, lang, record=quote) is None


def test_a_qualifier_written_as_a_title_is_no_qualifier() -> None:
    assert quote_conflict("Her single reached number two in the UK charts in 1999.",
                          "Her single Sometimes reached number two in the UK charts in 1999.", "en") is None


@pytest.mark.parametrize(("sentence", "quote", "says"), [
    ("布雷迪带领三支不同的球队夺得超级碗冠军。", "布雷迪带领两支不同的球队夺得超级碗冠军。",
     ("三支", "两支")),
    ("该公司推出了五款新车型，覆盖三个细分市场。", "该公司推出了四款新车型，覆盖三个细分市场。",
     ("五款", "四款")),
])
def test_a_chinese_count_with_its_measure_word_is_a_figure(sentence: str, quote: str,
                                                          says: tuple[str, str]) -> None:
    assert quote_conflict(sentence, quote, "zh") == Conflict("figure", *says)
    assert quote_conflict(sentence, sentence, "zh") is None


def test_a_chinese_forecast_before_the_year_is_a_plan() -> None:
    got = quote_conflict("世界银行2023年全球经济增速为2.1%，低于去年。",
                         "世界银行预计2023年全球经济增速为2.1%，低于去年。", "zh")
    assert got is not None and got.kind == "plan" and got.quote_says == "预计"


def test_a_record_s_stems_are_read_on_the_first_lookup_and_answer_as_the_set_does() -> None:
    """The verifier hands the addition checks a `RecordStems`, which stems the record only when a
    check looks a word up; the checks answer as they do with the record's text or its stem set."""
    from tracer.conflict import RecordStems, cause_addition, clause_addition, record_stems

    record = ("Net income fell 6% in 2023 as the company increased spending. "
              "Shares of the firm closed higher. Demand in Asia was strong.")
    quote = "Net income fell 6% in 2023 as the company increased spending."
    lazy = RecordStems(record)
    assert lazy._stems is None
    for said in ("Net income fell 6% in 2023 because of weaker demand in Europe.",
                 "Net income fell 6% in 2023 because of strong demand in Asia.",
                 "Net income fell 6% in 2023 as the company increased spending, a record for the bank.",
                 "Net income fell 6% in 2023 as the company increased spending, with shares closing higher."):
        for check in (cause_addition, clause_addition):
            expected = check(said, quote, record)
            assert check(said, quote, lazy) == expected == check(said, quote, record_stems(record)), said
    assert cause_addition("Net income fell 6% in 2023 because of weaker demand in Europe.", quote, lazy)
    assert lazy._stems == record_stems(record)
    untouched = RecordStems(record)
    assert cause_addition("Shares closed higher.", quote, untouched) is None and untouched._stems is None


def test_a_year_month_agrees_with_a_month_the_record_states_under_that_year() -> None:
    # "12月" after "2024年…": the record states December 2024, so "2024年12月" is no figure of its own
    byd = {"url": "https://www.byd.example/overseas", "title": "比亚迪海外销量",
           "content": "2024年比亚迪海外销量达到41.7万辆，同比增长71.9%。"
                      "12月海外单月销量为57,510辆，首次突破5万辆。"}
    other = {"url": "https://x.example/weather", "title": "天气", "content": "巴黎今年春天天气温和。"}
    said = "比亚迪海外销量在2024年12月单月突破5万辆。"
    assert trace(said, [byd, other]).citations
    for wrong in ("2023年12月", "2024年11月"):
        assert not trace(said.replace("2024年12月", wrong), [byd, other]).citations


def test_words_given_to_a_speaker_the_record_never_names_are_a_conflict() -> None:
    from tracer.conflict import unnamed_speaker

    quote = "Okafor said the company now expects input cost inflation of about 3% for the full year."
    got = unnamed_speaker("Chief Executive Officer Maren Lindqvist said Halvorsen now expects input cost "
                          "inflation of about 3% for the full year.", quote, quote, "en")
    assert got == Conflict("speaker", "Maren Lindqvist", "Okafor")
    quote = '"It is a modest but meaningful result for a condition with very few options," Reiner said.'
    got = unnamed_speaker("Principal investigator Dr. Anjali Mehra described the result as modest but "
                          "meaningful for a condition with very few options.", quote, quote, "en")
    assert got == Conflict("speaker", "Anjali Mehra", "Reiner")
    quote = "中国人民大学劳动人事学院教授李明远认为，新规的具体效果取决于平台算法的透明度和地方执法力度。"
    got = unnamed_speaker("市场监管总局网络交易监督管理司司长王振华认为，新规的具体效果取决于平台算法的"
                          "透明度和地方执法力度。", quote, quote, "zh")
    assert got is not None and got.kind == "speaker" and got.sentence_says == "王振华"
    assert "whom the record never names" in got.describe()


def test_a_speaker_the_record_names_or_a_page_that_speaks_for_itself_is_no_conflict() -> None:
    from tracer.conflict import unnamed_speaker

    record = ("Halvorsen's chief executive, Maren Lindqvist, presented the results. Okafor said the company "
              "now expects input cost inflation of about 3% for the full year.")
    quote = record.split(". ", 1)[1]
    # named elsewhere in the record: the verifier's other checks, not this one, read who said what
    assert unnamed_speaker("Lindqvist said Halvorsen now expects input cost inflation of about 3% for the "
                           "full year.", quote, record, "en") is None
    # a magazine's own words: its page need not name it; nor does a sentence's first word name anyone
    quote = "Starship Mine is one of the ten most fun episodes, as Picard must save his ship, fans said."
    assert unnamed_speaker('Popular Mechanics said that "Starship Mine" was one of the ten most fun '
                           'episodes.', quote, quote, "en") is None
    quote = "Okafor said inflation would ease."
    assert unnamed_speaker("Economists said inflation would ease.", quote, quote, "en") is None
    assert unnamed_speaker("Researchers said inflation would ease.", quote, quote, "en") is None
    # a quote that gives the words to no one
    quote = "研究人员测定，嫦娥六号着陆区玄武岩的形成年龄约为28.07亿年。"
    assert unnamed_speaker("国家航天局局长张克俭表示，嫦娥六号着陆区玄武岩的形成年龄约为28.07亿年。",
                           quote, quote, "zh") is None


def test_a_sentence_that_gives_a_record_s_words_to_another_speaker_is_not_cited() -> None:
    from tracer import trace

    records = [{"url": "https://news.example/halvorsen-q3", "title": "Halvorsen third quarter",
                "content": "Halvorsen Foods reported third-quarter revenue of $2.1 billion on Tuesday. "
                           "Okafor said the company now expects input cost inflation of about 3% for the "
                           "full year, down from its earlier estimate of 4%."}]
    wrong = ("# Halvorsen\n\nChief Executive Officer Maren Lindqvist said the company now expects input "
             "cost inflation of about 3% for the full year.\n")
    result = trace(wrong, records)
    assert result.citations == () and result.report == wrong
    assert "whom the record never names" in result.unsupported[0].reason
    right = ("# Halvorsen\n\nOkafor said the company now expects input cost inflation of about 3% for the "
             "full year.\n")
    assert trace(right, records).citations


def test_a_change_measured_from_the_year_before_is_the_same_change() -> None:
    # "dropped 20% from 2023" is the fall in 2024
    quote = ("Lithium-ion battery pack prices dropped 20% from 2023 to a record low of $115 per "
             "kilowatt-hour, according to BloombergNEF.")
    assert quote_conflict("Lithium-ion battery pack prices fell 20% in 2024 to $115 per kilowatt-hour.",
                          quote, "en") is None
    assert quote_conflict("Lithium-ion battery pack prices fell 20% in 2022 to $115 per kilowatt-hour.",
                          quote, "en") == Conflict("figure", "2022", "2023")
    assert quote_conflict("Lithium-ion battery pack prices fell 20% in 2024 to $115 per kilowatt-hour.",
                          quote.replace("from 2023", "in 2023"), "en") == Conflict("figure", "2024", "2023")


@pytest.mark.parametrize(("sentence", "quote", "said"), [
    ("安平省已将EV71疫苗纳入省级免费接种项目。",
     "记者从安平省卫健委获悉，该省正在研究将EV71疫苗纳入省级免费接种项目，相关方案已提交省政府审议，尚未最终确定。",
     "已将EV71疫苗纳入"),
    ("宁川北站已随5号线同步开通。",
     "因涉及与铁路部门的接口调试，宁川北站暂缓开通，预计于2026年春运前投入使用。", "已随5号线同步开通"),
    ("国家游泳队已于4月公布世锦赛最终参赛名单。", "最终名单将由国家游泳队于5月公布。", "已于4月公布"),
    ("云岭市男方陪产假已由15天延长至20天。",
     "另外，办法提出将男方陪产假由15天延长至20天，但这一条款需待省人大常委会修订条例后方能落地。",
     "已由15天延长"),
])
def test_a_chinese_deed_the_quote_says_is_still_to_come_is_a_conflict(sentence: str, quote: str,
                                                                       said: str) -> None:
    got = quote_conflict(sentence, quote, "zh")
    assert got is not None and got.kind == "plan" and got.sentence_says == said, got


def test_a_chinese_deed_the_quote_also_says_is_done_is_no_conflict() -> None:
    for quote in ("地铁5号线原计划于2024年开通，经过调试，已于12月28日开通运营。",
                  "地铁5号线于12月28日开通运营。"):
        assert quote_conflict("地铁5号线已开通运营。", quote, "zh") is None, quote
    # "非免疫规划疫苗" is a kind of vaccine, not a plan
    assert quote_conflict("在安平省，EV71疫苗目前需自费接种，全程两剂，每剂约200元。",
                          "目前，EV71疫苗在安平省属于自费的非免疫规划疫苗，全程接种两剂，每剂价格约为200元。",
                          "zh") is None


def test_an_english_figure_dated_by_the_year_the_quote_gives_another_figure_is_a_conflict() -> None:
    quote = "The state distributed 310,000 naloxone kits in 2024, up from 145,000 in 2023."
    assert quote_conflict("Calder distributed 310,000 naloxone kits in 2023.", quote, "en") == Conflict(
        "figure", "310000 … 2023", "310000 … 2024")
    # each figure with its own year
    for sentence in ("Calder distributed 310,000 naloxone kits in 2024.",
                     "Calder distributed 145,000 naloxone kits in 2023."):
        assert quote_conflict(sentence, quote, "en") is None, sentence


def test_a_figure_six_words_from_its_year_is_dated_by_it() -> None:
    quote = ("NVSA data show 14 battery-related recall campaigns for electric vehicles in 2024, up from 9 in "
             "2023.")
    assert quote_conflict("There were 9 battery-related recall campaigns for electric vehicles in 2024.",
                          quote, "en") == Conflict("figure", "9 … 2024", "9 … 2023")
    # (not across a conjunction: "and" opens another clause)
    from tracer.conflict import en_year_moved
    assert en_year_moved("There were 9 recalls in 2024.", "There were 9 recalls and several fires in 2023, "
                         "and 14 recalls in 2024.") is None


@pytest.mark.parametrize(("sentence", "quote", "said", "quoted"), [
    ("Average wheat yields fell to 2.5 tonnes per hectare from 2.1 tonnes a year earlier.",
     "Average wheat yields dropped to 2.1 tonnes per hectare from 2.5 tonnes a year earlier.",
     "2.5 from 2.1", "2.1 from 2.5"),
    ("Recall campaigns fell to 9 from 14.", "There were 14 recall campaigns, up from 9.",
     "9 from 14", "14 from 9"),
    ("Turnout fell from 61.4% to 57.9%.", "Turnout climbed to 61.4% from 57.9%.",
     "57.9 from 61.4", "61.4 from 57.9"),
])
def test_a_change_the_other_way_round_is_a_swap(sentence: str, quote: str, said: str, quoted: str) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("swap", said, quoted)


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Turnout climbed to 61.4% from 57.9% at the 2021 election.", "Turnout rose from 57.9% to 61.4%."),
    ("Profit rose to $312 million in 2023 from $298 million.",
     "Profit was $312 million in 2023, up from $298 million."),
    ("Sales rose to 5 in 2024 from 2023.", "Sales rose from 2023 to 2024."),     # years are no figures here
])
def test_the_same_change_in_other_words_is_no_swap(sentence: str, quote: str) -> None:
    from tracer.conflict import _en_from_to_swapped
    assert _en_from_to_swapped(sentence, quote) is None


def test_an_estimate_or_the_whole_line_is_no_plan_or_other_name() -> None:
    # a sentence that gives an estimate as one ("reckons", "据测算") claims no deed the quote plans
    quote = ("Analysts at Redpoint Research estimate Corvane would need to sell roughly 90,000 trucks a "
             "year to break even.")
    assert quote_conflict("Redpoint Research reckons Corvane must sell roughly 90,000 trucks a year to break "
                          "even.", quote, "en") is None
    assert quote_conflict("Corvane must sell roughly 90,000 trucks a year to break even.", quote,
                          "en") == Conflict("plan", "must", "would need to")
    assert quote_conflict("据测算，这项新政每年需要财政投入约2.6亿元，其中六成由市级财政承担。",
                          "据测算，该市每年将投入财政资金约2.6亿元，其中六成由市级财政承担。", "zh") is None
    # "全线" (the whole line) and "全部" (all of it) say the same of a metro line
    assert quote_conflict("宁川地铁5号线一期全长34.6公里，全线为地下线，共设27座车站。",
                          "5号线一期工程全长34.6公里，全部为地下线，共设车站27座。", "zh") is None


HEAT_PUMPS = {"url": "https://cleanenergy.example/heat-pumps-2024",
              "title": "German heat pump sales nearly halve in 2024",
              "content": "Heat pump sales in Germany fell 48% in 2024 to around 193,000 units. "
                         "Industry groups blamed uncertainty over subsidies. "
                         "Manufacturers cut shifts at several plants. "
                         "The drop came after a record 2023, when households rushed to install systems "
                         "before the revised Building Energy Act took effect."}


@pytest.mark.parametrize(("sentence", "record", "said", "stated"), [
    ("Germany's sales doubled in 2024 as buyers rushed to beat the new law.",
     "German heat pump sales nearly halve in 2024", "rose in 2024", "fell in 2024"),
    ("Exports rose sharply in 2023.", "Exports fell 12% in 2023, the customs office said.",
     "rose in 2023", "fell in 2023"),
    # "from … in 2023 to … in 2024" moves in 2024
    ("Incursions rose in 2024.", "Incursions dropped from 9 in 2023 to 6 in 2024.",
     "rose in 2024", "fell in 2024"),
])
def test_a_move_the_record_gives_only_the_other_way_that_year_is_a_conflict(
        sentence: str, record: str, said: str, stated: str) -> None:
    from tracer.conflict import direction_conflict
    assert direction_conflict(sentence, record, "en") == Conflict("direction", said, stated)


@pytest.mark.parametrize(("sentence", "record"), [
    ("Sales fell in 2024.", "Sales fell 48% in 2024 after they doubled in 2023."),
    ("Sales doubled in 2023.", "Sales fell 48% in 2024 after they doubled in 2023."),   # another year
    ("Sales rose in 2024.", "Sales fell in the first half, but over the year sales rose in 2024."),
    ("Sales rose in 2024.", "Sales did not fall in 2024."),        # a negated move says nothing
    ("Sales did not fall in 2024.", "Sales rose in 2024."),
    ("Sales rose in 2024.", "Profits fell in 2024."),              # another thing
    ("Sales rose in 2024.", "Sales fell in 2023."),                # another year
    ("Sales rose from 2023 to 2024.", "Sales fell in 2023 to 2024 levels."),
    ("销量在2024年翻番。", "2024年销量几乎减半。"),                  # English only
])
def test_a_move_the_record_gives_both_ways_or_not_at_all_is_no_conflict(sentence: str, record: str) -> None:
    from tracer.conflict import direction_conflict
    lang = "zh" if "年" in sentence else "en"
    assert direction_conflict(sentence, record, lang) is None


def test_a_sentence_whose_record_moves_it_the_other_way_is_not_cited_though_its_quote_does_not_say() -> None:
    report = "Germany's heat pump sales doubled in 2024 as households rushed to install systems before the " \
             "revised Building Energy Act took effect.\n"
    result = trace(report, [HEAT_PUMPS, OTHER, CLIMATE])
    assert not result.citations
    assert result.unsupported[0].reason.endswith(
        "its record says it fell in 2024 where the sentence says it rose in 2024")
    faithful = "Germany's heat pump sales fell 48% in 2024, to around 193,000 units.\n"
    cited = trace(faithful, [HEAT_PUMPS, OTHER, CLIMATE]).citations
    assert [c.sources[0].url for c in cited] == [HEAT_PUMPS["url"]]


@pytest.mark.parametrize(("sentence", "quote", "lang", "said", "quoted"), [
    ("In patients with heart disease, the Mediterranean diet was no better than a low-fat diet at "
     "preventing recurrent events.",
     "The Mediterranean diet was superior to the low-fat diet in preventing major cardiovascular events.",
     "en", "no better", "superior to the low-fat"),
    ("The new drug did not outperform placebo on the primary endpoint.",
     "The new drug outperformed placebo on the primary endpoint at 12 weeks.", "en", "no better",
     "outperformed placebo"),
    ("The vaccine was more effective than the standard shot in adults over 65.",
     "In adults over 65 the vaccine was no more effective than the standard shot.", "en",
     "more effective than the standard", "no better"),
    ("地中海饮食在预防心血管事件方面并不优于低脂饮食。",
     "地中海饮食在预防主要心血管事件方面优于低脂饮食。", "zh",
     "no better", "优于低脂"),
])
def test_no_difference_against_a_difference_is_a_conflict(sentence: str, quote: str, lang: str, said: str,
                                                          quoted: str) -> None:
    assert quote_conflict(sentence, quote, lang) == Conflict("opposite", said, quoted)


@pytest.mark.parametrize(("sentence", "quote", "lang"), [
    # the same finding, in other words
    ("The Mediterranean diet was no better than a low-fat diet.",
     "The Mediterranean diet was not superior to the low-fat diet.", "en"),
    ("The drug was better than placebo.", "The drug was significantly better than placebo.", "en"),
    # the quote finds both, for another outcome each
    ("The drug was no better than placebo for pain.",
     "The drug was better than placebo for sleep but no better than placebo for pain.", "en"),
    # another thing compared to
    ("The drug was no better than aspirin.", "The drug was better than placebo.", "en"),
    ("该方案并不优于传统方案。", "该方案不优于传统方案，但费用更低。", "zh"),
])
def test_the_same_comparison_or_another_thing_compared_is_no_conflict(sentence: str, quote: str,
                                                                      lang: str) -> None:
    from tracer.conflict import _comparison_flipped
    assert _comparison_flipped(sentence, quote, lang == "zh") is None


@pytest.mark.parametrize(("sentence", "quote", "said", "quoted"), [
    ("2024年澜州新建商品住宅销售额同比下降14.6%。",
     "2024年全市新建商品住宅销售面积812万平方米，同比下降14.6%；销售额1236亿元，同比下降19.2%。",
     "销售额同比下降14.6%", "销售额…同比下降19.2%"),
    ("春节假期全省旅游收入同比增长9.2%。",
     "全省共接待游客4860万人次，按可比口径同比增长9.2%；实现旅游收入412亿元，同比增长7.5%。",
     "旅游收入同比增长9.2%", "旅游收入…同比增长7.5%"),
])
def test_a_change_the_quote_gives_another_measure_is_a_conflict(sentence: str, quote: str, said: str,
                                                                quoted: str) -> None:
    assert quote_conflict(sentence, quote, "zh") == Conflict("figures-slot", said, quoted)


@pytest.mark.parametrize(("sentence", "quote"), [
    # the measure's own change
    ("2024年新建商品住宅销售面积同比下降14.6%。",
     "2024年全市新建商品住宅销售面积812万平方米，同比下降14.6%；销售额1236亿元，同比下降19.2%。"),
    # a word of two characters names no measure for sure ("名义" qualifies both incomes)
    ("农村居民人均可支配收入名义增长6.3%。",
     "城镇居民人均可支配收入为49283元，名义增长3.9%，实际增长1.9%；农村居民收入名义增长6.3%。"),
    # another kind of change ("环比") says nothing of "同比"
    ("销售额同比下降14.6%。", "销售面积同比下降14.6%；销售额1236亿元，环比下降19.2%。"),
])
def test_a_change_of_the_measure_itself_or_of_an_unsure_measure_is_no_conflict(sentence: str,
                                                                               quote: str) -> None:
    from tracer.conflict import _zh_growth_owner
    assert _zh_growth_owner(sentence, quote) is None


def test_ahead_of_plan_against_behind_it_is_a_conflict_and_the_plan_it_beat_is_no_plan() -> None:
    quote = "3月12日，石门岭隧洞全线贯通，比原计划提前45天。"
    assert quote_conflict("石门岭隧洞的贯通时间比原计划推迟了45天。", quote, "zh") == Conflict(
        "opposite", "推迟", "提前")
    # "比原计划", "好于预期" measure against a plan: the quote plans nothing
    assert quote_conflict("石门岭隧洞提前45天贯通。", quote, "zh") is None
    assert quote_conflict("公司一季度净利润增长20%。", "公司一季度净利润增长20%，好于预期。", "zh") is None
    # a plan is still one
    got = quote_conflict("该工程已于2024年底投产。", "该工程计划于2024年底投产。", "zh")
    assert got is not None and got.kind == "plan"


def test_a_chinese_change_the_other_way_round_is_a_swap() -> None:
    quote = "数据显示，该片排片占比从上映首日的31%逐步升至2月10日的42%，上座率连续多日位居同期影片首位。"
    assert quote_conflict("《长河雪》的排片占比由上映首日的42%降至2月10日的31%。", quote, "zh") == Conflict(
        "swap", "42→31", "31→42")
    # the same change, and dates that only look like figures, are no swap
    from tracer.conflict import _zh_from_to_swapped
    assert _zh_from_to_swapped("该片排片占比从首日的31%升至2月10日的42%。", quote) is None
    assert _zh_from_to_swapped("会期由3月5日延至3月11日。", "会期从3月11日起，至3月5日前报名。") is None


def test_done_against_pending_reads_the_clauses_that_name_what_the_sentence_names() -> None:
    quote = ("科幻电影《星港》于2月7日在北美上映，首周末票房位列当周北美外语片第一。出品方宣布，该片将于3月在"
             "澳大利亚和新西兰上映，随后陆续登陆更多海外市场。")
    got = quote_conflict("《星港》已在澳大利亚和新西兰上映。", quote, "zh")
    assert got == Conflict("plan", "已在澳大利亚和新西兰上映", "该片将于3月在澳大利亚和新西兰上映")
    assert quote_conflict("《星港》已在北美上映。", quote, "zh") is None


def test_a_chinese_figure_given_as_of_another_date_is_a_conflict() -> None:
    quote = ("据票库数据统计，截至2月10日24时，电影《长河雪》累计票房达38.6亿元，"
             "累计观影人次8420万。今年春节档（1月28日至2月4日）总票房为71.3亿元。")
    assert quote_conflict("截至春节档结束的2月4日，《长河雪》累计票房已达38.6亿元。", quote,
                          "zh") == Conflict("figure", "截至2月4日…38.6亿元", "截至2月10日…38.6亿元")
    # the same date, written otherwise
    assert quote_conflict("截至2024年2月10日，《长河雪》累计票房已达38.6亿元。", quote, "zh") is None
    assert quote_conflict("截至2023年底，杭州常住人口约1252万人，比上一年增加14.6万人。",
                          "截至2023年末，全市常住人口1252.2万人，比上年末增加14.6万人。", "zh") is None


_RADAR = ("Dunmore Airport Holdings said on 12 March that it would spend £14.5 million upgrading its surface "
          "movement radar after last month's near-collision. Chief executive Martin Ekwueme said work would "
          "start in May. A Kestrel Airways A321neo had rejected its takeoff on 3 February.")


def test_a_figure_given_to_another_party_of_the_record_is_a_conflict() -> None:
    from tracer.conflict import en_figure_subject
    quote = _RADAR.split(" Chief")[0]
    assert en_figure_subject("Kestrel Airways has committed £14.5 million to upgrading Dunmore's radar.",
                             quote, _RADAR) == Conflict("name", "Kestrel Airways", "Dunmore Airport Holdings")
    # the figure's own party; a speaker; a name the record never writes (another name for the quote's);
    # an acronym the quote spells out
    for sentence in ("Dunmore Airport Holdings has committed £14.5 million to upgrading its radar.",
                     "Martin Ekwueme said the airport would spend £14.5 million on radar.",
                     "Dunmore Holdings Group will spend £14.5 million on radar."):
        assert en_figure_subject(sentence, quote, _RADAR) is None, sentence
    record = ("The National Vehicle Safety Administration opened a preliminary evaluation covering about "
              "21,000 Borealis sedans. The NVSA has not requested a recall.")
    assert en_figure_subject("The NVSA has opened an evaluation covering about 21,000 Borealis sedans.",
                             record.split(" The NVSA")[0], record) is None


def test_a_negation_between_shared_words_of_a_loose_paraphrase_is_a_conflict() -> None:
    quote = ("Orion Auto, by contrast, said it is still evaluating the connector and has not committed to a "
             "date for adopting it, citing the cost of redesigning its vehicles.")
    assert quote_conflict("Orion Auto has committed to native NACS ports from 2025 as well.", quote,
                          "en") == Conflict("negation", "", "not committed")
    # the quote affirms it after a contrast; the sentence negates too; "not only" denies nothing
    for sentence, other in (
            ("Orion Auto has committed to native NACS ports from 2025 as well.",
             "Orion Auto, by contrast, said it has not committed to a date, but it has committed to the "
             "connector for its vehicles."),
            ("Orion Auto has not committed to native NACS ports yet.", quote),
            ("Orion Auto has committed to native NACS ports from 2025 as well.",
             "Orion Auto, by contrast, said it has not only committed to NACS but also to a date.")):
        got = quote_conflict(sentence, other, "en")
        assert got is None or got.kind != "negation", (sentence, got)


@pytest.mark.parametrize(("sentence", "quote", "said", "quoted"), [
    ("Valdor Steel has already restarted its idled Kessel blast furnace, hiring 600 workers.",
     "Valdor Steel, the country's largest steelmaker, announced that it plans to restart an idled blast "
     "furnace at its Kessel works, a move that would create about 600 jobs.",
     "has already restarted", "plans to restart"),
    ("In India, Sarvam Silicon began building the country's first commercial fab in Dholera in 2024.",
     "Sarvam Silicon said it plans to begin construction of a commercial semiconductor fab in Dholera, "
     "Gujarat, in 2025, pending final approval of central government incentives.", "began", "plans to begin"),
    ("Spending rose in 2024, driven mainly by logic chips.",
     "For 2024, ChipInsights expects capital spending to rise, with the rebound driven mainly by memory "
     "makers.",
     "rose", "expects capital spending to rise"),
])
def test_an_english_plan_stated_as_done_is_a_conflict(sentence: str, quote: str, said: str,
                                                      quoted: str) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("plan", said, quoted)


@pytest.mark.parametrize(("sentence", "quote"), [
    # the quote says it was done too, or the sentence plans it as well
    ("Valdor Steel has restarted its Kessel furnace.",
     "Valdor Steel, which planned to restart the Kessel furnace in May, restarted it in April."),
    ("Valdor Steel plans to restart its Kessel furnace and has hired 600 workers.",
     "Valdor Steel plans to restart its Kessel furnace, a move that would hire 600 workers."),
    # another verb
    ("Valdor Steel completed the takeover of Kessel Works.",
     "Under a proposed agreement, Valdor Steel would take over Kessel Works."),
    # the move said done in other words
    ("Exports rose 5% in 2024.", "Exports grew 5% in 2024 and are expected to rise further in 2025."),
])
def test_a_deed_the_quote_states_done_or_a_sentence_that_plans_is_no_plan_conflict(sentence: str,
                                                                                  quote: str) -> None:
    from tracer.conflict import _en_plan_as_done
    assert _en_plan_as_done(sentence, quote) is None


def test_a_rule_in_force_against_a_draft_and_a_deed_after_a_joined_already_are_conflicts() -> None:
    draft = ("国家互联网信息办公室起草了《人工智能生成合成内容标识办法（征求意见稿）》，"
             "于2024年9月14日起向社会公开征求意见。")
    got = quote_conflict("《人工智能生成合成内容标识办法》已于2024年9月14日正式施行。", draft, "zh")
    assert got == Conflict("plan", "正式施行", "征求意见稿")
    assert quote_conflict("The rules took effect on 1 March.",
                          "Draft rules published on 1 March are open for public comment until May.",
                          "en") == Conflict("plan", "took effect", "Draft")
    # the quote says it took effect; the sentence speaks of the draft
    assert quote_conflict("《办法》已于9月1日起正式施行。",
                          "《办法》征求意见稿修改后，已于9月1日起正式施行。", "zh") is None
    assert quote_conflict("征求意见稿已于9月14日公布。", draft, "zh") is None
    # "委已" is how rjieba cuts "健康委已于": the 已 still says it is done
    got = quote_conflict("国家卫生健康委已于2024年将HPV疫苗纳入国家免疫规划。",
                         "国家卫生健康委表示，正在会同有关部门研究将HPV疫苗纳入国家免疫规划的可行性。",
                         "zh")
    assert got is not None and got.kind == "plan"


def test_a_bound_the_other_way_and_the_main_way_made_secondary_are_conflicts() -> None:
    quote = "根据探测器传回的数据评估，本次共采集样品约86克，低于任务设计时不少于100克的预期目标。"
    assert quote_conflict("本次共采集样品约86克，超过了不少于100克的预期目标。", quote, "zh") == Conflict(
        "opposite", "超过", "低于")
    assert quote_conflict("本次共采集样品约86克，低于不少于100克的预期目标。", quote, "zh") is None
    plan = "临江市2024年共启动城中村改造项目11个。改造采取货币化安置为主、实物安置为辅的方式。"
    assert quote_conflict("城中村改造以实物安置为主。", plan, "zh") == Conflict("opposite", "实物安置为主",
                                                                         "实物安置为辅")
    assert quote_conflict("城中村改造以货币化安置为主。", plan, "zh") is None


@pytest.mark.parametrize(("sentence", "quote", "lang"), [
    # the sentence expects it too
    ("Volume production of 3-nanometer-class chips is now expected in the second half of 2026.",
     "Corvane said volume production of its 3-nanometer-class process will now begin in the second half of "
     "2026.", "en"),
    # a rule stated in the present, as the quote's schedule states it
    ("Imports within an annual quota of 1.2 million tonnes enter duty-free.",
     "Imports within an annual quota of 1.2 million tonnes will enter duty-free.", "en"),
    # "the proposed merger" names the deal
    ("The union opposed the deal from the start.",
     "The union opposed the proposed merger from the start, warning of store closures.", "en"),
    # 将 before a figure takes its object: no future
    ("美国OSIRIS-REx于2023年9月带回约121.6克贝努样品。",
     "美国OSIRIS-REx任务于2023年9月将约121.6克贝努小行星样品送回地球。", "zh"),
    # two words for one
    ("多地通过短信提醒家长带孩子接种第二剂。", "多地通过短信提醒监护人及时带孩子接种第二剂。", "zh"),
])
def test_words_that_only_look_like_a_plan_or_another_name_are_no_conflict(sentence: str, quote: str,
                                                                         lang: str) -> None:
    assert quote_conflict(sentence, quote, lang) is None


def test_a_past_deed_the_quote_gives_as_future_is_still_a_plan_conflict() -> None:
    got = quote_conflict("The plant opened in May.", "The plant will open in May.", "en")
    assert got is not None and got.kind == "plan"


@pytest.mark.parametrize(("sentence", "quote", "said", "quoted"), [
    ("By June 2024, 2,120 program-funded stations had opened.",
     "As of June 2024, 212 stations funded by the program had opened to the public.", "2120", "212"),
    ("Each ownership group pays a $450 million expansion fee, bringing the league to 20 teams.",
     "The two teams will begin play in 2025, bringing the league to 18 teams.", "20", "18"),
    ("The safeguard will save about 7,500 steel jobs over its three-year life.",
     "The Policy Institute estimates that the safeguard will preserve about 2,400 jobs in steel production.",
     "7500", "2400"),
])
def test_a_thing_the_quote_counts_otherwise_is_a_conflict(sentence: str, quote: str, said: str,
                                                          quoted: str) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("figure", said, quoted)


@pytest.mark.parametrize(("sentence", "quote"), [
    # the quote's count is the sentence's too, of what it names otherwise
    ('"Game of Thrones" set a record with 32, breaking the record of "NYPD Blue", which had 26 nominations.',
     '"Game of Thrones" received 32 nominations, a record.'),
    # a scaled figure counts no thing here; the quote states the sentence's figure
    ("An estimated 40 million players vied for spots.",
     "Some 40 million players entered; 100 players qualified."),
    ("The league now has 18 teams.", "Two teams joined in 2025, bringing the league to 18 teams."),
])
def test_a_count_the_sentence_or_the_quote_also_states_is_no_conflict(sentence: str, quote: str) -> None:
    from tracer.conflict import _en_count_instead
    assert _en_count_instead(sentence, quote) is None


def test_one_groups_share_given_to_another_group_is_a_conflict() -> None:
    quote = ("A study by the Rural Policy Center found that 38% of rural counties in Arland have no public "
             "fast charger, compared with 4% of urban counties.")
    assert quote_conflict("A study found that 38% of urban counties have no public fast charger.", quote,
                          "en") == Conflict("figure", "38% of urban", "4% of urban")
    assert quote_conflict("A study found that 38% of rural counties have no public fast charger.", quote,
                          "en") is None


def test_a_cause_in_place_of_the_quotes_own_is_an_addition() -> None:
    from tracer.conflict import cause_addition
    quote = ("The league generated revenue of $1.9 billion in the 2023–24 season, up 11% from the previous "
             "season, driven by higher ticket sales, sponsorship deals and merchandise.")
    assert cause_addition("League revenue rose 11% to $1.9 billion in 2023–24, driven by the new media deal.",
                          quote, quote) == Conflict("addition", "driven by the new media deal", "")
    # the quote's own cause, in other words
    faithful = "League revenue rose 11% to $1.9 billion in 2023–24, driven by strong ticket sales."
    assert cause_addition(faithful, quote, quote) is None


@pytest.mark.parametrize(("sentence", "quote", "lang", "said", "quoted"), [
    ("天眸一号是人类首次小行星采样返回任务。", "天眸一号是我国首次小行星采样返回任务。", "zh",
     "人类首次", "我国首次"),
    ("The plant is the world's first commercial fusion plant.",
     "The plant is the country's first commercial fusion plant.", "en", "world's first", "country's first"),
])
def test_a_countrys_first_made_the_worlds_is_a_conflict(sentence: str, quote: str, lang: str, said: str,
                                                        quoted: str) -> None:
    assert quote_conflict(sentence, quote, lang) == Conflict("opposite", said, quoted)
    # the quote that says the world's first as well, or a sentence that says the country's, is none
    assert quote_conflict(sentence, quote.replace(quoted, said), lang) is None
    assert quote_conflict(sentence.replace(said, quoted), quote, lang) is None


@pytest.mark.parametrize(("sentence", "quote", "said", "quoted"), [
    ("Exports tripled in 2024.", "Exports doubled in 2024, the ministry said.", "tripled", "doubled"),
    ("Exports doubled in 2024.", "Exports rose 48% in 2024, the ministry said.", "doubled", "rose 48%"),
    ("Heat pump sales doubled in 2024.", "Heat pump sales fell 48% in 2024.", "doubled", "fell 48%"),
])
def test_a_multiple_the_quote_gives_otherwise_is_a_conflict(sentence: str, quote: str, said: str,
                                                            quoted: str) -> None:
    assert quote_conflict(sentence, quote, "en") == Conflict("figure", said, quoted)


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Exports doubled in 2024.", "Exports rose 95% in 2024, the ministry said."),
    ("Heat pump sales nearly halved in 2024.", "Heat pump sales fell 48% in 2024."),
    ("Incursions doubled from two in 2023 to four in 2024.", "Incursions doubled to four in 2024."),
])
def test_a_multiple_the_quote_gives_as_well_or_near_is_no_conflict(sentence: str, quote: str) -> None:
    assert quote_conflict(sentence, quote, "en") is None


def test_a_chinese_change_on_the_year_the_quote_gives_only_the_other_way_is_a_conflict() -> None:
    quote = ("临江市取消住房限购后的一个月内，全市新建商品住宅成交面积环比增长23%，"
             "但与去年同期相比仍下降12%。")
    said = "取消限购后的一个月内，新建商品住宅成交面积环比增长23%，同比也实现了正增长。"
    assert quote_conflict(said, quote, "zh") == Conflict("opposite", "同比也实现了正增长",
                                                         "与去年同期相比仍下降")
    # a change with its figure is read by the figure checks; a quote that goes both ways says nothing
    from tracer.conflict import _zh_yoy_flipped
    assert _zh_yoy_flipped("营收同比增长5%。", "营收12亿元，增长5%；净利润同比下降3%。") is None
    assert _zh_yoy_flipped("营收同比实现增长。", "营收同比增长5%，净利润同比下降3%。") is None


@pytest.mark.parametrize(("sentence", "quote", "lang", "said", "quoted"), [
    ("The league now uses AI-assisted officiating in all of its games.",
     "The league is testing AI-assisted officiating technology in its development league this season.", "en",
     "now uses", "is testing"),
    ("该市已全面推行垃圾分类。", "该市在三个区试点推行垃圾分类。", "zh", "已全面", "试点"),
])
def test_a_trial_stated_as_adoption_is_a_conflict(sentence: str, quote: str, lang: str, said: str,
                                                  quoted: str) -> None:
    assert quote_conflict(sentence, quote, lang) == Conflict("plan", said, quoted)
    # a sentence that speaks of the trial itself
    from tracer.conflict import _trial_as_adopted
    assert _trial_as_adopted("The league uses the system in a pilot programme.", quote, False) is None


@pytest.mark.parametrize(("sentence", "quote", "lang", "said"), [
    ("A survey of 86 Ashby businesses found that nearly all of them reported lower revenue in 2023.",
     "A survey of 86 member businesses found that 61% reported lower revenue in 2023 than in 2022.", "en",
     "nearly all"),
    ("Hartwell said the plant would be funded entirely by a loan from the Northern Growth Fund.",
     "Hartwell said about a third of the investment would be funded by a loan from the Northern Growth Fund.",
     "en", "entirely"),
    ("记者随机采访的30位家长全都表示担心合并后活动变少。",
     "记者随机采访了30位家长，其中有19位表示担心活动变少。", "zh", "全都"),
    ("调查显示，绝大多数家长支持增设心理健康内容。",
     "结果显示，56%的家长支持增设心理健康内容，24%表示无所谓。", "zh", "绝大多数"),
])
def test_all_or_most_of_a_group_against_a_smaller_share_is_a_conflict(sentence: str, quote: str,
                                                                      lang: str, said: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is not None and got.kind == "quantifier" and got.sentence_says == said, got


@pytest.mark.parametrize(("sentence", "quote", "lang"), [
    ("Most importers expected higher freight costs.",
     "72% of importers expected higher freight costs.", "en"),
    ("It had the most property theft crimes of any campus.", "Half of the campuses reported thefts.", "en"),
    ("All three plants resumed production in May.",
     "All three plants resumed production in May; output rose 12%.", "en"),
    ("大多数家长支持增设心理健康内容。", "结果显示，56%的家长支持增设心理健康内容。", "zh"),
    # the quote says "every" too (its "half of" is of another year); 人均 is per head, no "all"
    ("Food waste rose after kitchen caddies were delivered to every household.",
     "Collections, extended to every household in October, compared with 2022/23 when only about half of "
     "homes were covered.", "en"),
    ("全市人均可支配收入增长5%。", "其中有30%的居民收入增长超过5%。", "zh"),
    # a share of another thing than the sentence names
    ("All employees received a bonus this year.", "Bonuses averaged 12% of salary this year.", "en"),
])
def test_a_share_the_quote_bears_out_or_no_share_of_a_group_is_no_conflict(
        sentence: str, quote: str, lang: str) -> None:
    from tracer.conflict import _share_overstated
    assert _share_overstated(sentence, quote, lang == "zh") is None


@pytest.mark.parametrize(("sentence", "quote", "lang", "quoted"), [
    ("The estimated cost of Skerrow Bank has doubled since 2021, to £3.9 billion.",
     "The project cost is now put at £3.9 billion, up from the £3.2 billion estimate given in 2021.", "en",
     "3.2 → 3.9"),
    ("Spot rates reached $5,840, more than quadruple the $1,720 recorded a year earlier.",
     "Spot rates rose to $5,840, more than triple the $1,720 a year earlier.", "en", "triple"),
    ("星澜科技二季度市场份额较去年同期翻了一番，升至8.9%。",
     "星澜科技二季度市场份额为8.9%，较去年同期的7.1%上升1.8个百分点。", "zh", "7.1 → 8.9"),
    ("2023年财政补贴达19.6亿元，比2022年翻了一番。", "补贴金额为19.6亿元，比2022年增加了约15%。", "zh",
     "增加了约15%"),
])
def test_a_multiple_against_the_quotes_levels_or_percentage_is_a_conflict(sentence: str, quote: str,
                                                                          lang: str, quoted: str) -> None:
    got = quote_conflict(sentence, quote, lang)
    assert got is not None and got.kind == "figure" and got.quote_says == quoted, got


def test_a_multiple_the_quotes_levels_bear_out_is_no_conflict() -> None:
    from tracer.conflict import _multiple_conflict
    assert _multiple_conflict("Exports doubled to $4.1 billion.",
                              "Exports rose to $4.1 billion, up from $2.0 billion.") is None
    assert _multiple_conflict("补贴比2022年翻了一番，达19.6亿元。",
                              "补贴金额为19.6亿元，比2022年增长98%。", True) is None


def test_words_the_quote_gives_another_named_speaker_are_a_speaker_conflict() -> None:
    from tracer.conflict import unnamed_speaker
    quote = "协会副会长魏长松表示：“预计11月钢价将以低位震荡为主，继续大幅下跌的空间有限。”"
    record = quote + "恒远钢铁总经理陆景行说，公司将下调11月出厂价。"
    said = "恒远钢铁总经理陆景行表示，预计11月钢价将以低位震荡为主，继续大幅下跌的空间有限。"
    assert unnamed_speaker(said, quote, record, "zh") == Conflict("speaker", "陆景行", "魏长松")
    quote = "Association secretary Alan Buchan said nobody had asked fishermen where the cable should go."
    record = quote + " Fisheries officer Morag Lennie said the council would review the route."
    said = "Fisheries officer Morag Lennie said nobody had asked fishermen where the cable should go."
    assert unnamed_speaker(said, quote, record, "en") == Conflict("speaker", "Morag Lennie", "Alan")
    # the quote's own speaker; an organisation that announces
    assert unnamed_speaker("Alan Buchan said nobody had asked fishermen.", quote, record, "en") is None
    org = "The University of Chicago announced plans to renovate the station."
    words = 'Derek Douglas said: "We look forward to it."'
    assert unnamed_speaker(org, words, f"The University of Chicago owns it. {words}", "en") is None
