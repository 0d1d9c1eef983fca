"""Pattern recognizers: regex candidates, then validation (parse, checksum, context).

Each recognizer is a ``Recognizer`` (base.py) and every hit carries a trace: recognizer name, rule
name, score and the context words that raised or confirmed it.

| recognizer | TAB type / subtype | validation |
| --- | --- | --- |
| email | CODE / EMAIL | RFC-ish local part, dotted domain with an alphabetic TLD |
| url | CODE / URL | scheme or ``www.``, trailing punctuation trimmed |
| phone | CODE / PHONE | parsed with ``phonenumbers`` (libphonenumber): valid for a region or in E.164 |
| iban | CODE / IBAN | country length table + ISO 13616 mod-97 check |
| card | CODE / CARD | 13–19 digits, Luhn checksum, known issuer prefix |
| ip | CODE / IP | ``ipaddress`` parses it (IPv4 / IPv6) |
| case_number | CODE / CASE | ``36110/97``-style numbers (each of a list), reference codes with digits, law-report citations, numbered plots and parcels, vehicle registration marks; context words raise the score |
| datetime | DATETIME / DATE, TIME, DURATION | calendar checks (month names, day ≤ 31, plausible years) |
| money | QUANTITY / MONEY | amount + currency code, symbol or currency word |
| quantity | QUANTITY / QUANTITY, PERCENT | amount + unit |
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any

from .base import Detection, Recognizer

try:  # libphonenumber port (Apache-2.0); without it phones fall back to digit-count heuristics
    import phonenumbers
except ImportError:  # pragma: no cover - depends on the environment
    phonenumbers = None


# Some patterns begin with their first character class and check the character before it right after
# (``\d(?<![\d.]\d)`` rather than ``(?<![\d.])\d``): a pattern that begins with a character class lets the
# regex engine skip straight to the candidate characters instead of trying every position (3x faster scans).
# Others begin with a lookahead on the characters a match can start with (``(?=[JFMASOND])`` before a month
# name): the other positions then fail on one test instead of on each alternative.


def _window(text: str, start: int, end: int, before: int = 40, after: int = 0) -> str:
    return text[max(0, start - before) : end + after].lower()


def _context_hits(text: str, start: int, words: tuple[str, ...], before: int = 40, end: int | None = None,
                  after: int = 0) -> list[str]:
    win = _window(text, start, end if end is not None else start, before, after)
    return [w for w in words if re.search(r"(?<![a-z])" + re.escape(w) + r"(?![a-z])", win)]


# The forms of a fiscal period in business text (pii/kinds.py: kind ``period``; the case-number recognizer: a
# date, not a code).
_FISCAL_PERIOD = re.compile(r"(?:Q[1-4]|[1-4]Q|H[12]|[12]H|FY|F[1-4]Q)\s*'?(?:\d{2}|\d{4})?"
                            r"|(?:(?:the\s+)?(?:first|second|third|fourth|1st|2nd|3rd|4th|final|last|fiscal|"
                            r"current|next|prior|same)\s+)?(?:fiscal\s+)?(?:quarter|half|fiscal\s+year|fiscal\s+\d{4})"
                            r"(?:\s+(?:of\s+)?(?:fiscal\s+)?'?\d{2,4})?|(?:fiscal|FY)\s*'?\d{2,4}", re.I)
# Words that join the items of a list or a range of periods ("Q1 and Q2", "Q3, Q4", "Q2 to Q4").
_PERIOD_JOIN = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or|to|through)\s|&|/|-|–)\s*", re.I)


def is_fiscal_period(surface: str) -> bool:
    """A fiscal period in a report's forms, or a list or range of them ("Q4", "the second quarter of 2016",
    "Q1 and Q2", "Q2 to Q4"): a period, whatever digit it carries."""
    name = " ".join(surface.split())
    if _FISCAL_PERIOD.fullmatch(name):
        return True
    parts = [p for p in _PERIOD_JOIN.split(name) if p]
    return len(parts) > 1 and all(_FISCAL_PERIOD.fullmatch(p) for p in parts)


class RegexRecognizer(Recognizer):
    """Named patterns for one TAB type; ``validate`` may reject a match or return (score factor, context)."""

    name = "regex"
    entity_type = "CODE"
    subtype = ""
    patterns: tuple[tuple[str, re.Pattern[str], float], ...] = ()

    def validate(self, text: str, match: re.Match[str], rule: str) -> float | tuple[float, list[str]] | None:
        return 1.0

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        return match.span()

    def subtype_for(self, rule: str, match: re.Match[str]) -> str:
        return self.subtype

    def absent(self, rule: str, text: str) -> bool:
        """True when ``rule`` cannot match in ``text`` (a cheap test of something every match contains), so its
        scan is skipped; False when it might."""
        return False

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out: list[Detection] = []
        for rule, pattern, base in self.patterns:
            if self.absent(rule, text):
                continue
            for m in pattern.finditer(text):
                verdict = self.validate(text, m, rule)
                if verdict is None:
                    continue
                factor, context = verdict if isinstance(verdict, tuple) else (verdict, [])
                s, e = self.span(m)
                if e <= s:
                    continue
                out.append(
                    Detection(s, e, self.entity_type, round(min(1.0, base * factor), 3), self.name, rule,
                              context=list(context), subtype=self.subtype_for(rule, m) or None)
                )
        return out


# ---------------------------------------------------------------------------------------------
# Contact data and financial identifiers
# ---------------------------------------------------------------------------------------------
class EmailRecognizer(RegexRecognizer):
    name = "email"
    subtype = "EMAIL"
    patterns = (
        ("email", re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,24}\b"), 1.0),
    )

    def absent(self, rule, text):
        return "@" not in text

    def validate(self, text, match, rule):
        local = match.group(0).split("@", 1)[0]
        if ".." in local or local.endswith("."):
            return None
        return 1.0


_URL_TLDS = (".com/", ".org/", ".net/", ".edu/", ".gov/", ".io/", ".eu/", ".info/")


class UrlRecognizer(RegexRecognizer):
    name = "url"
    subtype = "URL"
    patterns = (
        ("url_scheme", re.compile(r"\b(?:https?|ftp)://[^\s<>\"'“”]+", re.I), 1.0),
        ("url_www", re.compile(r"\bwww\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/[^\s<>\"'“”]*)?", re.I), 0.95),
        ("url_domain_path", re.compile(r"(?<![/\w.@-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|edu|gov|io|eu|info)/[^\s<>\"'“”]*", re.I), 0.85),
    )

    def absent(self, rule, text):
        if rule == "url_scheme":
            return "://" not in text
        if "/" not in text and rule == "url_domain_path" or "." not in text:
            return True
        if rule == "url_domain_path" and ("ı" in text or "İ" in text):
            return False  # case-insensitive "i" also matches these; str.lower does not map them to "i"
        low = text.lower()
        if rule == "url_www":
            return "www." not in low
        return not any(t in low for t in _URL_TLDS)

    def span(self, match):
        s, e = match.span()
        text = match.string
        while e > s and text[e - 1] in ".,;:!?)]}'\"’”":
            if text[e - 1] == ")" and text[s:e].count("(") >= text[s:e].count(")"):
                break
            e -= 1
        return s, e


_PHONE = re.compile(r"(?<![\w/+.-])(?:\+|00)?\(?\d[\d\s().-]{5,20}\d(?![\w/-])")
_PHONE_DIGITS = re.compile(r"\d[\d\s().-]{5,20}\d")  # in every phone match: its scan is skipped when the text has none
PHONE_CONTEXT = ("phone", "telephone", "tel", "mobile", "cell", "fax", "call", "called", "number", "hotline", "gsm")


class PhoneRecognizer(RegexRecognizer):
    """Phone numbers: loose candidates, then *parsed*: with ``phonenumbers`` a candidate must be a valid
    number in E.164 form (``+``/``00``) or for one of ``regions``; national-form numbers also need a
    phone context word nearby. Dates, case numbers and plain amounts never parse as valid numbers."""

    name = "phone"
    subtype = "PHONE"
    patterns = (("phone", _PHONE, 1.0),)

    def __init__(self, regions: tuple[str, ...] = ("US", "GB", "DE", "FR", "DK", "PL", "TR", "NO", "SE", "IT", "ES", "NL")):
        self.regions = regions

    def absent(self, rule, text):
        return _PHONE_DIGITS.search(text) is None

    def validate(self, text, match, rule):
        raw = match.group(0).strip()
        digits = re.sub(r"\D", "", raw)
        if not 7 <= len(digits) <= 15:
            return None
        if re.fullmatch(r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}", raw) or re.fullmatch(r"[\d\s]+", raw) and " " not in raw and len(digits) <= 8:
            return None  # dates and bare short numbers
        if re.fullmatch(r"\d{1,3}(?:[,.]\d{3})+(?:[,.]\d+)?", raw):
            return None  # amounts
        context = _context_hits(text, match.start(), PHONE_CONTEXT, before=40)
        international = raw.startswith("+") or raw.startswith("00")
        if phonenumbers is not None:
            candidates = [None] if international else list(self.regions)
            for region in candidates:
                try:
                    num = phonenumbers.parse(raw, region)
                except phonenumbers.NumberParseException:
                    continue
                if phonenumbers.is_valid_number(num):
                    if international:
                        return 1.0, context
                    if context:
                        return 0.95, context
                    return (0.6, []) if re.search(r"[\s().-]", raw) and len(digits) >= 9 else None
            return None
        if international or context:
            return 0.85, context
        return None


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19,
    "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}


def iban_valid(raw: str) -> bool:
    """ISO 13616: length per country, then mod-97 of the rearranged number equals 1."""
    s = re.sub(r"[\s-]", "", raw).upper()
    if len(s) < 15 or _IBAN_LENGTHS.get(s[:2]) != len(s) or not s.isalnum():
        return False
    rearranged = s[4:] + s[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


class IbanRecognizer(RegexRecognizer):
    name = "iban"
    subtype = "IBAN"
    patterns = (
        ("iban", re.compile(r"[A-Z](?<!\w[A-Z])[A-Z]\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,4})?\b"), 1.0),
    )

    def validate(self, text, match, rule):
        return 1.0 if iban_valid(match.group(0)) else None


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9]|22)|35|62|50|5[6-9]|6[0-9])")


class CardRecognizer(RegexRecognizer):
    name = "card"
    subtype = "CARD"
    patterns = (("card", re.compile(r"\d(?<![\d-]\d)[ -]?(?:\d[ -]?){11,17}\d(?![\d-])"), 1.0),)

    def validate(self, text, match, rule):
        digits = re.sub(r"\D", "", match.group(0))
        if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
            return None
        if not _CARD_PREFIX.match(digits) or not luhn_valid(digits):
            return None
        return 1.0, _context_hits(text, match.start(), ("card", "visa", "mastercard", "credit", "debit", "amex"))


class IpRecognizer(RegexRecognizer):
    name = "ip"
    subtype = "IP"
    patterns = (
        ("ipv4", re.compile(r"\d(?<![\d.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?![\d.]|\.\d)"), 1.0),
        ("ipv6", re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}(?::|[0-9A-Fa-f]{1,4})(?:[0-9A-Fa-f:]*)(?![\w:])"), 1.0),
    )

    def absent(self, rule, text):
        return rule == "ipv6" and text.count(":") < 2

    def validate(self, text, match, rule):
        try:
            addr = ipaddress.ip_address(match.group(0))
        except ValueError:
            return None
        if rule == "ipv6" and match.group(0).count(":") < 2:
            return None
        return (1.0 if not addr.is_unspecified else 0.7), []


# ---------------------------------------------------------------------------------------------
# Case / application numbers and other codes
# ---------------------------------------------------------------------------------------------
CODE_CONTEXT = ("application", "applications", "no.", "nos.", "no", "number", "case", "file", "reference", "ref.",
                "registration", "register", "passport", "licence", "license", "plate", "id", "account", "docket")
_CASE = re.compile(r"\d(?<![\w/.-]\d)\d{0,5}/\d{2,4}(?:/\d{1,4})?(?![\w/]|\.\d)")
_REF = re.compile(
    r"(?<![\w/.-])(?:[A-Z]{1,5}[ -]?\d[\w./-]*\d|\d+[A-Z]{1,3}\d[\w./-]*|\d{1,4}(?:[./]\d{1,4}){2,}[A-Z]?\d*|[A-Z]+\d+[A-Z]+\w*)(?![\w/-])"
)
_NO_NUMBER = re.compile(r"(?:\b(?P<noun>[a-z]{3,})\s+)?\b(?:[Nn]o|[Nn]os|[Nn]r)\.?\s+(\d[\w./-]*)")
# what every no_number match contains: its scan is skipped when the text has none
_NO_NUMBER_CORE = re.compile(r"[Nn](?:os?|r)\.?\s+\d")
# and every reference_code match: a capital then a digit ("D-4840", "LH3042"), a digit then a capital ("4B1") or a
# dotted number ("11/14.2"); written to begin with its first character class (the engine skips to candidates)
_REF_CORE = re.compile(r"[A-Z\d](?:(?<=[A-Z])[ -]?\d|(?<=\d)(?:[A-Z]|[./]\d))")
# Law-report citations, which the annotators mark CODE: "[2000] AC 326", "[2001] 2 WLR 817", "(1976) 1 EHRR 737",
# "[2003] EWCA Civ 1234" (a bracketed year, an optional volume, a capitalised reporter of up to three words, a
# page: the span leaves the bracketed year to the dates), and Nordic reports cited by year and page: "NJA 2005 p.
# 884", "RÅ 1997 ref. 5" (an all-capital reporter).
_LAW_REPORT = re.compile(
    r"(?<!\w)(?:[\[(](?:1[89]|20)\d\d[\])]\s+(?P<report>(?:\d{1,3}\s+)?(?!(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b)[A-Z][A-Za-z]{0,5}\.?(?:\s[A-Z][A-Za-z]{0,5}\.?){0,2})"
    r"|[A-ZÅÄÖÆØ]{2,5}\s+(?:1[89]|20)\d\d\s+(?:p\.|s\.|ref\.|nr\.?))\s*(?P<page>\d{1,5})(?![\w/])")
# what every law_report match contains: a year in brackets, or a year then a page word
_LAW_REPORT_CORE = re.compile(r"[\[(](?:1[89]|20)\d\d[\])]|(?:1[89]|20)\d\d\s+(?:p|s|ref|nr)\.")
# the items after the first of a list introduced by "nos." ("plots nos. 260, 268, 119/5 and 425", "nos. 123/02;
# 456/03 & 789/04", line breaks inside the parentheses of a list of thirty): each is a code of its own (the first
# is the no_number rule's); after a singular "no." only application-number items ("no. 12/05 and 3/06")
_NO_WORD_AT_END = re.compile(r"\s*\b[Nn](?:os?|r)\.?\s*$")
_LIST_GAP = r"(?:\s*[,;]\s*(?:and\s+)?|\s+(?:and|&)\s+)"
_NOS_LIST = re.compile(r"(?:\b(?P<noun>[A-Za-z]{3,})\s+)?\b[Nn][or](?P<plural>s)?\.?\s+\d(?:[\w/-]|\.(?=\d))*"
                       rf"(?P<rest>(?:{_LIST_GAP}\d(?:[\w/-]|\.(?=\d))*)+)")
_LIST_ITEM = re.compile(r"\d(?:[\w/-]|\.(?=\d))*")
_APPLICATION_NO = re.compile(r"\d{1,6}/\d{2,4}")
# Numbered land (TAB guidelines: codes that identify something; the train gold marks "plots nos. 260, 268"):
# "plot 17", "plots 17 and 18", "cadastral parcel 245", "land plot no. 1234/5", "plot number 134". The first
# span keeps the noun, like the no_number rule's "plot no. 1234/5"; the further items are codes of their own.
_LAND = re.compile(r"\b(?P<noun>(?:(?:[Cc]adastral|[Ll]and|[Bb]uilding)\s+)?(?:[Pp]lots?|[Pp]arcels?))"
                   r"\s+(?:(?:numbers?|nos?\.?|nr\.?)\s+)?(?P<first>\d(?:[\w/-]|\.(?=\d))*)"
                   rf"(?P<rest>(?:{_LIST_GAP}\d(?:[\w/-]|\.(?=\d))*)*)(?![\w%])")
# Vehicle registration marks after the words that introduce them ("registration number ABC 123", "registration
# plate 34 AB 123", "licence plate B-XY 123", "registration mark EYX 622", "T61 TBX"): capitals and digits in up
# to four groups, at least one digit.
_PLATE = re.compile(
    r"\b(?i:registration\s+(?:numbers?|nos?\.|marks?|plates?)|(?:licen[cs]e|number|registration)\s+plates?"
    r"|plates?\s+(?:numbers?|nos?\.))\s+(?P<code>[A-Z0-9]{1,4}(?:[ -][A-Z0-9]{1,4}){0,3})(?![\w-])")
_LAND_OR_PLATE_CORE = re.compile(r"(?i:plot|parcel|plate|registration)")
_NO_NOUN_KEEP = frozenset(("plot", "plots", "parcel", "parcels", "flat", "apartment", "room", "cell", "house", "lot",
                           "block", "sheet", "file", "register", "entry", "account", "licence", "license", "passport",
                           "vehicle", "plate", "card", "ticket", "certificate", "permit", "box"))
_LEGAL_BEFORE = re.compile(
    r"(?=[acdloprs§])(?:article|articles|art\.|section|sections|rule|rules|§|protocol|protocols|series\s+[ab]|paragraph|paragraphs|para\.|chapter|law|act|"
    r"regulation|decree|ordinance|directive|resolution|page|pages|pp?\.)\s*$", re.I)


class CaseNumberRecognizer(RegexRecognizer):
    """Application and case numbers (``36110/97``, ``2006/2199``; every item of a list after "nos."), reference
    codes with digits (``D-4840``, ``LH3042``, ``11/14E.2``), numbers introduced by "no." outside legal references,
    law-report citations (``[2000] AC 326``, ``NJA 2005 p. 884``), numbered plots and parcels (``plot 17``) and
    vehicle registration marks (``registration number ABC 123``)."""

    name = "case_number"
    subtype = "CASE"
    patterns = (("case_number", _CASE, 0.9), ("reference_code", _REF, 0.7), ("no_number", _NO_NUMBER, 0.75),
                ("law_report", _LAW_REPORT, 0.9))

    def absent(self, rule, text):
        if rule == "reference_code":
            return _REF_CORE.search(text) is None
        if rule == "law_report":
            return _LAW_REPORT_CORE.search(text) is None
        return rule == "no_number" and _NO_NUMBER_CORE.search(text) is None

    def analyze(self, text, doc=None):
        out = [self._as_period(d, text)
               if d.rule == "reference_code" and is_fiscal_period(text[d.start:d.end].rstrip(".")) else d
               for d in super().analyze(text, doc)]
        if _NO_NUMBER_CORE.search(text) is not None:
            for m in _NOS_LIST.finditer(text):
                noun = (m.group("noun") or "").lower()
                if _LEGAL_BEFORE.search(noun) or noun.endswith("s") and _LEGAL_BEFORE.search(noun[:-1]):
                    continue  # "Protocols Nos. 1 and 11", "Articles nos. 5 and 6"
                items = [(m.start("rest") + i.start(), m.start("rest") + i.end())
                         for i in _LIST_ITEM.finditer(m.group("rest"))]
                if not m.group("plural") and not all(_APPLICATION_NO.fullmatch(text, s, e) for s, e in items):
                    continue  # after a singular "no." only a list of application numbers
                out += [self._item(s, e, "no_list", "nos.") for s, e in items]
        if _LAND_OR_PLATE_CORE.search(text) is None:
            return out
        for m in _LAND.finditer(text):
            out.append(self._item(m.start("noun"), m.end("first"), "land", m.group("noun").split()[-1].lower()))
            out += [self._item(m.start("rest") + i.start(), m.start("rest") + i.end(), "land_list", "plots")
                    for i in _LIST_ITEM.finditer(m.group("rest"))]
        for m in _PLATE.finditer(text):
            if any(ch.isdigit() for ch in m.group("code")):  # the registration mark replaces a weaker reference_code
                out = [d for d in out if (d.start, d.end) != m.span("code")]
                out.append(self._item(m.start("code"), m.end("code"), "plate", "registration"))
        return out

    @staticmethod
    def _as_period(d: Detection, text: str) -> Detection:
        """A fiscal period written like a code ("FY17", "2H16") is a date, not a reference."""
        end = d.start + len(text[d.start:d.end].rstrip("."))
        return Detection(d.start, end, "DATETIME", d.score, d.recognizer, "fiscal_period", subtype="DATE")

    def _item(self, start: int, end: int, rule: str, context: str) -> Detection:
        return Detection(start, end, self.entity_type, 0.9, self.name, rule, context=[context], subtype=self.subtype)

    def span(self, match):
        if match.re is _LAW_REPORT and match.group("report"):
            return match.start("report"), match.end()
        if match.re is _NO_NUMBER:
            noun = match.group("noun")
            if noun and noun in _NO_NOUN_KEEP:
                return match.start("noun"), match.end(2)
            return match.span(2)
        return match.span()

    def validate(self, text, match, rule):
        s = match.start(2) if rule == "no_number" else match.start()
        raw = match.group(2) if rule == "no_number" else match.group(0)
        before = text[max(0, s - 30) : s]
        context = _context_hits(text, s, CODE_CONTEXT, before=30)
        if rule == "law_report":
            return 1.0, []
        if rule == "case_number":
            a, b = raw.split("/")[:2]
            if len(raw.split("/")) == 2 and len(a) <= 2 and len(b) <= 2:
                return None  # "12/05", "80/20", "24/7": a date, a ratio or a fraction (no CODE of the TAB or biography
                #              gold is two numbers of at most two digits)
            if re.fullmatch(r"\d{1,2}/\d{1,2}/\d{2,4}", raw):
                return None  # a date
            if _LEGAL_BEFORE.search(before):
                return None
            return (1.0 if context else 0.9), context
        if rule == "no_number":
            if _LEGAL_BEFORE.search(_NO_WORD_AT_END.sub("", text[max(0, s - 40) : s])):
                return None
            if re.fullmatch(r"\d{1,2}", raw) and not context:
                return None
            return 0.9, context or ["no."]
        # reference codes: need a digit and not look like an ordinal, unit, legal cite or a year range
        if not re.search(r"\d", raw) or re.fullmatch(r"\d+(?:st|nd|rd|th|s|cm|mm|km|kg|m|g|h|am|pm)", raw, re.I):
            return None
        if re.fullmatch(r"\d{1,2}([./-])\d{1,2}\1\d{2,4}", raw) or re.fullmatch(r"(?:1[89]|20)\d{2}[-/](?:1[89]|20)?\d{2}", raw):
            return None  # dates and year ranges
        if _CURRENCY_AMOUNT.fullmatch(raw):
            return None  # "DKK 2,200" is money ("EYX 622", a registration mark, is not)
        if _LEGAL_BEFORE.search(before):
            return None
        return (1.0 if context else 0.8), context


# ---------------------------------------------------------------------------------------------
# Dates, times and durations
# ---------------------------------------------------------------------------------------------
MONTH_NAMES = "January|February|March|April|May|June|July|August|September|October|November|December"
# "from" right before two figures joined by "to": where a figure moved from and to ("rose from 1% to 5%"), two
# figures, unless a range is said ("ranging from 1% to 5%")
MOVED_FROM_BEFORE = re.compile(r"(?<!\brange )(?<!\branges )(?<!\branged )(?<!\branging )\bfrom\s+$", re.I)
_MONTHS = rf"(?:{MONTH_NAMES}|Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?)"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_NUMWORD = (r"(?:(?=[otfsenham])(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
            r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|a|an|several|"
            r"a few|few|some|many))")
_NUM = rf"(?:\d+(?:[.,]\d+)?|{_NUMWORD}(?:[- ]{_NUMWORD})*)"
_UNIT_T = r"(?:years?|months?|weeks?|days?|hours?|minutes?|seconds?|decades?|centuries|century)"
_DAYLIST = rf"{_DAY}(?:\s*(?:,|and|&|to|until|-|–)\s*{_DAY})*"

DATE_PATTERNS = (
    ("date_dmy", re.compile(rf"(?=[0-9])\b{_DAYLIST}\s+{_MONTHS}(?:,?\s+{_YEAR})?(?![\w])"), 1.0),
    ("date_mdy", re.compile(rf"(?=[JFMASOND])\b{_MONTHS}\s+{_DAY}(?:\s*(?:,|and|-|–)\s*{_DAY})*(?:,?\s+{_YEAR})?(?![\w])"), 0.9),
    ("date_my", re.compile(rf"(?=[JFMASONDemlbt])\b(?:(?:early|mid|late|end of|beginning of|the end of|the beginning of)[- ])?{_MONTHS}(?:\s+(?:of\s+)?{_YEAR})(?![\w])"), 1.0),
    ("date_numeric", re.compile(r"(?<![\w/.])(?:[0-3]?\d[./-][01]?\d[./-](?:1[5-9]\d\d|20\d\d|\d\d)|(?:1[5-9]\d\d|20\d\d)-[01]\d-[0-3]\d)(?![\w/]|\.\d)"), 0.95),
    ("season", re.compile(rf"\b(?=[elmsafw])(?:(?:early|late|mid)[- ])?(?:spring|summer|autumn|fall|winter)(?:\s+and\s+(?:spring|summer|autumn|fall|winter))?\s+(?:of\s+)?{_YEAR}\b", re.I), 1.0),
    ("decade", re.compile(r"\b(?:(?:early|mid|late)[- ])?(?:1[5-9]|20)\d0s\b"), 0.95),
    ("year", re.compile(rf"[12](?<![\w/.,§-][12])(?:(?<=1)[5-9]|(?<=2)0)\d\d(?:\s*(?:-|–|/|to)\s*{_YEAR})?(?![\w/]|[.,]\d)"), 0.85),
    ("time", re.compile(r"\b(?:[01]?\d|2[0-3])[:.][0-5]\d(?:\s?(?:a\.m\.|p\.m\.|am|pm|AM|PM|hrs|h)|(?=\s?(?:o'clock)))|\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\b(?:1[0-2]|0?[1-9])\s?(?:a\.m\.|p\.m\.)"), 0.95),
    ("duration", re.compile(
        rf"\b(?=[\dotfsenham]){_NUM}(?:\s+and\s+a\s+half)?[- ]{_UNIT_T}(?:(?:,\s*|\s+and\s+){_NUM}(?:[- ]{_UNIT_T}))*(?:\s+and\s+a\s+half)?(?![\w])", re.I), 0.8),
)
_YEAR_LEGAL = re.compile(r"(?=[acdlnprst§])(?:(?:\b(?:Act|Law|Code|Convention|Protocol|Regulation|Decree|Rules?|Treaty|Constitution|Reports|Series|Directive|Statute)\s*(?:of\s+)?(?:\d+\s+)?$)|(?:§\s*$)|(?:\bno\.?\s*\d+\s*(?:of\s+)?$))", re.I)


# Dates of legal instruments and of the Court's own institutional events are generic references, not facts of
# the case (TAB guidelines, exceptions): "the Law of 17 June 2004", "Law no. 5190 of 16 June 2004", "published
# in the Official Gazette on 30 June 2004", "On 1 November 2001 the Court changed the composition of its
# Sections", "transmitted to the Court on 1 November 1998, when Protocol No. 11 ... came into force", "the 2004
# Act", and numbers NER reads as dates in "Law no. 3713" or "Articles 44 and 48".
# the part of a date before a sub-match of it ("June 2004", "2004" in "17 June 2004")
_PARTIAL_DATE = rf"(?:\d{{1,2}}\s+)?(?:(?:{MONTH_NAMES})\s+)?"
_LEGAL_DATE_BEFORE = re.compile(
    r"(?=[ACDLOPRSacep])(?:(?:(?:\b(?:Act|Law|Code|Decree|Regulation|Ordinance|Statute|Directive|Resolution|Protocol)"
    r"(?:\s+[Nn]o\.?\s*[\w/.-]+)?,?\s+of\s+(?:the\s+)?)"
    r"|(?:\b(?:published|promulgated)\b[^.]{0,40}\bon\s+)"
    r"|(?:\b(?:entered|came|enter|come|entry)\s+into\s+force\s+on\s+))" + _PARTIAL_DATE + "$"
    # a number NER took for a date: "Law no. 3713", "Articles 44 and 48", "art. 44"
    r"|(?:\b(?:Law|Act|Decree|Regulation)\s+[Nn]o\.\s*$)|(?:\b(?:Articles?|art\.)\s+(?:\d+\s+and\s+)?$)"
    # the year in a statute's title: "the Police and Criminal Evidence Act 1984" (had read "Act the 1980s")
    r"|(?:\b(?:Act|Regulations|Order|Rules)\s+$))")
_LEGAL_DATE_AFTER = re.compile(
    r"^:\d"  # a statute's year and number ("SFS 1971:291"), not a date
    r"|^,?\s+(?:the Court changed the composition|when Protocol No\.|(?:Law|Act|Decree)\s+[Nn]o\.)"
    r"|^\s+(?:[A-Z][a-z]+\s+)?(?:Act|Law|Code|Constitution|Decree|Regulations?)\b")  # "the 2004 Act", "the 1997 Lustration Act"


def is_legal_date(text: str, start: int, end: int) -> bool:
    """The date at [start, end) dates a law or one of the Court's own institutional events (see above); used for
    every DATETIME detection, whatever recognizer found it (engine.py)."""
    return bool(_LEGAL_DATE_BEFORE.search(text[max(0, start - 60) : start])
                or _LEGAL_DATE_AFTER.match(text[end : end + 40]))


# A reference to a provision of the Convention, its Protocols or the Rules of Court ("Article 6 § 1 of the
# Convention", "Rule 39", "Protocol No. 11", "Rules of Court", "the Convention and Rule 36"): never an entity
# (TAB train and the dev tuning half annotate none of the 700 such spans the recognizers report as MISC).
_PROVISION = re.compile(r"(?:the\s+)?(?:(?:Articles?|Art\.|Rules?|Protocols?)\s+(?:[Nn]o\.?\s*|[Nn]os\.?\s*)?\d"
                        r"|Protocol\s+[Nn]o\b|Rules\s+of\s+Court\b|Convention\b(?!\s+(?:on|of)\b))")


def is_provision_reference(surface: str) -> bool:
    """A span that begins with a reference to a provision of the Convention, a Protocol or the Rules of Court (a
    MISC span so reported is dropped before vetting, engine.py)."""
    return _PROVISION.match(surface) is not None


# A number that points into a document ("see paragraphs 26-29 below", "§ 3", "page 365", "Slide 28"): what follows
# a document-structure noun is a cross-reference, not a quantity or a date (TAB train 100: 1 annotated mention
# after such a noun, NO_MASK, of the QUANTITY, DATETIME, CODE and MISC mentions of every annotator).
_CROSS_REFERENCE_BEFORE = re.compile(r"(?<![\w-])(?:paragraphs?|§§?|sections?|pages?|pp?\.|chapters?|footnotes?|"
                                     r"annex(?:es)?|appendix|appendices|slides?|exhibits?)\s*$", re.I)


def is_cross_reference(text: str, start: int) -> bool:
    """The number at ``start`` follows a document-structure noun: a cross-reference (see above)."""
    return text[start:start + 1].isdigit() and bool(_CROSS_REFERENCE_BEFORE.search(text[max(0, start - 16):start]))


_CROSS_REFERENCE_NAME = re.compile(r"(?:^|\s)(?:paragraphs?|sections?|pages?|chapters?|footnotes?|annex|appendix|"
                                   r"slides?|exhibits?|items?)\s+\d+[a-z]?$", re.I)


# a number inside a code-like token: a letter right before it ("Q4" read as "Q" and "4") or a hyphen and a capital
# letter right after it ("8-K", "10-Q": the forms a company files)
_LETTER_BEFORE = re.compile(r"[^\W\d_]$")
_FORM_AFTER = re.compile(r"-[A-Z]\b")
_FORM_NAME = re.compile(r"\d+-[A-Z]\w*$")
_LETTERS_AND_NUMBER = re.compile(r"[^\W\d_]{1,3}\d")  # "Q4 results", "H1 sales": a period's code


def is_inside_a_code(text: str, start: int, end: int) -> bool:
    """The number at [start, end) is part of a code-like token ("Q4", "8-K", "Form 10-Q"; a span "Q4 results" the
    tagger called a count), not a quantity."""
    return bool(_LETTER_BEFORE.search(text[max(0, start - 1):start]) or _FORM_AFTER.match(text, end)
                or _FORM_NAME.fullmatch(text[start:end]) or _LETTERS_AND_NUMBER.match(text, start))


# a category label: a common noun and its number or letter ("Phase III", "Class A", "Tier 1", "Form 10-K")
_LABEL = re.compile(r"(?:the\s+)?([A-Z][a-z]+)\s+(?:[IVX]+|\d+[A-Za-z]?|[A-Z]|\d+-[A-Z]\w*)")


def is_category_label(surface: str) -> bool:
    """A common noun followed by a numeral or a letter ("Phase III" of a trial, "Class A" shares, "Tier 1" capital,
    "Form 10-K"): a label of a category everybody uses, not a name (WordNet knows the noun as a common word)."""
    from .wordnet import is_common_word, is_noun

    m = _LABEL.fullmatch(surface.strip())
    return bool(m) and is_common_word(m.group(1)) and is_noun(m.group(1))


_CAPITALIZED_WORDS = re.compile(r"[A-Z][a-z]+(?:[\s-]+[A-Z][a-z]+)*")
_CAPITAL_AFTER = re.compile(r"[ \t]+[A-Z][a-z]")
_SENTENCE_END_BEFORE = re.compile(r"(?:^|[.!?:;\n\"“‘(])\s*$")


def is_inside_a_name(text: str, start: int, end: int) -> bool:
    """A number or a time written in capitalized words inside a run of capitalized words ("One Day International",
    "Formula One Group"): a piece of a name, not a quantity or a date of the text."""
    return bool(_CAPITALIZED_WORDS.fullmatch(text[start:end]) and _CAPITAL_AFTER.match(text, end)
                and not _SENTENCE_END_BEFORE.search(text[max(0, start - 3):start]))


def is_currency_code(surface: str) -> bool:
    """A currency's ISO code alone ("GBP", "EUR"): a unit, which the tagger sometimes types as an organisation."""
    return re.fullmatch(_CUR_CODES, surface.strip()) is not None


def ends_in_cross_reference(surface: str) -> bool:
    """A name that ends with a document-structure noun and its number ("Turning to Slide 5", "Exhibit 99", "Item
    1A" of an annual report): the tagger read a cross-reference as a name."""
    return bool(_CROSS_REFERENCE_NAME.search(surface.strip()))


# What every match of a rule contains (its scan is skipped when the text has none): a time has ":" or "." before
# its minutes or has a.m./p.m.; a numeric date has a separator, a month and a separator.
_TIME_CORE = re.compile(r"[:.][0-5]\d")
_DATE_NUMERIC_CORE = re.compile(r"[./-][01]?\d[./-]")
_THE = re.compile(r"(?:the\s+)", re.I)
# what must not follow a year: "§", "/" ("1998 § 3", "2004/123"), capitals or a currency ("2000 DEM", "1500 €")
_SECTION_OR_SLASH = re.compile(r"\s*[§/]")
_CODE_OR_CURRENCY = re.compile(r"\s?(?:[A-Z]{2,}|€|\$)")
_IN_FORCE = re.compile(r"(?:into force|in force|entry into force)\b[^.]{0,40}$")


class DateTimeRecognizer(RegexRecognizer):
    name = "datetime"
    entity_type = "DATETIME"
    patterns = DATE_PATTERNS

    def absent(self, rule, text):
        if rule == "decade":
            return "0s" not in text
        if rule == "time":
            return "a.m." not in text and "p.m." not in text and _TIME_CORE.search(text) is None
        if rule == "date_numeric":
            return _DATE_NUMERIC_CORE.search(text) is None
        if rule == "season":
            if "ı" in text or "İ" in text or "ſ" in text:
                return False  # case-insensitive "i" and "s" also match these; str.lower does not map them
            low = text.lower()
            return not any(w in low for w in ("spring", "summer", "autumn", "fall", "winter"))
        return False

    def subtype_for(self, rule, match):
        return {"time": "TIME", "duration": "DURATION"}.get(rule, "DATE")

    def span(self, match):
        s, e = match.span()
        text = match.string
        while e > s and text[e - 1] in " ,-–":
            e -= 1
        m = _THE.match(text, s, e)
        if m:
            s = m.end()
        return s, e

    def validate(self, text, match, rule):
        raw = match.group(0)
        before60 = text[max(0, match.start() - 60) : match.start()]
        if "force" in before60 and _IN_FORCE.search(before60):
            return None  # the date a legal instrument entered into force: a generic legal reference
        if is_legal_date(text, match.start(), match.end()):
            return None  # the date of a law, or of the Court's own institutional events
        if rule == "year":
            before = text[max(0, match.start() - 40) : match.start()]
            if _YEAR_LEGAL.search(before):
                return None  # the year a law was passed: a generic legal reference (TAB guidelines, exceptions)
            after = text[match.end() : match.end() + 3]
            if _SECTION_OR_SLASH.match(after) or _CODE_OR_CURRENCY.match(text, match.end(), match.end() + 3):
                return None
            return 1.0
        if rule == "duration":
            word = raw.split()[0].lower()
            if word in ("a", "an", "some", "many", "few", "several") and not re.search(r"\d", raw):
                return 0.8
            return 1.0
        if rule == "date_numeric":
            parts = re.split(r"[./-]", raw)
            if len(parts[0]) == 4:
                y, mo, d = parts
            else:
                d, mo, y = parts
            if not (1 <= int(mo) <= 12 and 1 <= int(d) <= 31):
                return None
            return 1.0
        return 1.0


# ---------------------------------------------------------------------------------------------
# Money and quantities
# ---------------------------------------------------------------------------------------------
_CUR_CODES = (r"(?:EUR|USD|GBP|CHF|DKK|SEK|NOK|ISK|PLN|TRY|TRL|RUB|RUR|UAH|HUF|CZK|SKK|RON|ROL|BGN|HRK|RSD|MKD|ALL|BAM|"
              r"GEL|AMD|AZN|MDL|LTL|LVL|EEK|SIT|CYP|MTL|DEM|DM|FRF|ITL|ESP|PTE|NLG|BEF|ATS|FIM|GRD|IEP|LUF|JPY|CNY|INR|"
              r"CAD|AUD|NZD|BYR|BYN|KZT|UZS)")
_CUR_SYM = r"[€$£¥₺₽₴]"
_CURRENCY_AMOUNT = re.compile(rf"{_CUR_CODES}\s?\d{{1,3}}(?:[.,]\d{{3}})*(?:[.,]\d+)?")
# "pounds sterling" before "pounds": the first alternative that matches is kept ("10,000 pounds sterling (GBP)")
_CUR_WORD = (r"(?:euros?|(?:US |United States |Canadian |Australian )?dollars?|pounds? sterling|pounds?|sterling|"
             r"(?:Swiss |French |Belgian )?francs?|"
             r"(?:(?:Danish|Swedish|Norwegian|Icelandic|Czech|Slovak|Estonian) )?(?:kroner|kronor|krone|krona|koruna|korunas|kroons?)|"
             r"(?:Polish )?(?:zlotys?|zlotych|złoty|złotys|zlotis)|(?:(?:new |old )?Turkish )?(?:liras?|lire)|"
             r"(?:German )?(?:marks?|deutschmarks?|Deutsche Marks?)|(?:Russian )?(?:roubles?|rubles?)|"
             r"(?:Ukrainian )?(?:hryvnas?|hryvnias?|hryvnyas?)|(?:Hungarian )?forints?|(?:Romanian )?(?:lei|leu)|"
             r"(?:Bulgarian )?levs?|(?:Croatian )?kunas?|dinars?|lari|drams?|manats?|lits?|litas|lats|yen|yuan|rupees?)")
_AMOUNT = r"(?:\d{1,3}(?:[,.  ]\d{3,4})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
_MULT = r"(?:\s?(?:million|billion|thousand|trillion|m|bn|k)\b)?"
_AMOUNT_WORDS = rf"(?:{_AMOUNT}{_MULT}|{_NUMWORD}(?:[- ]{_NUMWORD})*(?:\s(?:million|billion|thousand|hundred))+)"
_APPROX = r"(?:(?=[arsonmlu])(?:approximately|about|around|roughly|some|over|almost|nearly|more than|less than|up to)\s+)?"

MONEY_PATTERNS = (
    ("money_code_first", re.compile(rf"{_APPROX}\b(?=[A-Z€$£¥₺₽₴])(?:{_CUR_CODES}|{_CUR_SYM})\s?{_AMOUNT}{_MULT}(?:\s\({_CUR_CODES}\))?"), 1.0),
    ("money_sym", re.compile(rf"{_APPROX}{_CUR_SYM}\s?{_AMOUNT}{_MULT}"), 1.0),
    ("money_amount_first", re.compile(
        rf"{_APPROX}\b(?=[\dotfsenham]){_AMOUNT_WORDS}\s(?:{_CUR_WORD}|{_CUR_CODES})\b(?:\s\((?:[“\"]{_CUR_CODES}[”\"]\)|{_CUR_CODES}\)?))?", re.I), 1.0),
)
_UNITS = (r"(?:km|kilometres?|kilometers?|metres?|meters?|m|cm|centimetres?|mm|millimetres?|kg|kilos?|kilograms?|"
          r"grams?|g|tonnes?|tons?|litres?|liters?|l|ml|hectares?|ha|acres?|sq\.?\s?m|square metres?|square meters?|"
          r"m2|m²|per cent|percent|%|degrees?|°C|miles?|feet|foot|ft|inches?|pounds?|lbs?|kW|MW|volts?|bpm|mg|µg)")
QUANTITY_PATTERNS = (
    # a height in feet and inches is one quantity ("5 ft 11 in"): the feet alone would leave the inches
    ("feet_inches", re.compile(r"\b\d{1,2}\s?(?:ft|feet|foot)\s+\d{1,2}(?:\.\d+)?\s?(?:in|inches)(?![\w])"), 0.95),
    # a unit glued to a number word is none ("I am": "a" + "m")
    ("quantity_unit", re.compile(rf"(?=[\darsonmlutfeh]){_APPROX}\b{_NUM}(?:\s?(?:-|–|to)\s?{_NUM})?[- ]?(?<![^\W\d_]){_UNITS}(?![\w])"), 0.9),
    ("percent", re.compile(rf"{_APPROX}\b\d+(?:[.,]\d+)?\s?(?:%|per cent|percent)"), 1.0),
)


_CUR_SYM_RE = re.compile(_CUR_SYM)
# What every match of a money rule contains, found by scans that skip straight to their first character: a
# code's last letter or a symbol right before the amount; the end of an amount (a digit or the last letter of
# m/k/bn/thousand/hundred/million…, either case, "K" the Kelvin sign too) and a space before the currency.
_CODE_OR_SYMBOL_THEN_DIGIT = re.compile(rf"[A-Z]\s?\d|{_CUR_SYM}\s?\d")
_AMOUNT_END_THEN_CURRENCY = re.compile(rf"[\dmnkdMNKD\u212a]\s(?i:{_CUR_WORD}|{_CUR_CODES})\b")


class MoneyRecognizer(RegexRecognizer):
    name = "money"
    entity_type = "QUANTITY"
    subtype = "MONEY"
    patterns = MONEY_PATTERNS

    def absent(self, rule, text):
        if rule == "money_code_first":
            return _CODE_OR_SYMBOL_THEN_DIGIT.search(text) is None
        if rule == "money_amount_first":
            return _AMOUNT_END_THEN_CURRENCY.search(text) is None
        return rule == "money_sym" and _CUR_SYM_RE.search(text) is None

    def span(self, match):
        s, e = match.span()
        raw = match.group(0)
        # close an opened "(EUR" only if the text has the ")"
        if raw.endswith("(") or re.search(r"\([A-Z]{3}$", raw):
            if match.string[e : e + 1] == ")":
                e += 1
        return s, e

    def validate(self, text, match, rule):
        raw = match.group(0)
        if rule == "money_amount_first" and re.fullmatch(r"(?:a|an)\s.*", raw, re.I):
            return None
        return 1.0


class QuantityRecognizer(RegexRecognizer):
    name = "quantity"
    entity_type = "QUANTITY"
    patterns = QUANTITY_PATTERNS

    def absent(self, rule, text):
        return rule == "percent" and "%" not in text and "per cent" not in text and "percent" not in text

    def subtype_for(self, rule, match):
        return "PERCENT" if rule == "percent" or "%" in match.group(0) or "cent" in match.group(0) else "QUANTITY"

    def validate(self, text, match, rule):
        raw = match.group(0)
        unit = raw.split()[-1] if " " in raw else raw
        if re.fullmatch(r"(?:a|an|some|many|few|several)\b.*", raw, re.I):
            return None
        if re.search(r"\b(?:m|g|l|ha|ft)$", raw) and not re.search(r"\d", raw):
            return None
        if re.search(r"\d\s?(?:m|g|l)$", raw) and re.match(r"\s*[A-Z]", text[match.end():match.end() + 2] or "x"):
            return 0.8
        return 1.0 if unit else 0.8


_ORDINAL = (r"(?:\d{1,3}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
            r"twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth)")
RESULT_PATTERNS = (
    # "his team won 3–0", "a college basketball record of 289–296": en/em dash only (ranges use hyphens)
    ("score", re.compile(r"(?<![\w.,–—-])\d{1,3}\s?[–—]\s?\d{1,3}(?![\w–—-]|[.,]\d)"), 0.9),
    # batting, fielding and on-base averages: ".983", "hit .225 with a .319 on-base percentage"
    ("average", re.compile(r"(?<![\w.,])\.\d{3}(?![\d.,]\d)(?!\w)"), 0.9),
    # placings: "placed 15th", "fell back to seventh place", "sixth in runs batted in"
    ("placing", re.compile(
        rf"(?=[\dfsten])(?:(?:(?<=placed )|(?<=finished )|(?<=ranked )|(?<=came )|(?<=back to )|(?<=rose to )|(?<=ended )){_ORDINAL}\b"
        rf"|\b{_ORDINAL}(?= (?:place|position|overall)\b| in (?:the )?(?:league|runs|hits|points|goals|wins|batting|"
        rf"scoring|standings|conference|division)\b))", re.I), 0.9),
)
_SCORE_CONTEXT = re.compile(r"\b(?:won|win|wins|lost|loss|losses|beat|defeated|drew|draw|tied|score|scored|record|"
                            r"victory|match|game|final|series|season|against)\b", re.I)


class ResultRecognizer(RegexRecognizer):
    """Sports results and rankings, which single out a career in a biography (TAB's bios mark them QUANTITY):
    scores and win-loss records (with a result word in the 40 characters before), three-decimal averages and
    placings."""

    name = "result"
    entity_type = "QUANTITY"
    subtype = "RESULT"
    patterns = RESULT_PATTERNS

    def absent(self, rule, text):
        if rule == "score":
            return "–" not in text and "—" not in text
        if rule == "average":
            return " ." not in text and "(." not in text
        return False

    def validate(self, text, match, rule):
        if rule == "score" and not _SCORE_CONTEXT.search(text, max(0, match.start() - 40), match.start()):
            return None
        return 1.0
