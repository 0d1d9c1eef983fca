"""Regex recognizers with validation (minimal set: e-mail, URL, phone). Every hit carries a trace."""
from __future__ import annotations

import re
from typing import Any

from .base import Detection, Recognizer


class RegexRecognizer(Recognizer):
    """One or more named patterns for one TAB type; ``validate`` may reject or rescore a match."""

    name = "regex"
    entity_type = "CODE"
    subtype = ""
    patterns: tuple[tuple[str, re.Pattern[str], float], ...] = ()

    def validate(self, text: str, match: re.Match[str]) -> float | None:
        """Return a score (None = reject). Default: the pattern's score."""
        return 1.0

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        return match.span()

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out: list[Detection] = []
        for rule, pattern, base in self.patterns:
            for m in pattern.finditer(text):
                factor = self.validate(text, m)
                if factor is None:
                    continue
                s, e = self.span(m)
                out.append(
                    Detection(s, e, self.entity_type, round(base * factor, 3), self.name, rule, subtype=self.subtype or None)
                )
        return out


class EmailRecognizer(RegexRecognizer):
    name = "email"
    subtype = "EMAIL"
    patterns = (
        ("email", re.compile(r"(?<![\w.+-])[\w.+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}\b"), 1.0),
    )


class UrlRecognizer(RegexRecognizer):
    name = "url"
    subtype = "URL"
    patterns = (
        ("url_scheme", re.compile(r"\b(?:https?|ftp)://[^\s<>\"']+", re.I), 1.0),
        ("url_www", re.compile(r"\bwww\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/[^\s<>\"']*)?", re.I), 0.9),
    )

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        s, e = match.span()
        text = match.string
        while e > s and text[e - 1] in ".,;:!?)]}'\"":
            e -= 1
        return s, e


_PHONE = re.compile(
    r"(?<![\w/+-])(?:\+|00)?(?:\(?\d{1,4}\)?[\s.-]?){2,6}\d{2,4}(?![\w/-])"
)


class PhoneRecognizer(RegexRecognizer):
    """Phone numbers: matched loosely, then parsed: 7–15 digits (E.164), an explicit international
    prefix or a phone context word nearby; dates, years and case numbers are rejected."""

    name = "phone"
    subtype = "PHONE"
    patterns = (("phone", _PHONE, 0.8),)
    CONTEXT = ("phone", "tel", "telephone", "mobile", "fax", "call", "cell")

    def validate(self, text: str, match: re.Match[str]) -> float | None:
        raw = match.group(0)
        digits = re.sub(r"\D", "", raw)
        if not 7 <= len(digits) <= 15:
            return None
        if re.fullmatch(r"\d{1,2}[./-]\d{1,2}[./-]\d{2,4}", raw.strip()):
            return None  # a date
        international = raw.startswith("+") or raw.startswith("00")
        window = text[max(0, match.start() - 40) : match.start()].lower()
        context = any(c in window for c in self.CONTEXT)
        grouped = bool(re.search(r"[\s.()-]", raw))
        if international or context:
            return 1.0
        if grouped and len(digits) >= 9:
            return 0.75
        return None
