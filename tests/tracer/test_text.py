from collections.abc import Mapping

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tracer.text import (
    StatedUnits,
    abbreviations,
    acronyms,
    cjk_bigrams,
    claim_units,
    content_tokens,
    detect_language,
    language_caveat,
    normalize_for_match,
    numbers,
    spelled_out,
    tokens,
    whole_name,
)


def test_detect_language() -> None:
    assert detect_language("The telescope launched in 2021.") == "en"
    assert detect_language("空间站于2022年建成，并开展了多项科学实验。") == "zh"
    # a Chinese report quoting English names is still Chinese
    assert detect_language("据NASA报道，詹姆斯·韦布空间望远镜（JWST）于2021年发射升空。") == "zh"


GERMAN = (
    "Der Eiffelturm ist ein 330 Meter hoher Eisenfachwerkturm in Paris. Er steht im 7. Arrondissement "
    "am nordwestlichen Ende des Champ de Mars, nahe dem Ufer der Seine. Das von Gustave Eiffel "
    "konstruierte Bauwerk wurde anlässlich der Weltausstellung 1889 errichtet, die an den 100. "
    "Jahrestag der Französischen Revolution erinnerte."
)
SPANISH = (
    "La Torre Eiffel es una estructura de hierro pudelado diseñada por los ingenieros Maurice Koechlin "
    "y Émile Nouguier, dotada de su aspecto definitivo por el arquitecto Stephen Sauvestre y construida "
    "por el ingeniero francés Gustave Eiffel y sus colaboradores para la Exposición Universal de 1889."
)
ENGLISH = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named "
    "after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889. "
    "Locally nicknamed La dame de fer, it was constructed as the centrepiece of the 1889 World's Fair."
)
FRENCH = (
    "La tour Eiffel est une tour de fer puddlé de 330 mètres de hauteur située à Paris, à l'extrémité "
    "nord-ouest du parc du Champ-de-Mars en bordure de la Seine dans le 7e arrondissement. Construite "
    "en deux ans par Gustave Eiffel et ses collaborateurs pour l'Exposition universelle de Paris de "
    "1889, elle est devenue le symbole de la capitale française et un site touristique de premier plan."
)
ITALIAN = (
    "La torre Eiffel è una torre di ferro alta 330 metri situata a Parigi, all'estremità nord-ovest del "
    "parco del Campo di Marte, sulla riva della Senna. Costruita in occasione dell'Esposizione "
    "universale del 1889, è divenuta il simbolo della capitale francese e uno dei monumenti più "
    "visitati al mondo, ed è stata la struttura più alta del mondo fino al 1930."
)
PORTUGUESE = (
    "A Torre Eiffel é uma torre de ferro do século XIX localizada no Champ de Mars, em Paris, que se "
    "tornou um ícone mundial da França. A torre, que é o edifício mais alto da cidade, é o monumento "
    "pago mais visitado do mundo. Foi construída como o arco de entrada da Exposição Universal de 1889 "
    "e não foi planejada para ficar de pé por mais de vinte anos."
)
DUTCH = (
    "De Eiffeltoren is een ijzeren toren van 330 meter hoog in Parijs. De toren staat aan het "
    "noordwestelijke einde van het Champ de Mars, bij de oever van de Seine. Hij werd gebouwd voor de "
    "Wereldtentoonstelling van 1889 en is vernoemd naar de ingenieur Gustave Eiffel, wiens bedrijf de "
    "toren heeft ontworpen."
)
NAME_LIST = (
    "Western Conference: Colorado Rapids, FC Dallas, Houston Dynamo, Los Angeles FC, LA Galaxy, "
    "Minnesota United FC, Portland Timbers, Real Salt Lake, San Jose Earthquakes, Seattle Sounders FC, "
    "Sporting Kansas City, Vancouver Whitecaps FC. Eastern Conference: Atlanta United FC, Chicago Fire, "
    "FC Cincinnati, Columbus Crew, D.C. United, Montreal Impact, New England Revolution, New York City FC."
)


@pytest.mark.parametrize(
    ("text", "caveat"),
    [
        (GERMAN, "German"),
        (SPANISH + " " + SPANISH, "Spanish"),
        (FRENCH, "French"),
        (ITALIAN, "Italian"),
        (PORTUGUESE, "Portuguese"),
        (DUTCH, "Dutch"),
        # half French, half Spanish (or Italian, Portuguese): not English, but no one language's
        # words stand out
        (FRENCH + " " + SPANISH, "a Latin-script language other than English"),
        (ITALIAN + " " + PORTUGUESE, "a Latin-script language other than English"),
        ("エッフェル塔は1889年に完成した鉄塔で、高さは330メートルである。パリの象徴として知られている。",
         "Japanese"),
        ("에펠탑은 1889년에 완공된 철탑으로, 높이는 330미터이다. 파리의 상징으로 알려져 있다.", "Korean"),
        ("Эйфелева башня была построена в 1889 году и имеет высоту 330 метров; она стала символом Парижа.",
         "Cyrillic script"),
        (ENGLISH, None),
        (NAME_LIST, None),  # no English function words, but no other language's either
        ("空间站于2022年建成，并开展了多项科学实验。据NASA报道，韦布望远镜于2021年发射。" * 3, None),
        ("Der Eiffelturm wurde 1889 fertiggestellt.", None),  # too short to tell
    ],
)
def test_language_caveat_names_languages_the_engine_is_not_tuned_for(text: str, caveat: str | None) -> None:
    assert language_caveat(text, detect_language(text)) == caveat


def test_tokens_stem_english_and_cut_chinese() -> None:
    assert tokens("Studies showed running") == ["studi", "show", "run"]
    zh = tokens("毛泽东领导了农民起义")
    assert "毛泽东" in zh and "领导" in zh


def test_content_tokens_drop_stopwords_keep_numbers() -> None:
    toks = content_tokens("The rate is 45.5% in the U.S. and it grew")
    assert "the" not in toks and "is" not in toks
    assert "45.5" in toks and "rate" in toks and "grew" in toks
    assert "的" not in content_tokens("中国的经济")


def test_cjk_bigrams() -> None:
    assert cjk_bigrams("起义军") == ["起义", "义军"]
    assert cjk_bigrams("abc 中") == []


def test_numbers_normalise_formats_and_scales() -> None:
    assert "45.5" in numbers("rose to 45.5% last year")
    assert "1200" in numbers("about 1,200 people")
    assert numbers("$30.8 billion") == numbers("$30,800,000,000") == {"30800000000"}
    assert numbers("3万人") == numbers("30,000人") == {"30000"}
    assert numbers("1,234,567 people") != numbers("1,234,568 people")
    # thousands set apart by spaces, as European pages write them (a plain space in two groups
    # or more; a thin or no-break space always), read as one figure
    assert numbers("EUR 35 000 000") == numbers("EUR 35\u202f000\u202f000") == numbers("EUR 35 million") \
        == {"35000000"}
    assert numbers("12\u00a0500 habitants") == {"12500"}
    assert numbers("in 2023 100 people, scores of 3 100") == {"2023", "100", "3"}
    assert "14000000" in numbers("from 5 to 14 000 000 units")   # a range's second figure (it raised)
    assert numbers("45.50% of them") == {"45.5"}
    assert numbers("no digits here") == set()
    # a range's first figure shares the second one's scale, and its currency the first one's
    assert numbers("$5-10 million") == numbers("$5 million to $10 million") == {"5000000", "10000000"}
    assert numbers("3至5万人") == {"30000", "50000"}
    assert numbers("pages 5-10 of the report") == {"5", "10"}
    # two Chinese scale characters multiply (万亿 is 10^12, not 10^4); a kilo unit's 千 is no scale
    assert numbers("47.1万亿元") == numbers("47,100,000,000,000元") == {"47100000000000"}
    assert numbers("3千亿元") == {"300000000000"} and numbers("5百万人") == {"5000000"}
    assert numbers("300万千瓦") == {"3000000"}  # 3,000,000 kilowatts
    assert numbers("3千米") == numbers("3 km") == {"3"} and numbers("12千瓦时") == {"12"}
    from tracer.text import claim_units

    assert claim_units("47.1万亿元")["47100000000000"].unit == "CNY"
    assert claim_units("13908亿斤")["1390800000000"].kind == "mass"



def test_hyphenated_compounds_and_accents_match_their_plain_spellings() -> None:
    assert content_tokens("a wrought-iron lattice tower") == content_tokens("a wrought iron lattice tower")
    assert content_tokens("the Māori café") == content_tokens("the Maori cafe")
    # letters that do not decompose stay as they are
    assert content_tokens("Ærø straße") == ["ærø", "straße"]


def test_list_enumerators_are_not_numbers_the_claim_states() -> None:
    assert numbers("4)后续处理：据报道，清华已发布停课通知") == set()
    assert numbers("释放了以下信号：1)支持国家文化出口基地;2)鼓励企业建设平台") == set()
    assert numbers("(1) Sales rose 12% in 2021.") == {"12", "2021"}
    assert numbers("Article 5(1) applies") == {"5", "1"}  # a sub-clause, not a list item
    assert numbers("增长了（3）倍") == {"3"}


def test_normalize_for_match_unifies_quotes_and_space() -> None:
    assert normalize_for_match("“Hello”  —\u00a0World") == '"hello" - world'


def test_dates_are_one_value_so_conflicting_dates_do_not_match() -> None:
    from tracer.text import stated_numbers

    assert numbers("2021年4月29日，天和核心舱发射") == {"d:2021-4-29"}
    assert numbers("launched on 25 December 2021") == {"d:2021-12-25"}
    assert numbers("launched on December 25, 2021") == {"d:2021-12-25"}
    record = stated_numbers("天舟二号于2021年5月29日发射，驻留183天")
    assert "d:2021-4-29" not in record                    # same year and day, other month
    assert {"d:2021-5-29", "d:2021-5", "2021", "183"} <= record  # coarser claims still match
    assert numbers("驻留183天") == {"183"}                  # numbers right after CJK characters
    assert numbers("model v2") == {"c:v2"}                  # inside a code: the code, not a 2


def test_a_chinese_month_without_a_year_is_in_the_year_named_before_it() -> None:
    from tracer.text import stated_numbers

    record = stated_numbers("2024年比亚迪海外销量达到41.7万辆，同比增长71.9%。12月海外单月销量为57,510辆。")
    assert "d:2024-12" in record and "d:2024-11" not in record and "d:2023-12" not in record
    # no year before it (or only in another paragraph), "12个月", a day: no year-month
    assert not {v for v in stated_numbers("12月销量为57,510辆。") if v.startswith("d:")}
    assert "d:2024-12" not in stated_numbers("2024年销量上升。\n\n12月销量为57,510辆。")
    assert not {v for v in stated_numbers("2024年，过去12个月里销量上升。") if v.startswith("d:2024-")}
    assert "d:2024-12" not in stated_numbers("2024年。12月3日发布。")


def test_full_date_agrees_with_the_same_day_stated_without_a_year() -> None:
    from tracer.text import numbers_agreement, stated_numbers

    record = stated_numbers("4月29日11时23分，长征五号B遥二运载火箭点火升空。")
    assert numbers_agreement(numbers("2021年4月29日，火箭发射"), record) == 1.0
    assert numbers_agreement(numbers("2021年5月29日，火箭发射"), record) == 0.0
    assert numbers_agreement(set(), record) == 1.0


def test_every_date_form_is_one_value() -> None:
    """Month-first forms (abbreviated, with a dot or comma), month-year and month-day."""
    assert numbers("signed on Sept. 5, 2021 in Geneva") == {"d:2021-9-5"}
    assert numbers("released in May 2019") == {"d:2019-5"}
    assert numbers("released in Jan, 2020") == {"d:2020-1"}
    assert numbers("due on March 3rd") == {"d:-3-3"}
    assert numbers("由 2019-07-24 起") == {"d:2019-7-24"}
    assert numbers("在2019年7月发布") == {"d:2019-7"}
    assert numbers("二〇二一年四月二十九日发射") == numbers("２０２１年４月２９日发射") == {"d:2021-4-29"}
    assert numbers("十二月二十五日") == {"d:-12-25"}
    # tenths: "六成" is 60%, a percentage like "60%"; not in "一成不变" or "统一成本"
    assert numbers("渗透率达到六成") == numbers("6成用户") == numbers("增长60%") == {"60"}
    assert claim_units("净利润同比增长逾三成")["30"] == claim_units("增长30%")["30"]
    assert numbers("一成不变的制度") == numbers("统一成本核算") == numbers("七八成") == set()
    from tracer.text import approximate_figures, near_figures

    for claim, page in (("超过八成患者", 81.2), ("近七成", 68.0), ("九成以上", 92.0), ("达到六成", 59.8)):
        assert near_figures(approximate_figures(claim), numbers(claim), [page]), claim
    assert not near_figures(approximate_figures("达到六成"), {"60"}, [51.1])
    # a full-width decimal point, as a Chinese input method types it
    assert numbers("销量１２８６．６万辆") == numbers("销量1286.6万辆") == {"12866000"}
    assert numbers("增长４９．１％") == {"49.1"}
    assert numbers("三个月后") == numbers("3个月后") == {"3"}  # a duration, not a month
    assert numbers("the May flowers grew 12 cm") == {"12"}     # a month word without a day is no date
    text = "x" * 50_000 + " On 4 July 1776, " + "y " * 20_000
    assert numbers(text) == {"d:1776-7-4"}                     # found deep inside a long page


def test_chinese_ordinal_identifiers_are_numbers() -> None:
    """"神舟十二号" and "神舟12号" name the same craft; "十三号" is another one."""
    from tracer.text import numbers_agreement, stated_numbers

    assert numbers("神舟十二号乘组进驻核心舱") == {"12"}
    assert numbers("第十三届全国人大") == {"13"}
    assert numbers("长征五号B遥二运载火箭") == {"5"}
    assert numbers("一百零五号房间") == {"105"}
    assert numbers("第一一五师") == numbers("第115师") == {"115"}  # digits read one by one
    assert numbers("第八军") == {"8"}
    assert numbers("一些人认为这一个问题很重要") == set()        # counting words are not identifiers
    record = stated_numbers("神舟13号乘组在轨驻留183天")
    assert numbers_agreement(numbers("神舟十三号乘组在轨驻留183天"), record) == 1.0
    assert numbers_agreement(numbers("神舟十二号乘组在轨驻留183天"), record) == 0.5


def test_units_are_read_from_the_sign_before_a_number_or_the_word_after_it() -> None:
    from tracer.text import Quantity, claim_units

    assert claim_units("The bridge is 1,200 feet long.") == {"1200": Quantity("length", "ft", 1200 * 0.3048)}
    assert claim_units("A 10-kilometre race") == {"10": Quantity("length", "km", 10_000.0)}
    assert claim_units("It cost $10 billion.") == {"10000000000": Quantity("money", "$", 1e10)}
    assert claim_units("It raised US$5 million and €3 million.") == {
        "5000000": Quantity("money", "USD", 5e6), "3000000": Quantity("money", "EUR", 3e6)}
    assert claim_units("Water boils at 212 °F.") == {"212": Quantity("temperature", "F", 100.0)}
    assert claim_units("投资5亿美元，全长1200米") == {
        "500000000": Quantity("money", "USD", 5e8), "1200": Quantity("length", "m", 1200.0)}
    assert claim_units("45% of voters") == {"45": Quantity("percent", "%", 45.0)}
    assert claim_units("It costs $5-10 million.") == {
        "5000000": Quantity("money", "$", 5e6), "10000000": Quantity("money", "$", 1e7)}
    # no unit, or one that is also a word or a scale ("m" for million): bare
    assert claim_units("The 1.5m people and 300 of them in 2021") == {}
    assert claim_units("It was completed in 2021年.") == {}  # a year, not a duration
    # words that start like a unit but are not one
    assert claim_units("成立5周年，5周岁，80年代，3年级，5克拉，气温从5升高到10") == {}
    late = claim_units("It was completed in 1889, 3 years late.")
    assert late == {"3": Quantity("time", "yr", 3 * 31_557_600.0)}
    # the first figure of a range takes the unit of the second; a range of years stays bare
    assert claim_units("between 60-70% of voters") == {
        "60": Quantity("percent", "%", 60.0), "70": Quantity("percent", "%", 70.0)}
    assert claim_units("a 3 to 5 km walk") == {
        "3": Quantity("length", "km", 3000.0), "5": Quantity("length", "km", 5000.0)}
    assert claim_units("2019-2020年") == {}


def test_unstated_numbers_are_shown_as_a_reader_writes_them() -> None:
    from tracer.text import (
        Quantity,
        claim_units,
        display_number,
        stated_numbers,
        stated_units,
        unstated_numbers,
    )

    claim = "On 29 April 2021 it cost $25,000, 45% more, for a 1,200 feet span and 30,000 people."
    record = "In April 2021 the 1,200 metres span cost $25,000 and drew 30,000 people."
    units = claim_units(claim)
    missing = unstated_numbers(numbers(claim), stated_numbers(record), units, stated_units(record))
    assert missing == ["1200", "45", "d:2021-4-29"]
    assert [display_number(v, units.get(v)) for v in missing] == ["1200 ft", "45%", "2021-04-29"]
    assert display_number("10000000000", Quantity("money", "USD", 1e10)) == "USD 10,000,000,000"
    assert display_number("25000", Quantity("money", "$", 25000.0)) == "$25,000"
    assert display_number("100", Quantity("temperature", "C", 100.0)) == "100 °C"
    assert display_number("d:-4-29") == "04-29" and display_number("d:2021-4") == "2021-04"
    assert display_number("3.14") == "3.14" and display_number("1936") == "1936"


@pytest.mark.parametrize(("claim", "quote", "instead"), [
    ("增速将放缓至2.9%", "预计2023年全球经济将增长2.1%，低于2022年的3.1%，人口1400万。", ["2.1%", "3.1%"]),
    ("The bridge is 1,200 feet long.", "The bridge is 1,200 metres long and opened in 1937.", ["1200 m"]),
    ("She replaced him on 24 July 2019.", "July 25, 2019 News Release: 12 staff", ["2019-07-25"]),
    ("It opened in 1936 with 4 lanes.", "It opened in 1937 with six lanes and 40 km of road.", ["1937", "6"]),
    ("It cost $5 million.", "It cost €5 million and took 7 years.", ["EUR 5,000,000"]),
    ("Revenue rose 12% in 2020.", "Revenue rose sharply in 2020.", []),  # left out, not contradicted
    ("It has 21 segments.", "It has 18 segments, 19 bolts, 20 rods and 22 struts.", ["18"]),  # what it counts
    ("It has 21 segments.", "It has 19 bolts, 20 rods and 22 struts.", ["19", "20", "22"]),
    ("他们在比赛中第二次夺冠，打进3个球。", "他们23点开赛，以7：5获胜，打进5个球。", ["5"]),
    # a year for a date and a date for a year; the quote's figures the claim states itself are not listed
    ("They married in 2017.", "Wed on March 22, 2015 in Rome.", ["2015-03-22"]),
    ("They were engaged in 2015 and married in 2017.", "Engaged on March 22, 2015 in Rome.", []),
    ("It has 21 segments and 6 bolts.", "It has 6 bolts and 18 segments.", ["18"]),
    # a count is no year, however many it counts
    ("2021年，大熊猫的受威胁等级降为易危。", "我国野生大熊猫数量已达到1800多只，等级降为易危。", []),
    ("2021年，大熊猫降为易危。", "2016年，野生大熊猫1864只。", ["2016"]),
    ("The count rose in 2021.", "The count rose to 1,864 pandas.", []),
])
def test_a_quote_states_figures_of_the_same_sort_instead(claim: str, quote: str, instead: list[str]) -> None:
    from tracer.text import figures_instead, numbers_and_units, stated_numbers, stated_units, unstated_numbers

    claimed, units = numbers_and_units(claim)
    missing = unstated_numbers(claimed, stated_numbers(quote), units, stated_units(quote))
    assert figures_instead(claimed, missing, units, quote, claim) == instead


def test_a_figure_stated_only_in_another_unit_disagrees_and_a_conversion_agrees() -> None:
    from tracer.text import Quantity, claim_units, numbers_agreement, stated_numbers, stated_units

    def agreement(claim: str, record: str) -> float:
        return numbers_agreement(numbers(claim), stated_numbers(record),
                                 claim_units(claim), stated_units(record))

    record = "The bridge is 1,200 metres long and cost $30 million; the river is 5 miles wide."
    assert agreement("The bridge is 1,200 metres long.", record) == 1.0
    assert agreement("The bridge is 1,200 feet long.", record) == 0.0      # same figure, other unit
    assert agreement("The bridge is 1.2 km long.", record) == 1.0          # the same length
    assert agreement("The bridge is 1.5 km long.", record) == 0.0
    assert agreement("The river is 8 km wide.", record) == 1.0             # 5 miles, rounded
    assert agreement("The bridge cost €30 million.", record) == 0.0        # money never converts
    assert agreement("It took 20 years.", "It took 2 decades.") == 1.0     # decades and centuries
    assert agreement("It stood for 300 years.", "It stood for 3 centuries.") == 1.0
    assert agreement("It took 30 years.", "It took 2 decades.") == 0.0
    # lower-case "m" and "g" after one space are metres and grams; "5m users" and "5G" are not
    assert agreement("Everest is 29,029 feet high.", "Everest is 8,848 m high.") == 1.0
    assert agreement("Everest is 8,848 feet high.", "Everest is 8,848 m high.") == 0.0
    assert agreement("The bar weighs 0.5 kg.", "The bar weighs 500 g.") == 1.0
    assert agreement("It has 5 million users.", "It has 5m users.") == 1.0
    # a capital B, M or K as model cards and tech pages write them
    assert agreement("The model has 671 billion parameters.", "The model has 671B parameters.") == 1.0
    assert agreement("The round raised $500 million.", "The round raised $500M.") == 1.0
    assert agreement("The race drew 10,000 runners.", "The race drew 10K runners.") == 1.0
    assert agreement("The model has 670 billion parameters.", "The model has 671B parameters.") == 0.0
    assert agreement("It ships 5 million tonnes.", "It ships 5 m tonnes.") == 1.0  # not 5 metres then
    # and in the sentence too: "5 m tonnes" is five million, whatever the record writes
    assert agreement("It ships 5 m tonnes.", "It ships 5,000,000 tonnes.") == 1.0
    assert agreement("It ships 5 m tonnes.", "It ships 6,000,000 tonnes.") == 0.0
    assert numbers("It ships 5 m tonnes to 3 m people.") == {"5000000", "3000000"}
    assert claim_units("The wall is 5 m high.") == {"5": Quantity("length", "m", 5.0)}
    # per cent and per mille in Chinese, in digits or numerals
    assert agreement("利率为千分之五", "利率为0.5%") == agreement("利率为0.5%", "利率为千分之5") == 1.0
    assert agreement("利率为千分之五", "利率为5%") == 0.0
    assert agreement("增长了百分之3", "增长了3%") == 1.0 and agreement("增长了百分之3", "增长了3美元") == 0.0
    assert agreement("It holds 2,000 ml.", "It holds 2 L, or 2,000 ml.") == 1.0
    assert agreement("It holds 2 gallons.", "It holds 2 L.") == 0.0  # litres, not a bare 2
    assert agreement("It holds 2 litres.", "It holds 2 L.") == 1.0
    assert agreement("The bridge cost 30 million dollars.", record) == 1.0
    assert agreement("The bridge is 1,200 long.", record) == 1.0           # no unit: the figure alone
    # a figure the record also states bare (or in the claim's unit) is not a conflict
    assert agreement("It took 30 days.", "It took 30 weeks, after 30 failed attempts.") == 1.0
    assert agreement("It took 30 days.", "It took 30 weeks.") == 0.0
    assert agreement("水在100摄氏度沸腾", "水的沸点是212华氏度") == 1.0
    assert agreement("投资5亿美元", "投资5亿元") == 0.0
    # "$" is whichever dollar the page means: it agrees with A$ and US$, which disagree with each other
    assert agreement("It cost A$5 million.", "It cost $5 million.") == 1.0
    assert agreement("It cost US$5 million.", "It cost 5 million dollars.") == 1.0
    assert agreement("It cost A$5 million.", "It cost US$5 million.") == 0.0
    # without the unit tables the figure alone decides, as before
    assert numbers_agreement(numbers("The bridge is 1,200 feet long."), stated_numbers(record)) == 1.0


def test_dates_written_in_digits_are_read_both_ways_when_day_and_month_could_swap() -> None:
    from tracer.text import numeric_dates

    assert numeric_dates("发布于2021.04.29 10:00") == {"d:2021-4-29", "d:2021-4", "d:-4-29"}
    assert numeric_dates("2021/4/29") == {"d:2021-4-29", "d:2021-4", "d:-4-29"}
    assert "d:2015-2-25" in numeric_dates("Posted 02/25/2015") == numeric_dates("am 25.02.2015")
    both = numeric_dates("on 03/04/2015")
    assert {"d:2015-3-4", "d:2015-4-3"} <= both
    # version numbers, addresses and impossible dates are not dates
    assert numeric_dates("version 1.2.2015.3, host 10.1.2.2015, 13/13/2015, 2015/13/01") == set()
    # a claim's all-digit date is one date when it reads one way only
    assert numbers("2021.4.29，天和核心舱发射") == {"d:2021-4-29"}
    assert numbers("posted 25.02.2015") == numbers("posted 02/25/2015") == {"d:2015-2-25"}
    assert numbers("posted 03/04/2015") == {"3", "4", "2015"}


def test_figures_written_in_words_are_read_on_the_record_side() -> None:
    from tracer.text import spelled_numbers

    assert spelled_numbers("six lanes, twenty-one guns and two hundred and five people") == {"6", "21", "205"}
    assert spelled_numbers("a million people, three thousand cars, a dozen eggs, the sixth floor") == {
        "1000000", "3000", "12", "6"}
    assert spelled_numbers("Eleven workers; ONE TWO three") == {"11", "1", "2", "3"}  # not one number
    assert spelled_numbers("2 million people") == set()  # the digits' reading has it
    assert spelled_numbers("三千五百万人，一亿两千万，三万五千，五名学生，十分钟") == {
        "35000000", "120000000", "35000", "5", "10"}
    # Chinese numerals that do not count: "一些" (some), "三国" (a name), "十分" (very), "万一" (in case)
    assert spelled_numbers("一些人读三国，十分重要，万一下雨") == set()
    # scale characters after digits belong to the digits' reading
    assert spelled_numbers("47.1万亿元，12.0千瓦时，3亿人") == set()
    units = StatedUnits()
    spelled_numbers("It took four years, cost two million dollars and fifty percent more; 六公里", units)
    seen = {q.unit for k in ("4", "2000000", "50", "6") for q in units.units_of[k] if q}
    assert seen == {"yr", "$", "%", "km"}
    units = StatedUnits()  # 百分之三十 is 30%, and its 百 is no hundred
    assert spelled_numbers("增长了百分之三十，百分之五的人", units) == {"30", "5"}
    assert {q.unit for k in ("30", "5") for q in units.units_of[k] if q} == {"%"}
    # lower-casing that changes the text's length falls back to a case-blind match, offsets intact
    units = StatedUnits()
    got = spelled_numbers("İstanbul had Six Million people and Four Years of work", units)
    assert got == {"6000000", "4"}
    assert {q.unit for q in units.units_of["4"] if q} == {"yr"}


def test_figures_a_claim_writes_in_words_are_read_as_plain_counts_only() -> None:
    from tracer.text import approximate_figures, claim_spelled_numbers, claim_units, near_figures

    # each reads as the digits would, units and all
    for words, digits in [("Twelve workers died", "12 workers died"),
                          ("It took four years", "It took 4 years"),
                          ("two million dollars", "2 million dollars"), ("fifty percent", "50 percent"),
                          ("两小时后", "2小时后"), ("十二名工人", "12名工人"), ("百分之三十", "30%")]:
        assert numbers(words) == numbers(digits) and claim_units(words) == claim_units(digits), words
    # not what says more than it counts: "one", "a dozen", "a thousand", ordinals, a count that
    # refers back ("the two films", "这三个校区"), a numeral with nothing counted after it
    assert claim_spelled_numbers(
        "one of the first, a dozen eggs, a thousand thanks, a third of them, the two films, both three, "
        "这三个校区，一些人读三国，十分重要，万人空巷") == set()
    assert numbers("3万人") == {"30000"}  # the 万 belongs to the digits
    assert claim_spelled_numbers("These two films and seven others") == {"7"}
    # a hedge between the numeral and what it counts: "二万七千八百余人", "三十多家", "十来个"
    assert claim_spelled_numbers("随行将士二万七千八百余人，三十多家企业，十来个人，多余的人") == {
        "27800", "30", "10"}
    assert approximate_figures("随行将士两万七千余人，三十多家企业，约两千人") == {
        "27000": ("more", "27000"), "30": ("more", "30"), "2000": ("about", "2000")}
    # "两万多" reaches up to the next ten thousand, "两万七千余" to the next thousand
    assert near_figures({"20000": ("more", "20000")}, ["20000"], [23000.0]) == {"20000"}
    assert near_figures({"27000": ("more", "27000")}, ["27000"], [28500.0]) == set()


_NUMBER_SOUP = st.lists(
    st.sampled_from(
        "12 3 1,200 2021 4 29 0.5 25 02 2015 . / - 年 月 日 号 第 十二 万 亿 元 美元 米 公里 周年 "
        "$ A$ € % °C °F 1) ， 。 ( ) 二〇二一 四 二十九".split()
        + [" ", " km", " miles", " feet", " percent", " million", " years", " days", " May", " of",
           " six", " twenty", "-one", " hundred", " a", " and", " 三", "千", "家", "两", "百分之", "千分之",
           " m", "m", "bn", " g"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_NUMBER_SOUP)
def test_a_text_never_disagrees_with_its_own_numbers(text: str) -> None:
    """Whatever a sentence says, a record holding the same words states every number, date and
    unit of it (read as the verifier reads a record: `_record_reading`)."""
    from tracer.text import claim_units, numbers_agreement

    stated, units = _record_reading(text, claim_units(text))
    assert numbers_agreement(numbers(text), stated, claim_units(text), units) == 1.0


def _record_reading(text: str, claimed_units: Mapping[str, object] | None = None
                    ) -> tuple[set[str], StatedUnits]:
    """Everything a record states, as the verifier reads it when its digits leave a claim's figure
    unstated: digits, figures in words, dates in digits only, codes and the numbers glued into
    them (for the claim's figures without units only: "X90" states no "90 km"), and all their units."""
    from tracer.text import codes, glued_numbers, numeric_dates, spelled_numbers, stated_numbers, stated_units

    spelled_units = StatedUnits()
    stated = stated_numbers(text) | spelled_numbers(text, spelled_units) | numeric_dates(text)
    stated |= codes(text) | {g for g in glued_numbers(text) if g not in (claimed_units or {})}
    return stated, stated_units(text).merged(spelled_units)


@settings(max_examples=300, deadline=None)
@given(_NUMBER_SOUP, _NUMBER_SOUP, _NUMBER_SOUP)
@example("12%", " km12", "12年")   # a figure glued into a code states no "12%", with or without "12年"
def test_more_record_text_never_makes_numbers_disagree_more(claim: str, record: str, more: str) -> None:
    from tracer.text import claim_units, numbers_agreement

    def agreement(text: str) -> float:
        stated, units = _record_reading(text, claim_units(claim))
        return numbers_agreement(numbers(claim), stated, claim_units(claim), units)

    assert agreement(record) <= agreement(record + "\n" + more)


def test_a_number_glued_into_a_code_states_no_figure_with_units() -> None:
    """"X90" states the claim's bare 90 (a model's number), not its "90公里" or "12%"."""
    from tracer.text import numbers_agreement

    def agreement(claim: str, record: str) -> float:
        stated, units = _record_reading(record, claim_units(claim))
        return numbers_agreement(numbers(claim), stated, claim_units(claim), units)

    assert agreement("销量达到90公里。", "产品X90于去年发布，销量达到90万辆。") == 0.0
    assert agreement("Sales rose 12%.", "The km12 route opened.") == 0.0
    assert agreement("The 4090 sold out.", "The RTX4090 sold out.") == 1.0


def test_a_records_counted_figure_is_no_share_or_sum_of_the_claim() -> None:
    """"30家工厂", "12日", "09:30发布" do not state the claim's "30%" (a page's dates, times and
    list numbers made contradicted shares count as stated); a bare "30" still does."""
    from tracer.text import numbers_agreement

    def agreement(claim: str, record: str) -> float:
        stated, units = _record_reading(record, claim_units(claim))
        return numbers_agreement(numbers(claim), stated, claim_units(claim), units)

    for record in ("公司在全球拥有30家工厂。", "2025年1月30日消息。", "09:30发布。", "增长30个百分点。"):
        assert agreement("市场份额为30%。", record) == 0.0, record
        assert agreement("融资30亿元。", record.replace("30", "30亿")) == 0.0, record
    for claim, record in (("份额为30%。", "市场份额为30%。"), ("份额为30%。", "份额：30"),
                          ("份额为30%。", "份额在30左右"), ("份额为30%。", "份额30以上"),
                          ("份额为30%。", "份额30多"),
                          ("份额为30%。", "占比30，居首。"), ("拥有30家工厂。", "拥有30家工厂。"),
                          ("融资30亿元。", "融资30亿元。")):
        assert agreement(claim, record) == 1.0, record


def test_codes_are_read_beside_numbers() -> None:
    from tracer.text import codes

    assert codes("The RTX4090 has 24GB") == {"c:RTX4090"}          # "24GB" is a number with a unit
    assert codes("TL-XDR3039易展版") == {"c:XDR3039"}
    assert codes("FeS₂ and MnCl2") == {"c:FeS2", "c:MnCl2"}         # subscript digits are digits
    assert codes("A320neo, H5N1, F5F6F7") == {"c:A320neo", "c:H5", "c:N1", "c:F5", "c:F6", "c:F7"}
    assert codes("Q3 revenue, FY2021, 20 m2, 5 km2, i7-12700K") == {"c:i7"}
    assert numbers("The RTX4080 has 16 GB") == {"c:RTX4080", "16"}
    assert numbers("小米14发布") == {"14"}                           # digits after CJK: a number
    assert numbers("PM2.5浓度为35微克") == {"c:PM2.5", "35"}          # a decimal code


def test_a_code_is_stated_in_any_case_and_spacing_but_not_by_another_model() -> None:
    from tracer.text import code_stated, glued_numbers

    assert code_stated("c:RTX4090", "an rtx 4090 card") and code_stated("c:RTX4090", "RTX-4090")
    assert code_stated("c:XDR3039", "TP-Link TL--XDR3039") and code_stated("c:FeS2", "pyrite, FeS₂,")
    assert not code_stated("c:RTX4090", "the RTX4080") and not code_stated("c:RTX4090", "RTX40900")
    assert not code_stated("c:A320", "the A320neo") and not code_stated("c:N1", "H5N8")
    assert code_stated("c:F6", "F5F6F7") and code_stated("c:H5", "H5N1")
    assert code_stated("c:PM2.5", "今日PM2.5指数") and not code_stated("c:PM2.5", "PM25")
    assert glued_numbers("RTX4090 and FY2021, 3.5") == {"4090", "2021"}


def test_acronyms_are_all_capital_words_unless_the_text_shouts() -> None:
    assert acronyms("NASA and the EU fined two FDAs, not Nasa or A.") == ["NASA", "EU", "FDA"]
    assert acronyms("BREAKING NEWS: NASA LAUNCHES ROVER") == []


def test_a_run_of_capitalised_words_gives_the_acronyms_it_may_be_written_as() -> None:
    text = "Officials at the Department of Defense and the Food and Drug Administration met."
    found = {acr: (start, words) for start, acr, words in abbreviations(text)}
    assert found["DD"] == found["DOD"] == (text.index("Department"), ["Department", "Defense"])
    assert found["FDA"] == (text.index("Food"), ["Food", "Drug", "Administration"])
    assert found["FADA"][1] == ["Food", "Drug", "Administration"]  # the joiner's initial too
    assert found["DA"] == (text.index("Drug"), ["Drug", "Administration"])  # every sub-run
    assert all(not acr.startswith("O") for acr in found)  # "Officials at the": no run
    assert abbreviations("nothing capitalised here") == []


def test_two_letters_stand_only_for_a_whole_name() -> None:
    text = "Prime Minister Rishi Sunak met the European Union and The United Kingdom in Geneva."
    found = {acr for _, acr, _ in abbreviations(text)}
    assert {"EU", "UK", "PMRS"} <= found  # an opening "The" is not part of the name
    assert not {"PM", "RS", "MR"} & found  # parts of a longer name
    assert whole_name(text, text.index("European"), text.index(" and"))
    assert not whole_name(text, text.index("Rishi"), text.index(" met"))  # "Minister" before it
    assert not whole_name(text, 0, text.index(" Rishi"))  # "Rishi" after it


def test_an_acronym_stands_for_a_name_with_at_most_two_small_words_in_a_row() -> None:
    assert spelled_out("DOI").search("the Department of the Interior")
    assert spelled_out("DD").search("the Department of the Defense")
    # three in a row is no name; the bound also keeps the search linear on text full of small
    # words (an unbounded gap backtracks polynomially: 80 "and"s took 1.6 s, 160 about a minute)
    assert spelled_out("DD").search("Department of the and Defense") is None


def test_a_number_enumerating_the_sentence_is_no_figure_of_it() -> None:
    assert numbers("**2. 增长率：** 同比增长8.5%。") == numbers("2. Growth rose 8.5%.") == {"8.5"}
    assert numbers("It rose 2. Then it fell.") == {"2"}


def test_rounded_and_hedged_figures_are_near_the_values_they_stand_for() -> None:
    from tracer.text import approximate_figures, figure_near, near_figures

    assert approximate_figures("销量约为302.4万辆，超过300万辆，300多万辆，占比62%左右，增长不到3%") == {
        "3024000": ("about", "302.4"), "3000000": ("above", "300"), "62": ("about", "62"),
        "3": ("below", "3")}
    assert approximate_figures("about $10 billion in 2020, at least 5 people, nearly 18 million") == {
        "10000000000": ("about", "10"), "5": ("least", "5"), "18000000": ("nearly", "18")}
    assert approximate_figures("an estimated 41 million players in 2023") == {"41000000": ("round", "41")}
    stated = sorted([3024400.0, 61.9, 2.94, 40000000.0])
    near = near_figures({"3024000": ("round", "302.4"), "3000000": ("about", "300"), "62": ("round", "62"),
                         "2.9": ("round", "2.9"), "41000000": ("round", "41")},
                        ["3024000", "3000000", "62", "2.9", "41000000"], stated)
    assert near == {"3024000", "3000000", "62", "2.9"}  # 40 million is no rounding of 41 million
    assert figure_near("above", "300", "302.44") and not figure_near("above", "300", "300")
    assert not figure_near("above", "300", "340") and not figure_near("round", "300", "302.44")
    assert not figure_near("round", "2021", "2021.4")  # a year is never approximate



def test_hedges_are_whole_words_and_scale_characters_keep_their_reading() -> None:
    from tracer.text import approximate_figures

    for text, key in (("Wind and solar now cover 30% of demand", "30"), ("签订合约300份", "300"),
                      ("最近100天内", "100"), ("turnover of $300 million", "300000000"),
                      ("the founder 5 years ago", "5")):
        assert approximate_figures(text)[key][0] == "round", text
    assert approximate_figures("over 30% of demand")["30"][0] == "above"
    assert numbers("该报告全文共5千字") == {"5000"}


def test_a_figure_or_date_starts_only_where_what_stands_before_it_allows() -> None:
    """The patterns that read a record's figures and dates check the character before a match's
    first character after that character (so that the regex engine looks only where a digit or a
    month's initial is): each such boundary, on both sides."""
    from tracer.text import glued_numbers, numeric_dates, stated_numbers

    iso = {"d:2021-4-29", "d:2021-4", "d:-4-29"}
    assert iso <= stated_numbers("2021-04-29") and iso <= stated_numbers("(2021-04-29)")
    assert not iso & stated_numbers("x2021-04-29") and not iso & stated_numbers("1.2021-04-29")
    assert "d:2021-4" in stated_numbers("2021年4月") and "d:2021-4" not in stated_numbers("12021年4月")
    assert "d:-4-5" in stated_numbers("于4月5日") and "d:-4-5" not in stated_numbers("0.4月5日")
    assert "d:2021-5-5" in stated_numbers("5 May 2021")
    for text in ("a5 May 2021", "0.5 May 2021", "1,5 May 2021"):
        found = stated_numbers(text)
        assert "d:2021-5" in found and "d:2021-5-5" not in found, text  # the month and year still
    for text in ("May 5, 2021", "May\n5, 2021", "(May 5, 2021)", "Sept. 5, 2021"):
        assert {"d:2021-5-5", "d:2021-9-5"} & stated_numbers(text), text
    assert "d:-5-5" in stated_numbers("May.  5") and "d:2021-9" in stated_numbers("September 2021")
    for text in ("Xmay 5, 2021", "Mayday 5, 2021", "_May 5, 2021", "9May 5, 2021"):
        assert not any(v.startswith("d:") for v in stated_numbers(text)), text
    assert "123" not in stated_numbers("abc123 and 7") and "0.5" not in stated_numbers("x.5")
    assert "12345678" in stated_numbers("12 345 678 people")
    assert stated_numbers("3 100 people") == {"3", "100"}      # one space, two figures
    assert "60" in stated_numbers("六成") and "60" not in stated_numbers("十六成")
    assert numeric_dates("2021/4/29")
    assert not numeric_dates("1.2021/4/29") and not numeric_dates("5,2021/4/29")
    assert glued_numbers("RTX4090 and 4090") == {"4090"} and glued_numbers("4090 X") == set()
