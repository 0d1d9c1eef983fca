"""Run the spaCy NER only on candidate windows of a text, and put its entities on one full-text Doc.

Why this is (nearly) exact. ``en_core_web_md``'s NER is a greedy transition-based tagger over the vectors of
its own tok2vec: a hash embedding (NORM, PREFIX, SUFFIX, SHAPE + static vectors) of each token, then a CNN of
``depth`` = 4 layers with ``window_size`` = 1, so a token's vector sees at most 4 tokens on each side (its
*receptive field*). The transition system reads the vectors of the next token, of the first token of the
entity being built and of the token before the next one. Between entities, no entity is open and the state
carries nothing from further left. So the decisions around a token depend only on the ~5 tokens on each side,
and the model can only start an entity where the tokens look like one.

Nearly every entity we map (ner.py: PERSON, NORP, GPE/LOC/FAC, ORG, DATE/TIME, MONEY/PERCENT/QUANTITY/
CARDINAL, EVENT/PRODUCT/WORK_OF_ART/LAW/LANGUAGE) contains a *trigger* token: a token with an upper-case
letter or a digit, a number word (one … trillion, first … tenth, dozen, half, twice), a month or day name
(capitalised anyway), a time word of DATE/TIME entities (day, week, month, year, decade, century, morning,
yesterday, ago …) or a currency/percent sign. Capitalised function words ("The", "He", "In", …) are not
triggers on their own (sentence starts would otherwise cover most of the text); inside a name they sit next
to a trigger and fall in its window anyway.

A window is every trigger token ± ``context`` tokens (default 4, the receptive field); overlapping or
touching windows are merged; windows are cut from the tokens of ``nlp.make_doc(text)`` (a Doc of the same
words and spaces), so they never cut inside a token and are tokenized exactly as the full text. Inside a
window a trigger's receptive field is the same as in the full text. What can differ: tokens within 4 of a
window's cut see padding instead of their real neighbours (an entity whose tail runs past its last trigger),
and entities made only of non-trigger tokens (a lower-case foreign phrase the model takes for an ORG or a
PERSON) are not looked for. Measured on TAB echr_train_first100 / the Wikipedia bios wiki_test (6,679 /
1,897 full-text entities): with context 4, 62 + 8 / 0 entities differ and 70 % / 90 % of the tokens go to
the NER; with 6, 56 + 34 / 1 and 79 % / 95 %; with 8, 26 + 4 / 0 and 84 % / 97 % — the differences are
nearly all such lower-case phrases, and R_direct, R_quasi, R_tok and P are the same to 4 decimals with and
without windows (benchmarks/results/pii.md). The unit tests check exact equality on real paragraphs.

The NER runs (``nlp.pipe``, batched) on the windows; their entities are shifted back to the full Doc's token
offsets and set with ``Doc.set_ents`` (every other token "O", as the full-text NER leaves them), so every
recognizer still receives one full-text Doc. Only pipelines whose enabled components are just ``ner`` are
windowed; any other pipeline (tagger, parser…) runs on the full text.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

__all__ = ["NerWindows", "TRIGGER_WORDS"]

_NUMBER_WORDS = """
zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands million
millions billion billions trillion trillions dozen dozens half halves quarter quarters once twice thrice
first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth
sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth fiftieth hundredth thousandth millionth
percent per cent pct
"""
_TIME_WORDS = """
day days week weeks month months year years decade decades century centuries millennium hour hours minute minutes
seconds night nights morning mornings evening evenings afternoon afternoons noon midnight dawn dusk today yesterday
tomorrow tonight weekend weekends fortnight fortnights season seasons spring summer autumn fall winter daily weekly
monthly yearly annual annually quarterly biannual ago date dates period time times age aged old
"""
TRIGGER_WORDS = frozenset((_NUMBER_WORDS + _TIME_WORDS).split())
# Capitalised forms of these are not triggers by themselves (sentence starts).
_FUNCTION_WORDS = frozenset("""
the a an he she it they we i you his her its their our my your this that these those there then thus here
in on at to of for from by with as into upon after before during since until while when where whereas which
who whom whose what if but and or nor not no so also however accordingly moreover furthermore nevertheless
further following according although though because both each every all any some such other another
having being was were is are be been had has have do does did would could should will shall may might must can
between under over about against among within without
""".split())
_SIGNS = frozenset("$€£¥%‰")
_SPLIT = re.compile(r"[-‑‐–—/.]")


def _is_trigger(text: str) -> bool:
    low = text.lower()
    if low != text:  # an upper-case letter
        return not (low in _FUNCTION_WORDS and len(text) > 1 and text[1:] == low[1:])
    if any(c.isdigit() for c in text) or low in TRIGGER_WORDS or any(c in _SIGNS for c in text):
        return True
    return any(part in TRIGGER_WORDS for part in _SPLIT.split(low)) if _SPLIT.search(low) else False


class NerWindows:
    """Full-text spaCy Docs whose entities come from the NER run on candidate windows (module docstring).

    ``docs(texts)`` yields one Doc per text, in order; ``trigger_windows(doc)`` gives the windows as
    ``(start, end)`` token offsets. ``tokens_total``/``tokens_sent`` count the tokens seen and sent to the
    NER (for reporting the fraction)."""

    def __init__(self, nlp: Any, context: int = 4, batch_size: int = 64, gap: int = 0):
        self.nlp = nlp
        self.context = context
        self.gap = gap
        self.batch_size = batch_size
        self.windowed = [name for name, _ in getattr(nlp, "pipeline", ())] == ["ner"]
        self._cache: dict[int, bool] = {}  # ORTH -> trigger?
        self.tokens_total = 0
        self.tokens_sent = 0

    def triggers(self, doc: Any) -> list[int]:
        """Token indices of the trigger tokens of ``doc``."""
        cache = self._cache
        strings = doc.vocab.strings
        out = []
        for i, orth in enumerate(doc.to_array("ORTH").tolist()):
            hit = cache.get(orth)
            if hit is None:
                hit = cache[orth] = _is_trigger(strings[orth])
            if hit:
                out.append(i)
        return out

    def trigger_windows(self, doc: Any) -> list[tuple[int, int]]:
        """Trigger tokens ± ``context``, merged when they overlap, touch or are less than ``gap`` tokens apart
        (a window costs more than a few tokens), clipped to the Doc."""
        w, n, gap = self.context, len(doc), self.gap
        out: list[list[int]] = []
        for i in self.triggers(doc):
            a, b = max(0, i - w), min(n, i + w + 1)
            if out and a <= out[-1][1] + gap:
                out[-1][1] = b
            else:
                out.append([a, b])
        return [(a, b) for a, b in out]

    def docs(self, texts: Iterable[str], batch_size: int | None = None) -> Iterator[Any]:
        """One full-text Doc per text, entities set from the windows' NER."""
        if not self.windowed:
            yield from self.nlp.pipe(texts, batch_size=batch_size or self.batch_size)
            return
        from spacy.tokens import Doc, Span

        texts = list(texts)
        full = [self.nlp.make_doc(t) for t in texts]
        owners: list[tuple[int, int]] = []  # per window: (index of its full Doc, token offset)
        pieces = []
        vocab = self.nlp.vocab
        for k, doc in enumerate(full):
            self.tokens_total += len(doc)
            windows = self.trigger_windows(doc)
            if not windows:
                continue
            # the full Doc's own lexemes, by ORTH id (Span.as_doc would also copy vectors and arrays: 10x slower;
            # Token objects and string lookups 3x slower)
            tokens = doc.to_array(["ORTH", "SPACY"])
            words = tokens[:, 0].tolist()
            spaces = tokens[:, 1].astype(bool).tolist()
            for a, b in windows:
                owners.append((k, a))
                pieces.append(Doc(vocab, words=words[a:b], spaces=spaces[a:b]))
                self.tokens_sent += b - a
        ents: list[list[Any]] = [[] for _ in full]

        results = self.nlp.pipe(pieces, batch_size=self.batch_size) if pieces else ()  # no trigger: no NER
        for (k, offset), piece in zip(owners, results):
            doc = full[k]
            for e in piece.ents:
                ents[k].append(Span(doc, e.start + offset, e.end + offset, label=e.label))
        for doc, spans in zip(full, ents):
            doc.set_ents(spans, default="outside")
            yield doc

    def __call__(self, text: str) -> Any:
        return next(self.docs([text]))

    @property
    def fraction_sent(self) -> float | None:
        return self.tokens_sent / self.tokens_total if self.tokens_total else None
