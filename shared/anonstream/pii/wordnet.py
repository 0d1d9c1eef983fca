"""English common-word vocabulary from WordNet 3.0 (Debian ``wordnet-base``), read straight from its data files.

A word is *common* when WordNet lists it as a lower-case lemma, or part of a lower-case multi-word lemma, of some
noun, adjective, verb or adverb synset ("board", "highways", "insurance"). Proper names appear capitalized in WordNet
("Warsaw", "Denmark") and unknown names not at all ("Szczecin", "Sakarya"), so neither counts. The policy uses this
to tell a *descriptive* institution name ("General Directorate of Highways", "National Water Board") from a
*naming* one ("Sakarya Civil Court").

Where WordNet lives: ``ANONSTREAM_WORDNET_DIR``, then ``$WNHOME/dict``, then ``/usr/share/wordnet`` (Debian).
``make setup`` installs ``wordnet-base`` where it is missing (deploy/system-deps.sh). Without WordNet the
vocabulary is empty: ``available()`` is False and the rules that need it stay off (logged once).
"""
from __future__ import annotations

import calendar
import functools
import logging
import os
import re
from pathlib import Path

log = logging.getLogger(__name__)

_POS_FILES = ("data.noun", "data.adj", "data.verb", "data.adv")
_INFLECTIONS = (("ies", "y"), ("ses", "s"), ("es", ""), ("s", ""))


def wordnet_dir() -> Path | None:
    candidates = [os.environ.get("ANONSTREAM_WORDNET_DIR")]
    if os.environ.get("WNHOME"):
        candidates.append(os.path.join(os.environ["WNHOME"], "dict"))
    candidates.append("/usr/share/wordnet")
    for c in candidates:
        if c and (Path(c) / "data.noun").is_file():
            return Path(c)
    return None


def parse_lemmas(lines) -> set[str]:
    """Lower-case lemma words of WordNet ``data.*`` lines (synset offset, lex file, pos, word count in hex,
    then word / lex_id pairs); license header lines start with two spaces."""
    out: set[str] = set()
    for line in lines:
        if line.startswith("  "):
            continue
        parts = line.split(" ")
        if len(parts) < 5:
            continue
        for i in range(int(parts[3], 16)):
            lemma = re.sub(r"\(.*\)$", "", parts[4 + 2 * i])  # adjective markers: "galore(ip)"
            if lemma[:1].islower():  # a proper name ("City_of_Bridges") contributes no word, not even "of"
                out.update(tok for tok in lemma.split("_") if tok)
    return out


@functools.lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    root = wordnet_dir()
    if root is None:
        log.warning("WordNet not found (set ANONSTREAM_WORDNET_DIR or install wordnet-base): "
                    "rules that need the English vocabulary are off")
        return frozenset()
    words: set[str] = set()
    for name in _POS_FILES:
        with open(root / name, encoding="latin-1") as handle:
            words |= parse_lemmas(handle)
    return frozenset(words)


def available() -> bool:
    return bool(common_words())


def load() -> None:
    """Read the vocabulary and the noun index now; they are read on first use otherwise."""
    common_words()
    _noun_senses()


def is_common_word(word: str) -> bool:
    """``word`` (any case) or its regular singular is a lower-case WordNet lemma."""
    vocab = common_words()
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w in vocab:
        return True
    return any(w.endswith(suf) and w[: len(w) - len(suf)] + rep in vocab for suf, rep in _INFLECTIONS)


@functools.lru_cache(maxsize=1)
def _noun_senses() -> dict[str, tuple[int, ...]]:
    """Noun lemma → byte offsets in ``data.noun`` of its senses, most frequent first (``index.noun``)."""
    root = wordnet_dir()
    out: dict[str, tuple[int, ...]] = {}
    if root is None:
        return out
    with open(root / "index.noun", encoding="latin-1") as handle:
        for line in handle:
            if line.startswith("  "):
                continue
            parts = line.split()
            synsets, pointers = int(parts[2]), int(parts[3])
            if synsets:
                out[parts[0]] = tuple(int(o) for o in parts[6 + pointers:6 + pointers + synsets])
    return out


def _synset(offset: int) -> list[str]:
    with open(wordnet_dir() / "data.noun", encoding="latin-1") as handle:
        handle.seek(offset)
        return handle.readline().split()


LEXFILE_PERSON = 18  # noun.person


@functools.lru_cache(maxsize=4096)
def is_noun(word: str) -> bool:
    """``word`` (any case) or its regular singular is a WordNet noun."""
    return _first_sense(word) is not None


@functools.lru_cache(maxsize=4096)
def is_person_noun(word: str) -> bool:
    """The most frequent noun sense of ``word`` (its regular singular; of a hyphenated word its last part:
    "co-accused") is a kind of person: in the lexicographer file noun.person, or person.n.01 itself ("individual")."""
    data = _first_sense(word) or _first_sense(word.replace("‑", "-").rsplit("-", 1)[-1])
    return data is not None and (int(data[1]) == LEXFILE_PERSON or "person" in data[4:4 + 2 * int(data[3], 16):2])


# WordNet's lexicographer files of nouns that name things a proper name can be built on ("Gruen Trophy",
# "Horst Wessel Song", "Kennedy Avenue", "Major Leagues"): noun.act, noun.artifact, noun.communication, noun.event,
# noun.group, noun.location, noun.possession.
LEXFILES_THING = frozenset({4, 6, 10, 11, 14, 15, 21})
LEXFILE_GROUP = 14
LEXFILE_EVENT = 11
LEXFILE_LOCATION = 15


@functools.lru_cache(maxsize=4096)
def noun_lexfiles(word: str) -> tuple[int, ...]:
    """The lexicographer files of all noun senses of ``word`` (or its regular singular), most frequent first;
    WordNet files the famous bearers of a surname as persons ("Gates", "Brooks", "Hall": noun.person)."""
    return tuple(int(_synset(o)[1]) for o in _offsets(word))


def names_a_thing(word: str) -> bool:
    """Some noun sense of ``word`` is a thing of ``LEXFILES_THING`` and none is a person: "Trophy", "Song",
    "Avenue"; not "Gates", "Brooks", "Hall" (WordNet files famous bearers of those surnames as persons)."""
    files = noun_lexfiles(word)
    return bool(set(files) & LEXFILES_THING) and LEXFILE_PERSON not in files


LEXFILE_POSSESSION = 21  # noun.possession: allowances, pensions, prizes, taxes
# Lexicographer files of nouns a name is built on when its last word is one: an act, an event, a group, a period or
# a possession ("Hugo Award", "Baseball League", "Young Communist Union", "Fringe Festival", "Cold War", "Widow's
# Bereavement Allowance")
LEXFILES_NAMED_KIND = frozenset({4, 11, 14, 28, LEXFILE_POSSESSION})


@functools.lru_cache(maxsize=4096)
def names_its_kind(word: str, lexfiles: frozenset[int] = LEXFILES_NAMED_KIND) -> bool:
    """The most frequent noun sense of ``word`` (or its regular singular) is an act, an event, a group, a period or
    a possession (``lexfiles``), not an instance: a capitalized last word of that sort tells what the named thing is
    ("the Hugo Award", "the Mediterranean Games"); any other is a word of a title ("Total Recall", "Melrose Place",
    "Buffalo Bills", "Youth Player")."""
    data = _first_sense(word)
    return data is not None and int(data[1]) in lexfiles and not _is_instance(data)


def _pointers(data: list[str]) -> list[tuple[str, int]]:
    """(pointer symbol, target offset) of a ``data.noun`` line's pointers to nouns."""
    at = 4 + 2 * int(data[3], 16)
    return [(data[at + 1 + 4 * i], int(data[at + 2 + 4 * i])) for i in range(int(data[at]))
            if data[at + 3 + 4 * i] == "n"]


def _lemmas(data: list[str]) -> list[str]:
    return [re.sub(r"\(.*\)$", "", data[4 + 2 * i]).replace("_", " ") for i in range(int(data[3], 16))]


@functools.lru_cache(maxsize=1)
def _named_instances() -> tuple[list[str], ...]:
    """The ``data.noun`` lines (split) of WordNet's named places: instances in noun.location or noun.object."""
    root = wordnet_dir()
    if root is None:
        return ()
    with open(root / "data.noun", encoding="latin-1") as handle:
        lines = (line.split() for line in handle if not line.startswith("  "))
        return tuple(data for data in lines
                     if int(data[1]) in (LEXFILE_LOCATION, LEXFILE_OBJECT) and _is_instance(data))


@functools.lru_cache(maxsize=1)
def named_places() -> tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]:
    """Every named place of WordNet (an instance in noun.location or noun.object) as (its lemmas, the lemmas of its
    parts, the lemmas of what it is part of): ("Middle East", "Mideast", "Near East"), ("Israel", "Egypt", ...)."""
    out = []
    for data in _named_instances():
        pointers = _pointers(data)
        parts = [lemma for p, o in pointers if p == "%p" for lemma in _lemmas(_synset(o))[:1]]
        wholes = [lemma for p, o in pointers if p == "#p" for lemma in _lemmas(_synset(o))[:1]]
        out.append((tuple(_lemmas(data)), tuple(parts), tuple(wholes)))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def named_countries() -> tuple[tuple[str, ...], ...]:
    """The lemmas of every WordNet country: an instance of a class of countries, nations or kingdoms ("North
    American country", "European nation", "kingdom"): ("United States", "United States of America", "America", "the
    States", "US", ...), ("Iran", "Islamic Republic of Iran", "Persia"), ("United Kingdom", ..., "Britain"). A state
    of a country is no instance of such a class."""
    return tuple(tuple(_lemmas(data)) for data in _named_instances() if int(data[1]) == LEXFILE_LOCATION
                 and any(_lemmas(_synset(o))[0].endswith(("country", "nation", "kingdom"))
                         for p, o in _pointers(data) if p == "@i"))


@functools.lru_cache(maxsize=1)
def country_adjectives() -> dict[str, str]:
    """Nationality adjectives by WordNet's pertainym pointer to a country (``named_countries``): {"Argentine":
    "Argentina", "Argentinian": "Argentina", "Saudi": "Saudi Arabia", "Slovenian": "Slovenia", ...}. Capitalized
    lemmas only ("of or relating to Argentina or its people")."""
    root = wordnet_dir()
    if root is None:
        return {}
    countries = {int(data[0]): _lemmas(data)[0] for data in _named_instances()
                 if tuple(_lemmas(data)) in set(named_countries())}
    out: dict[str, str] = {}
    with open(root / "data.adj", encoding="latin-1") as handle:
        for data in (line.split() for line in handle if not line.startswith("  ")):
            for country in (countries[o] for p, o in _pointers(data) if p == "\\" and o in countries):
                for lemma in _lemmas(data):
                    if lemma[:1].isupper():
                        out.setdefault(lemma, country)
    return out


LEXFILE_OBJECT = 17  # noun.object: continents, rivers, islands
LEXFILE_COMMUNICATION = 10  # noun.communication: languages are filed there
LEXFILE_TIME = 28  # noun.time


@functools.lru_cache(maxsize=1024)
def names_a_calendar_day(surface: str) -> bool:
    """``surface`` (two words at most, capitalized, no digit) is WordNet's name of a recurring day or season of the
    calendar, a class and not one dated instance: "New Year", "Christmas", "Labor Day", "Ramadan" (noun.time);
    not "World War II" (an instance) nor a month ("March": a date's part, which the date rules read)."""
    words = surface.split()
    if not 0 < len(words) <= 2 or not surface[:1].isupper() or any(c.isdigit() for c in surface):
        return False
    offsets = _noun_senses().get("_".join(words).lower())
    if not offsets:
        return False
    data = _synset(offsets[0])
    return int(data[1]) == LEXFILE_TIME and not _is_instance(data) and not _MONTH.fullmatch(surface)


_MONTH = re.compile("|".join(calendar.month_name[1:]), re.I)


def starts_a_term(text: str, end: int) -> bool:
    """The word ending at ``end`` and the one or two lower-case words after it are a WordNet noun that is no language
    ("American football", "Turkish bath", "Swiss cheese"; not "German language"): a term of the language, which the
    word's other sense (a nationality) is not part of."""
    head = re.search(r"([^\W\d_]+)$", text[max(0, end - 40):end])
    after = re.match(r"(?:\s+([a-z]+))(?:\s+([a-z]+))?", text[end:end + 40])
    if not head or not after:
        return False
    senses = _noun_senses()
    for n in (2, 1):
        words = [w for w in after.groups()[:n] if w]
        if len(words) < n:
            continue
        offsets = senses.get("_".join([head.group(1).lower(), *words]))
        if offsets:
            return int(_synset(offsets[0])[1]) != LEXFILE_COMMUNICATION
    return False


@functools.lru_cache(maxsize=4096)
def is_abbreviation(word: str) -> bool:
    """WordNet writes ``word``'s most frequent noun sense in capitals ("EBITDA", "AIDS", "HIV"): the letters are
    that abbreviation, not a common word read aloud in capitals ("PIP" is no "pip", the poultry disease)."""
    data = _first_sense(word)
    if data is None:
        return False
    lemmas = [re.sub(r"\(.*\)$", "", data[4 + 2 * i]) for i in range(int(data[3], 16))]
    return any(lemma.lower() == word.lower() and lemma.isupper() for lemma in lemmas)


@functools.lru_cache(maxsize=4096)
def is_term_abbreviation(word: str) -> bool:
    """``word`` is an abbreviation WordNet spells in capitals (``is_abbreviation``) for a general notion, not for
    one named thing nor for a body or a kind of person: "IT", "RV", "IPO", "EBITDA", "TNF", "HIV" (noun.cognition,
    artifact, act, possession, substance, state ...), not "NASDAQ" (an instance), "RAF" or "FDA" (noun.group),
    "CEO" (noun.person)."""
    if not is_abbreviation(word):
        return False
    data = _first_sense(word)
    return not _is_instance(data) and int(data[1]) not in (LEXFILE_GROUP, LEXFILE_PERSON, LEXFILE_LOCATION)


def _offsets(word: str) -> tuple[int, ...]:
    """The ``data.noun`` offsets of the noun senses of ``word`` (any case) or of its regular singular."""
    senses = _noun_senses()
    w = word.strip().lower()
    for lemma in (w, *(w[: len(w) - len(suf)] + rep for suf, rep in _INFLECTIONS if w.endswith(suf))):
        offsets = senses.get(lemma)
        if offsets:
            return offsets
    return ()


def _first_sense(word: str) -> list[str] | None:
    offsets = _offsets(word)
    return _synset(offsets[0]) if offsets else None


def _is_instance(data: list[str]) -> bool:
    """The synset is an instance of its hypernym (one named thing: "Warsaw", "World War II"), not a class."""
    pointers_at = 4 + 2 * int(data[3], 16)
    return any(data[pointers_at + 1 + 4 * i] == "@i" for i in range(int(data[pointers_at])))

@functools.lru_cache(maxsize=4096)
def hypernym(noun: str, lexfile: int | None = None) -> str | None:
    """The first lemma of the hypernym of ``noun``'s most frequent sense ("teacher" → "educator", "manager"
    → "administrator"), from ``index.noun`` and ``data.noun``; with ``lexfile`` the most frequent sense in that
    lexicographer file (``LEXFILE_PERSON``: "founder" → "originator", not the horse disease). None when WordNet
    or the word is missing."""
    senses = _noun_senses()
    lemma = noun.strip().lower().replace(" ", "_").replace("‑", "-")
    offsets = senses.get(lemma)
    if offsets is None and lemma.endswith("s"):
        offsets = senses.get(lemma[:-1])
    data = None
    for offset in offsets or ():
        data = _synset(offset)
        if lexfile is None or int(data[1]) == lexfile and not _is_instance(data):
            break  # with a lexfile a kind is asked for: not a famous bearer of the word ("forester": C. S. Forester)
    else:
        return None
    if data is None:
        return None
    pointers_at = 4 + 2 * int(data[3], 16)
    for i in range(int(data[pointers_at])):
        if data[pointers_at + 1 + 4 * i] in ("@", "@i"):
            target = _synset(int(data[pointers_at + 2 + 4 * i]))
            return re.sub(r"\(.*\)$", "", target[4]).replace("_", " ")
    return None
