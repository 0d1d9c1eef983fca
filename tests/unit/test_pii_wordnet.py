"""WordNet vocabulary (pii/wordnet.py) and the descriptive-public-body rule that uses it.

``make setup`` installs wordnet-base (deploy/system-deps.sh), so WordNet must be present here."""
from __future__ import annotations

from anonstream.pii import wordnet
from anonstream.pii.grouping import DocumentEntities
from anonstream.pii.policy import RulePolicy, country_of, is_descriptive_public_body


def test_parse_lemmas_reads_lowercase_words_of_data_lines():
    lines = [
        "  1 This software and database is being provided to you, the LICENSEE\n",
        "08851034 15 n 02 Bruges 0 City_of_Bridges 0 003 @i 08524735 n 0000 | a city\n",
        "02884096 06 n 03 board 0 circuit_board 0 plug-in 0 001 @ 03033362 n 0000 | a printed circuit\n",
        "00013887 00 a 01 galore(ip) 0 000 | in great numbers\n",
    ]
    assert wordnet.parse_lemmas(lines) == {"board", "circuit", "plug-in", "galore"}  # "of" only in a proper name


def test_common_words_from_the_installed_wordnet():
    assert wordnet.available(), "WordNet missing: run deploy/system-deps.sh (make setup does)"
    assert wordnet.is_common_word("Highways") and wordnet.is_common_word("insurance")
    assert wordnet.is_common_word("companies")  # regular plural
    assert not wordnet.is_common_word("Warsaw")  # capitalized in WordNet: a proper name
    assert not wordnet.is_common_word("Szczecin")


def test_descriptive_public_bodies():
    assert is_descriptive_public_body(["general directorate of highways"], None)
    assert is_descriptive_public_body(["minister of planning (minister gospodarki przestrzennej)"], "POL")
    assert not is_descriptive_public_body(["sakarya civil court"], "TUR")  # a place names it
    assert not is_descriptive_public_body(["batman assize court"], "TUR")  # "batman" is a word, and a city
    assert is_descriptive_public_body(["foreign and commonwealth office"], "GBR")  # a city of that name: not British
    assert not is_descriptive_public_body(["high court of eastern denmark"], "DNK")  # a region
    assert not is_descriptive_public_body(["united states district court"], "POL")  # another country
    # ... unless any country is as unspecific as the background one (RulePolicy: country_no_mask for ORG)
    assert is_descriptive_public_body(["department of lands and surveys of the republic of cyprus"], "TUR",
                                      any_country=True)
    assert not is_descriptive_public_body(["high court of eastern denmark"], "TUR", any_country=True)
    assert not is_descriptive_public_body(["christian trade union"], "DNK")  # no public-body head
    ents = DocumentEntities("d")
    ent = ents.resolve("ORG", "National Water Board")
    assert RulePolicy().classify(ent, ents) == "NO_MASK"
    assert RulePolicy(descriptive_body_no_mask=False).classify(ent, ents) == "QUASI"


def test_a_public_office_named_by_what_it_is_is_not_masked_but_a_lower_case_occupation_is():
    ents = DocumentEntities("d")
    minister = ents.resolve("DEM", "Minister of Justice", "OCCUPATION")
    minister["surface"] = "Minister of Justice"
    assert RulePolicy().classify(minister, ents) == "QUASI"  # default: a named position stays (biographies)
    assert RulePolicy(public_office_no_mask=True).classify(minister, ents) == "NO_MASK"
    prosecutor = ents.resolve("DEM", "public prosecutor", "OCCUPATION")
    prosecutor["surface"] = "public prosecutor"
    assert RulePolicy(public_office_no_mask=True).classify(prosecutor, ents) == "QUASI"


def test_names_a_thing_by_the_lexicographer_files_of_all_senses():
    assert wordnet.names_a_thing("Trophy") and wordnet.names_a_thing("Avenue") and wordnet.names_a_thing("Leagues")
    assert not wordnet.names_a_thing("Gates")  # a sense is a person (Bill Gates): a surname
    assert not wordnet.names_a_thing("Szczecin")  # no common noun
    assert wordnet.LEXFILE_GROUP in wordnet.noun_lexfiles("league")


def test_a_demonym_that_starts_a_wordnet_term_is_part_of_the_term():
    text = "He played American football, took a Turkish bath, wrote in the German language and met a German official."
    assert wordnet.starts_a_term(text, text.index("American") + len("American"))
    assert wordnet.starts_a_term(text, text.index("Turkish") + len("Turkish"))
    assert not wordnet.starts_a_term(text, text.index("German") + len("German"))  # a language: the demonym's sense
    assert not wordnet.starts_a_term(text, text.rindex("German") + len("German"))


def test_country_adjectives_come_from_pertainyms_and_settle_demonyms():
    adjectives = wordnet.country_adjectives()
    assert adjectives["Argentine"] == adjectives["Argentinian"] == "Argentina"
    assert adjectives["Saudi"] == "Saudi Arabia"
    assert "Electrical" not in adjectives and "electrical" not in adjectives  # a pertainym of no country
    # countryinfo alone gave "French" to Saint Pierre and Miquelon and "Norwegian" to Svalbard; WordNet's adjective
    # settles a demonym several countries use, and adds the ones countryinfo lacks
    assert (country_of("french"), country_of("norwegian"), country_of("argentine")) == ("FRA", "NOR", "ARG")
    assert country_of("mauritanian") == "MRT"  # not contested: countryinfo's stays
