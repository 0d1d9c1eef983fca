"""spaCy's rule-based ``sentencizer`` on ``spacy.blank("en")``'s tokenizer, in plain Python, without spaCy.

``segment.split_sentences`` splits every line of a document into sentences. It used ``spacy.blank("en")`` with
the ``sentencizer`` pipe, which made every process splitting text (ingest, and swap for where a generalized
mention's sentence starts) import spaCy, thinc and torch (~600 MiB). This module gives the same sentence starts:

- the tokenizer is a port of spaCy 3.8's ``Tokenizer.__call__`` (``spacy/tokenizer.pyx``: whitespace runs,
  ``_split_affixes``, ``_attach_tokens``, and the special-case matcher ``_apply_special_cases``), run on the rules
  spaCy builds ``blank("en")``'s tokenizer from, read from the installed spaCy's files (``spacy_files``);
- the sentencizer is ``Sentencizer.predict``: a token starts a sentence when a token that is one of its
  punctuation characters came before it since the last start and it is neither one of them nor punctuation.

``tests/unit/test_sentences.py`` compares tokens and sentence starts with spaCy's on the bundled and shared
corpora and on generated strings.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache

from .spacy_files import TokenizerRules, english_tokenizer_rules

# spacy.pipeline.sentencizer.Sentencizer.default_punct_chars
PUNCT_CHARS = frozenset([
    '!', '.', '?', '։', '؟', '۔', '܀', '܁', '܂', '߹',
    '।', '॥', '၊', '။', '።', '፧', '፨', '᙮', '᜵', '᜶', '᠃', '᠉', '᥄',
    '᥅', '᪨', '᪩', '᪪', '᪫', '᭚', '᭛', '᭞', '᭟', '᰻', '᰼', '᱾', '᱿',
    '‼', '‽', '⁇', '⁈', '⁉', '⸮', '⸼', '꓿', '꘎', '꘏', '꛳', '꛷', '꡶',
    '꡷', '꣎', '꣏', '꤯', '꧈', '꧉', '꩝', '꩞', '꩟', '꫰', '꫱', '꯫', '﹒',
    '﹖', '﹗', '！', '．', '？', '𐩖', '𐩗', '𑁇', '𑁈', '𑂾', '𑂿', '𑃀',
    '𑃁', '𑅁', '𑅂', '𑅃', '𑇅', '𑇆', '𑇍', '𑇞', '𑇟', '𑈸', '𑈹', '𑈻', '𑈼',
    '𑊩', '𑑋', '𑑌', '𑗂', '𑗃', '𑗉', '𑗊', '𑗋', '𑗌', '𑗍', '𑗎', '𑗏', '𑗐',
    '𑗑', '𑗒', '𑗓', '𑗔', '𑗕', '𑗖', '𑗗', '𑙁', '𑙂', '𑜼', '𑜽', '𑜾', '𑩂',
    '𑩃', '𑪛', '𑪜', '𑱁', '𑱂', '𖩮', '𖩯', '𖫵', '𖬷', '𖬸', '𖭄', '𛲟', '𝪈',
    '｡', '。',
])

_CACHE_MAX = 100_000  # whitespace-delimited pieces whose tokens are kept (spaCy's tokenizer caches them too)


def is_punct(text: str) -> bool:
    """``spacy.lang.lex_attrs.is_punct``: every character is Unicode punctuation."""
    return all(unicodedata.category(c).startswith("P") for c in text)


class Tokenizer:
    """``spacy.blank("en").tokenizer``, returning token strings with their character offsets."""

    def __init__(self, rules: TokenizerRules):
        self.rules = rules
        self.specials = rules.special_cases
        self._cache: dict[str, tuple[str, ...]] = {}
        # the special-case matcher: special cases the affix rules split, as the tokens those rules give them
        self._patterns: dict[str, list[tuple[str, ...]]] = {}
        for string in sorted(self.specials):
            if (self._prefix_len(string) or self._infixes(string) or self._suffix_len(string) or " " in string):
                pattern = tuple(t for t, _ in self._tokenize_affixes(string, False))
                if pattern:
                    self._patterns.setdefault(pattern[0], []).append(pattern)
        self._longest = max((len(p) for ps in self._patterns.values() for p in ps), default=0)

    def _prefix_len(self, string: str) -> int:
        m = self.rules.prefix_search(string)
        return m.end() - m.start() if m is not None else 0

    def _suffix_len(self, string: str) -> int:
        m = self.rules.suffix_search(string)
        return m.end() - m.start() if m is not None else 0

    def _infixes(self, string: str) -> list:
        return list(self.rules.infix_finditer(string))

    def __call__(self, text: str) -> list[tuple[str, int]]:
        """(token text, start offset) of every token, whitespace tokens included, as spaCy makes them."""
        tokens = self._tokenize_affixes(text, True)
        return self._apply_special_cases(text, tokens) if self._patterns else tokens

    def _tokenize_affixes(self, text: str, with_special_cases: bool) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        if not text:
            return out
        start, in_ws = 0, text[0].isspace()
        for i, uc in enumerate(text):
            if uc.isspace() != in_ws:
                if start < i:
                    self._span(text[start:i], start, out, with_special_cases)
                start = i + 1 if uc == " " else i
                in_ws = not in_ws
        if start < len(text):
            self._span(text[start:], start, out, with_special_cases)
        return out

    def _span(self, span: str, offset: int, out: list[tuple[str, int]], with_special_cases: bool) -> None:
        pieces = self.specials.get(span) if with_special_cases else None
        if pieces is None:
            key = (span, with_special_cases)
            pieces = self._cache.get(key)
            if pieces is None:
                pieces = self._tokenize(span, with_special_cases)
                if len(self._cache) < _CACHE_MAX:
                    self._cache[key] = pieces
        for piece in pieces:
            out.append((piece, offset))
            offset += len(piece)

    def _tokenize(self, string: str, with_special_cases: bool) -> tuple[str, ...]:
        """``Tokenizer._split_affixes`` then ``_attach_tokens``."""
        specials = self.specials if with_special_cases else {}
        prefixes: list[str] = []
        suffixes: list[str] = []
        last_size = 0
        while string and len(string) != last_size:
            if string in specials:
                break
            last_size = len(string)
            pre_len = self._prefix_len(string)
            if pre_len != 0:
                prefix, minus_pre = string[:pre_len], string[pre_len:]
                if minus_pre and minus_pre in specials:
                    string = minus_pre
                    prefixes.append(prefix)
                    break
            suf_len = self._suffix_len(string[pre_len:])
            if suf_len != 0:
                suffix, minus_suf = string[-suf_len:], string[:-suf_len]
                if minus_suf and minus_suf in specials:
                    string = minus_suf
                    suffixes.append(suffix)
                    break
            if pre_len and suf_len and (pre_len + suf_len) <= len(string):
                string = string[pre_len:-suf_len]
                prefixes.append(prefix)
                suffixes.append(suffix)
            elif pre_len:
                string = minus_pre
                prefixes.append(prefix)
            elif suf_len:
                string = minus_suf
                suffixes.append(suffix)
        tokens = list(prefixes)
        if string:
            if string in specials:
                tokens.extend(specials[string])
            elif self.rules.url_match(string):
                tokens.append(string)
            else:
                matches = self._infixes(string)
                if not matches:
                    tokens.append(string)
                else:
                    start = 0
                    for match in matches:
                        infix_start, infix_end = match.start(), match.end()
                        if infix_start == 0:
                            continue
                        if infix_start != start:
                            tokens.append(string[start:infix_start])
                        if infix_start != infix_end:
                            tokens.append(string[infix_start:infix_end])
                        start = infix_end
                    if string[start:]:
                        tokens.append(string[start:])
        tokens.extend(reversed(suffixes))
        return tuple(tokens)

    def _apply_special_cases(self, text: str, tokens: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """``Tokenizer._apply_special_cases``: runs of tokens that spell a special case the affix rules split
        become that special case's tokens (longest match first, then leftmost)."""
        matches = []
        n = len(tokens)
        for i, (first, _) in enumerate(tokens):
            for pattern in self._patterns.get(first, ()):
                if i + len(pattern) <= n and all(tokens[i + j][0] == p for j, p in enumerate(pattern)):
                    matches.append((i, i + len(pattern)))
        if not matches:
            return tokens
        matches.sort(key=lambda m: (-(m[1] - m[0]), m[0]))
        seen: set[int] = set()
        chosen: dict[int, int] = {}
        for start, end in matches:
            if start not in seen and end - 1 not in seen:
                chosen[start] = end
            seen.update(range(start, end))
        out: list[tuple[str, int]] = []
        i = 0
        while i < n:
            end = chosen.get(i)
            if end is None:
                out.append(tokens[i])
                i += 1
                continue
            begin = tokens[i][1]
            span_text = text[begin:tokens[end - 1][1] + len(tokens[end - 1][0])]
            pieces = self.specials.get(span_text)
            if pieces is None:
                out.extend(tokens[i:end])
            else:
                offset = begin
                for piece in pieces:
                    out.append((piece, offset))
                    offset += len(piece)
            i = end
        return out


@lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    return Tokenizer(english_tokenizer_rules())


def sentence_starts(text: str) -> list[int]:
    """Character offsets where spaCy's ``sentencizer`` on ``spacy.blank("en")`` starts the sentences of
    ``text`` (``Sentencizer.predict``); empty for a text without tokens."""
    tokens = tokenizer()(text)
    if not tokens:
        return []
    starts = [tokens[0][1]]
    seen_period = False
    for piece, offset in tokens:
        in_punct_chars = piece in PUNCT_CHARS
        if seen_period and not in_punct_chars and not is_punct(piece):
            starts.append(offset)
            seen_period = False
        elif in_punct_chars:
            seen_period = True
    return starts
