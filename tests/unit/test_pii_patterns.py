"""Pattern recognizers: validation (checksums, parsing, calendar/legal-context checks), no spaCy needed."""
from __future__ import annotations

import pytest

from anonstream.pii.patterns import (
    CardRecognizer, CaseNumberRecognizer, DateTimeRecognizer, EmailRecognizer, IbanRecognizer, IpRecognizer,
    MoneyRecognizer, PhoneRecognizer, QuantityRecognizer, UrlRecognizer, iban_valid, is_provision_reference,
    luhn_valid,
)


def _hits(recognizer, text):
    return [text[d.start : d.end] for d in recognizer.analyze(text)]


def test_luhn_and_card_validation():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    text = "card 4111 1111 1111 1111 and 4111 1111 1111 1112"
    assert _hits(CardRecognizer(), text) == ["4111 1111 1111 1111"]


def test_iban_mod97_and_length():
    assert iban_valid("DE89 3704 0044 0532 0130 00")
    assert not iban_valid("DE89 3704 0044 0532 0130 01")
    assert not iban_valid("DE89 3704 0044 0532 0130")  # wrong length for DE
    assert _hits(IbanRecognizer(), "pay to GB82 WEST 1234 5698 7654 32 now") == ["GB82 WEST 1234 5698 7654 32"]


def test_phone_is_parsed_not_just_matched():
    rec = PhoneRecognizer()
    assert _hits(rec, "Call +44 20 7946 0958 today") == ["+44 20 7946 0958"]
    dets = rec.analyze("Tel. 030 12345678")
    assert [d.context for d in dets] == [["tel"]]
    assert _hits(rec, "on 12.05.2001 and application no. 36110/97, amount 1,234,567") == []
    assert _hits(rec, "+44 00 0000 0000") == []  # not a valid number in any plan


def test_ip_email_url():
    assert _hits(IpRecognizer(), "from 192.168.1.10 and 999.1.1.1 and 2001:db8::1") == ["192.168.1.10", "2001:db8::1"]
    assert _hits(EmailRecognizer(), "write to jane.doe@example.org.") == ["jane.doe@example.org"]
    assert _hits(UrlRecognizer(), "see https://example.org/a?b=1.") == ["https://example.org/a?b=1"]


def test_case_numbers_but_not_legal_references_or_dates():
    rec = CaseNumberRecognizer()
    text = "Application no. 36110/97 under Article 6 § 1, Law no. 285, on 12/05/2001; code D-4840."
    hits = _hits(rec, text)
    assert "36110/97" in hits and "D-4840" in hits
    assert not any(h in ("285", "12/05/2001", "6", "1") for h in hits)
    # two numbers of at most two digits are a ratio, a fraction or a date, not a case number
    assert _hits(rec, "our 80/20 initiative, open 24/7, on 12/05") == []
    assert "12/345" in _hits(rec, "application no. 12/345")


def test_capitals_and_digits_are_a_code_unless_a_currency_amount():
    rec = CaseNumberRecognizer()
    assert _hits(rec, "the vehicle registration mark EYX 622 was seen") == ["EYX 622"]
    assert _hits(rec, "he was paid DKK 2,200 and GBP 150") == []


@pytest.mark.parametrize("surface,provision", [
    ("Article 6 § 1 of the Convention", True), ("Articles 8 and 14", True), ("Rule 39", True),
    ("Protocol No. 11", True), ("Rules of Court", True), ("the Convention and Rule 36", True), ("Convention", True),
    ("Convention on the Rights of the Child", False), ("Army Act 1955", False), ("section 78 of PACE", False),
    ("Rules Committee", False), ("Peugeot 505", False),
])
def test_provisions_of_the_convention_and_rules_of_court(surface, provision):
    assert is_provision_reference(surface) is provision


@pytest.mark.parametrize("text,expected", [
    ("in the case NJA 2005 p. 884 (see", "NJA 2005 p. 884"),
    ("Clinton v. Bradley [2000] NI 196) which", "NI 196"),
    ("Brown v. Stott [2001] 2 WLR 817. Thereafter", "2 WLR 817"),  # the year in brackets: a date
    ("Industries Ltd ([2000] AC 326), that", "AC 326"),
    ("see (1976) 1 EHRR 737 and", "1 EHRR 737"),
])
def test_law_report_citations_are_codes(text, expected):
    assert expected in _hits(CaseNumberRecognizer(), text)


def test_law_report_needs_a_reporter_and_a_page():
    rec = CaseNumberRecognizer()
    for text in ("the Terrorism Act 2000 s. 41 applied", "in [1999] the court", "on (2004) 11 April 2005"):
        assert not [d for d in rec.analyze(text) if d.rule == "law_report"], text


def test_every_number_of_a_nos_list_is_a_code_but_not_in_legal_references():
    text = "the plots nos. 260, 268, 119/5, 164.9 and 425. The applicant"
    hits = _hits(CaseNumberRecognizer(), text)
    assert {"268", "119/5", "164.9", "425"} <= set(hits) and "425." not in hits
    assert _hits(CaseNumberRecognizer(), "under Protocols Nos. 1 and 11 to the Convention") == []
    assert _hits(CaseNumberRecognizer(), "Articles nos. 5 and 6") == []
    assert _hits(CaseNumberRecognizer(), "29 October 1992 (Series A no. 247-A)") == []  # the Court's reports


@pytest.mark.parametrize("text,expected", [
    ("held on 2 and 25 January 1995.", "2 and 25 January 1995"),
    ("on 14, 24 and 26 September 2007;", "14, 24 and 26 September 2007"),
    ("in the winter of 2007", "winter of 2007"),
    ("born in 1960 in Ankara", "1960"),
    ("for three and a half years.", "three and a half years"),
    ("at 11.45 p.m. he left", "11.45 p.m."),
])
def test_dates_and_durations(text, expected):
    assert expected in _hits(DateTimeRecognizer(), text)


def test_years_of_laws_and_entry_into_force_are_not_dates():
    hits = _hits(DateTimeRecognizer(), "under the Act of 1969 and Law no. 12 of 1982; it entered into force on 1 November 1998")
    assert hits == []
    from anonstream.pii.patterns import is_legal_date

    text = "under the Police and Criminal Evidence Act 1984, arrested on 3 May 1984"
    assert is_legal_date(text, text.index("1984"), text.index("1984") + 4)  # a statute's title (UK style)
    assert not is_legal_date(text, text.index("3 May"), text.index("3 May") + 10)


def test_dates_of_laws_and_of_the_courts_own_events_are_not_dates_of_the_case():
    rec = DateTimeRecognizer()
    assert _hits(rec, "under the Law of 17 June 2004 on complaints") == []
    assert _hits(rec, "Pursuant to Law no. 5190 of 16 June 2004, published in the Official Gazette on 30 June 2004,") == []
    assert _hits(rec, "On 1 November 2001 the Court changed the composition of its Sections.") == []
    assert _hits(rec, "The application was transmitted to the Court on 1 November 1998, when Protocol No. 11") == []
    assert _hits(rec, "On 21 December 2000 Law no. 4616 came into force.") == []
    assert _hits(rec, "Proceedings under the 2004 Act; the 1997 Lustration Act entered into force on 3 August 1997.") == []
    # the facts of the case stay dates
    assert "17 June 2004" in _hits(rec, "On 17 June 2004 the applicant was arrested.")
    assert "16 June 2004" in _hits(rec, "the judgment of 16 June 2004 was served")


def test_money_and_quantities_keep_units():
    text = "DKK 2,200,000 and 10,000 Polish zlotys (PLN), approximately EUR 19,000,000 and 50 metres and 30%"
    money = _hits(MoneyRecognizer(), text)
    assert {"DKK 2,200,000", "10,000 Polish zlotys (PLN)", "approximately EUR 19,000,000"} <= set(money)
    assert {"50 metres", "30%"} <= set(_hits(QuantityRecognizer(), text))


def test_a_unit_glued_to_a_number_word_is_no_quantity():
    # earnings call: "I am very confident" had been a quantity ("a" + "m") and became "I a number of very confident"
    assert _hits(QuantityRecognizer(), "and I am sure, an hour later, a 5m wall") == ["5m"]


def test_pounds_sterling_and_dollars_with_their_code():
    # dev tuning half: "10,000 pounds sterling (GBP)" had been "10,000 pounds" (the shorter alternative matched first)
    text = ("a payment of 10,000 pounds sterling (GBP), then 200 pounds sterling, approximately 28,000 US Dollars "
            "(USD)) and 12,000 euros (“EUR”) paid")
    assert _hits(MoneyRecognizer(), text) == ["10,000 pounds sterling (GBP)", "200 pounds sterling",
                                              "approximately 28,000 US Dollars (USD)", "12,000 euros (“EUR”)"]


@pytest.mark.parametrize("text, found", [
    ("and his team won 3–0. At the end", ["3–0"]),
    ("a college basketball record of 289–296.  His teams", ["289–296"]),
    ("She compiled a .983 fielding average and hit .225 with a .319 on-base percentage", [".983", ".225", ".319"]),
    ("where they placed 15th; in 1884 the team fell back to seventh place", ["15th", "seventh"]),
    ("sixth in runs batted in (45) and tenth in the league", ["sixth", "tenth"]),
    ("Articles 5–6 of the Convention; pages 10–12", []),  # a range without a result word is no score
    ("the 3rd Chamber; on 3.5 hectares; 1.983 m; version 2.319", []),
])
def test_result_recognizer(text, found):
    from anonstream.pii.patterns import ResultRecognizer

    dets = ResultRecognizer().analyze(text)
    assert [text[d.start:d.end] for d in sorted(dets, key=lambda d: d.start)] == found
    assert all(d.type == "QUANTITY" and d.subtype == "RESULT" for d in dets)


def test_a_bare_year_the_tagger_read_as_a_count_is_a_date():
    """"our 2016 operating plan": spaCy says CARDINAL; every bare year of the TAB and biography gold is DATETIME."""
    from types import SimpleNamespace

    from anonstream.pii.ner import SpacyNerRecognizer

    text = "our 2016 operating plan and 2,016 units"
    ents = [SimpleNamespace(label_="CARDINAL", start_char=4, end_char=8, text="2016"),
            SimpleNamespace(label_="CARDINAL", start_char=28, end_char=33, text="2,016")]
    found = SpacyNerRecognizer().analyze(text, SimpleNamespace(ents=ents))
    assert [(text[d.start:d.end], d.type) for d in found] == [("2016", "DATETIME"), ("2,016 units", "QUANTITY")]


def test_a_number_after_a_document_structure_noun_is_a_cross_reference():
    from anonstream.pii.patterns import is_cross_reference

    text = "(see paragraphs 26-29 below), § 3, page 365; Now to Slide 28. She paid 26 euros in section heating."
    for ref in ("26-29", "3,", "365", "28"):
        assert is_cross_reference(text, text.index(ref))
    assert not is_cross_reference(text, text.index("26 euros"))


def test_a_name_ending_in_a_document_structure_noun_and_number_is_a_cross_reference():
    from anonstream.pii.patterns import ends_in_cross_reference

    for name in ("Turning to Slide 5", "Exhibit 99", "Item 1A", "Page 13"):
        assert ends_in_cross_reference(name), name
    for name in ("Boeing 787", "Slide Rule Inc", "Section Partners"):
        assert not ends_in_cross_reference(name), name


def test_numbers_inside_codes_and_names_and_category_labels_are_no_entities():
    from anonstream.pii.patterns import (
        is_category_label, is_currency_code, is_inside_a_code, is_inside_a_name, is_legal_date)

    text = "In Q4 we filed an 8-K; 25 units sold. He played One Day International cricket. One Day later he left."
    assert is_inside_a_code(text, text.index("4 we"), text.index("4 we") + 1)  # "Q4" read as "Q" and "4"
    assert is_inside_a_code(text, text.index("8-K"), text.index("8-K") + 1)
    assert not is_inside_a_code(text, text.index("25"), text.index("25") + 2)
    assert is_inside_a_code("Q4 results fell", 0, 10)
    one = text.index("One Day I")
    assert is_inside_a_name(text, one, one + 7)
    later = text.index("One Day later")
    assert not is_inside_a_name(text, later, later + 7)  # a sentence's first words
    for label in ("Phase III", "Class A", "Tier 1", "Form 10-K"):
        assert is_category_label(label), label
    for name in ("Boeing 787", "Galaxy", "Phase"):
        assert not is_category_label(name), name
    assert is_currency_code("GBP") and not is_currency_code("GBP 5")
    statute = "under SFS 1971:291 of the code"
    assert is_legal_date(statute, statute.index("1971"), statute.index("1971") + 4)
