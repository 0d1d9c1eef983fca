"""Score a sanitized TAB corpus against TAB's gold decisions, from the released text alone.

This is the independent judge of a release (issue 9, item 4): it never reads the pipeline's own records
(entities, swap logs, reports), only the original gold documents (``tab.load_tab``) and the sanitized texts.

* **Alignment.** Original and sanitized texts are split on ``"\\n"``. A document whose line count differs is
  *misaligned*: it is listed, counted, and excluded from every share below (so are documents missing
  from the output). Nothing is dropped silently.
* **Survival.** A gold mention (one annotator per document, the first by default) *survives* when its exact
  span text is still in the same line of the output (for a mention spanning lines: in the same run of
  lines). Shares are given per identifier type (DIRECT, QUASI, NO_MASK) and per identifier type x entity
  type. Because a substring test can be fooled by the same text elsewhere in the line, a second count,
  *unchanged (diff)*, says how many mentions have no token touched by the line diff.
* **Replacements.** Each original line is diffed with its sanitized line (``difflib.SequenceMatcher`` over
  ``\\w+|[^\\w\\s]`` tokens, no autojunk). A mention is *replaced* when a ``replace`` opcode touches one of its
  tokens; its new value is the sanitized text between the images of its first and last tokens (a token
  inside a ``replace`` block maps to the whole block).
* **Kind kept.** For replaced QUASI and NO_MASK mentions whose new value is a named value — not a bracketed
  placeholder (``[PERSON_1]``, ``[Organization]``) and not a generalization into common words ("the regional
  court", counted as ``generalized_phrase``: no tagger labels a common noun) and not a place generalized to
  its country ("Zakroczym" → "Poland", counted as ``generalized_to_country``: a step up the hierarchy that
  changes the kind by design, not a swap) — an independent NER tagger (spaCy ``en_core_web_md`` by default, any
  callable ``lines -> [[(start, end, label), ...], ...]``) labels the old value in the original line and
  the new value in the sanitized line: the entity overlapping the span most. No entity on the old value:
  skipped (counted); none on the new value: ``NONE`` (a disagreement). Kind kept = agree / judged.
  **Baseline**: each judged old value is replaced in its original line by a value drawn (seeded RNG) among
  the distinct gold mention texts of the corpus whose own label is the same (other than the old text),
  and the line is tagged and compared the same way.
* **Kind kept by gold type** (the owner's decision on issue 9): on the mentions the tagger reads consistently with
  their gold type (``CONSISTENT_LABELS``), a replacement keeps the kind when the tagger reads the new value as a
  label of the same gold type; the baseline is a random value of the same gold type from another document. A place
  (gold LOC) replaced by a place name is judged by GeoNames containment instead (``places.containment``: kept when
  the new place contains the old one), not by the tagger.
* **Agreement** (the owner's decision on issue 9), over every annotator: mentions of all annotators that overlap on
  a line form one mention. Agreed QUASI: every annotator of the document masked it (DIRECT or QUASI) and none
  called it DIRECT; changed when its shortest form is no longer in the line. Agreed NO_MASK: no annotator masked
  it; kept when its longest form is still in the line. DIRECT: any annotator's DIRECT; surviving when its shortest
  form is in the line. Disputed: the rest, reported. R_quasi over all annotators: each annotator's QUASI entities
  whose every (single-line) QUASI mention changed, over all of them.
"""
from __future__ import annotations

import difflib
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .places import containment, countries_named
from .tab import GoldMention, TabDocument

IDENTIFIER_TYPES = ("DIRECT", "QUASI", "NO_MASK")
ENTITY_TYPES = ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC")
NO_ENTITY = "NONE"
# spaCy (OntoNotes) labels that are a reading of each TAB entity type: where the tagger reads the old value
# as something else ("Szczecin" as a PERSON), its verdict on the new value says more about the tagger than
# about the kind, so the kind judgement is also reported on the mentions it reads consistently.
CONSISTENT_LABELS = {
    "LOC": {"GPE", "LOC", "FAC"}, "ORG": {"ORG"}, "PERSON": {"PERSON"}, "DEM": {"NORP", "LANGUAGE"},
    "DATETIME": {"DATE", "TIME"}, "QUANTITY": {"CARDINAL", "MONEY", "QUANTITY", "PERCENT", "ORDINAL"},
    "MISC": {"EVENT", "PRODUCT", "LAW", "WORK_OF_ART", "LANGUAGE", "NORP"}, "CODE": set(),
}

_TOKEN = re.compile(r"\w+|[^\w\s]")
_PLACEHOLDER = re.compile(r"\[[^\[\]\n]*\]")

# A tagger: lines -> per line, a list of (start, end, label) entity spans (character offsets in the line).
Tagger = Callable[[Sequence[str]], Sequence[Sequence[tuple[int, int, str]]]]


# ---------------------------------------------------------------------------------------------
# Diff-based replacement finding
# ---------------------------------------------------------------------------------------------
def tokenize(line: str) -> list[tuple[int, int]]:
    """Character spans of ``\\w+|[^\\w\\s]`` tokens."""
    return [(m.start(), m.end()) for m in _TOKEN.finditer(line)]


@dataclass(frozen=True)
class Replacement:
    """A ``replace`` opcode of the token diff, as character spans of the old and new lines."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int
    old_text: str
    new_text: str


class LineDiff:
    """Token diff of one original line with its sanitized line, and the mapping of original spans."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new
        self.old_tokens = tokenize(old)
        self.new_tokens = tokenize(new)
        a = [old[s:e] for s, e in self.old_tokens]
        b = [new[s:e] for s, e in self.new_tokens]
        if a == b:
            self.opcodes = [("equal", 0, len(a), 0, len(b))] if a else []
        else:
            self.opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        # per old token: index of its opcode
        self._op_of: list[int] = [0] * len(a)
        for k, (_, i1, i2, _, _) in enumerate(self.opcodes):
            for i in range(i1, i2):
                self._op_of[i] = k

    def replacements(self) -> list[Replacement]:
        out = []
        for tag, i1, i2, j1, j2 in self.opcodes:
            if tag != "replace":
                continue
            os_, oe = self.old_tokens[i1][0], self.old_tokens[i2 - 1][1]
            ns, ne = self.new_tokens[j1][0], self.new_tokens[j2 - 1][1]
            out.append(Replacement(os_, oe, ns, ne, self.old[os_:oe], self.new[ns:ne]))
        return out

    def _token_range(self, start: int, end: int) -> tuple[int, int] | None:
        idx = [i for i, (s, e) in enumerate(self.old_tokens) if e > start and s < end]
        return (idx[0], idx[-1]) if idx else None

    def touched(self, start: int, end: int) -> tuple[bool, bool]:
        """(any token of the span changed, a ``replace`` opcode touches the span)."""
        rng = self._token_range(start, end)
        if rng is None:
            return False, False
        first, last = rng
        changed = replaced = False
        for tag, i1, i2, _, _ in self.opcodes:
            if tag == "equal":
                continue
            hit = (i1 < i2 and i1 <= last and i2 > first) or (i1 == i2 and first < i1 <= last)
            if hit:
                changed = True
                replaced = replaced or tag == "replace"
        return changed, replaced

    def map_span(self, start: int, end: int) -> tuple[int, int] | None:
        """Image ``(new_start, new_end)`` of the original span ``[start, end)`` in the sanitized line; None
        when the span has no token; an empty span (start == end) when all its tokens were deleted."""
        rng = self._token_range(start, end)
        if rng is None:
            return None
        first, last = rng
        tag, i1, _, j1, j2 = self.opcodes[self._op_of[first]]
        if tag == "equal":
            j = j1 + first - i1
            new_start = self.new_tokens[j][0] + max(0, start - self.old_tokens[first][0])
        else:  # replace: the block's start; delete: where the block was
            new_start = self.new_tokens[j1][0] if j1 < len(self.new_tokens) else len(self.new)
        tag, i1, _, j1, j2 = self.opcodes[self._op_of[last]]
        if tag == "equal":
            j = j1 + last - i1
            new_end = self.new_tokens[j][1] - max(0, self.old_tokens[last][1] - end)
        elif tag == "replace":
            new_end = self.new_tokens[j2 - 1][1]
        else:  # delete
            new_end = self.new_tokens[j1 - 1][1] if j1 > 0 else 0
        return (new_start, max(new_start, new_end))


def find_replacements(old_line: str, new_line: str) -> list[Replacement]:
    """The ``replace`` opcodes of the token diff of two lines."""
    return LineDiff(old_line, new_line).replacements()


def is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value))


_WORDS = re.compile(r"[^\W\d_][\w'’-]*")


# Role titles that head a generalized office ("Chief of the police", "Minister of the organisation"): capitalized
# as titles are, they name no one by themselves.
_ROLE_TITLES = frozenset("""chief head minister president vice-president commissioner director governor mayor
prosecutor judge inspector officer member secretary chairman chairperson deputy registrar ombudsman""".split())


def is_common_phrase(value: str) -> bool:
    """A generalization into common words ("the regional court", "several co-accused", "Chief of the police"),
    not a named value: no digit and no capitalized word but the first, which is lower-case, an article or a role
    title. It names nothing, so no tagger can label it."""
    words = _WORDS.findall(value)
    return bool(words) and not any(ch.isdigit() for ch in value) and not any(w[0].isupper() for w in words[1:]) \
        and (not words[0][0].isupper() or words[0].lower() in ("the", "a", "an", "several")
             or (len(words) > 1 and words[0].lower() in _ROLE_TITLES))


_POSSESSIVE_END = re.compile(r"[’']s?$")


def is_country_generalization(old: str, new: str) -> bool:
    """A place generalized to its country ("Zakroczym" → "Poland", "the Bochum prosecutor" → "the German
    prosecutor"): the new value names a country or its people, the old one does not. A step up the place
    hierarchy, not a swap: it changes the kind by design (a town becomes a country), so the kind judgement,
    which asks whether a swapped value is the same sort of thing, leaves it out (counted)."""
    from ..pii.policy import country_of

    def names_country(value: str) -> bool:
        return country_of(_POSSESSIVE_END.sub("", re.sub(r"^the\s+", "", value.strip(), flags=re.I))) is not None

    return names_country(new) and not names_country(old)


def best_label(entities: Sequence[tuple[int, int, str]], start: int, end: int) -> str | None:
    """Label of the entity overlapping ``[start, end)`` most (first on ties); None when none overlaps."""
    best, best_overlap = None, 0
    for s, e, label in entities:
        overlap = min(e, end) - max(s, start)
        if overlap > best_overlap:
            best, best_overlap = label, overlap
    return best


# ---------------------------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------------------------
@dataclass
class SurvivalCount:
    total: int = 0
    survived: int = 0
    unchanged: int = 0  # no token touched by the line diff

    @property
    def share(self) -> float:
        return self.survived / self.total if self.total else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.total, "survived": self.survived, "survived_share": _r(self.share),
                "unchanged_diff": self.unchanged}


@dataclass
class KindCount:
    judged: int = 0
    agree: int = 0
    baseline_judged: int = 0
    baseline_agree: int = 0

    @property
    def share(self) -> float:
        return self.agree / self.judged if self.judged else float("nan")

    @property
    def baseline_share(self) -> float:
        return self.baseline_agree / self.baseline_judged if self.baseline_judged else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {"judged": self.judged, "agree": self.agree, "kept_share": _r(self.share),
                "baseline_judged": self.baseline_judged, "baseline_agree": self.baseline_agree,
                "baseline_kept_share": _r(self.baseline_share)}


@dataclass
class ReleaseScores:
    annotator: str
    n_gold_documents: int = 0
    n_output_documents: int = 0
    n_scored_documents: int = 0
    missing_documents: list[str] = field(default_factory=list)
    extra_documents: list[str] = field(default_factory=list)
    duplicate_documents: list[str] = field(default_factory=list)
    misaligned_documents: list[str] = field(default_factory=list)
    excluded_mentions: int = 0
    survival: dict[str, SurvivalCount] = field(default_factory=dict)
    survival_by_entity: dict[str, dict[str, SurvivalCount]] = field(default_factory=dict)
    kind: KindCount = field(default_factory=KindCount)
    kind_consistent: KindCount = field(default_factory=KindCount)  # the tagger's old label fits the gold type
    kind_by_label: dict[str, KindCount] = field(default_factory=dict)
    kind_skipped: dict[str, int] = field(default_factory=dict)
    kind_pairs: dict[str, int] = field(default_factory=dict)  # "OLD->NEW" label counts of the judged
    kind_gold: KindCount = field(default_factory=KindCount)  # by gold type, on consistently tagged mentions
    place_generalizations: dict[str, int] = field(default_factory=dict)  # containment verdict -> LOC mentions
    agreement: dict[str, SurvivalCount] = field(default_factory=dict)  # agreed QUASI / NO_MASK, DIRECT, disputed
    r_quasi_all: SurvivalCount = field(default_factory=SurvivalCount)  # QUASI entities of all annotators
    seed: int = 0
    tagger: str = ""
    examples: list[dict[str, str]] = field(default_factory=list)
    kind_disagreements: list[dict[str, str]] = field(default_factory=list)  # sampled, like ``examples``

    def _share(self, ident: str) -> float:
        c = self.survival.get(ident)
        return c.share if c else float("nan")

    @property
    def headline(self) -> dict[str, float]:
        quasi = self._share("QUASI")
        return {"no_mask_kept_share": self._share("NO_MASK"),
                "quasi_changed_share": 1 - quasi if quasi == quasi else float("nan"),
                "direct_surviving_share": self._share("DIRECT"),
                "kind_kept_share": self.kind.share,
                "kind_kept_share_random_baseline": self.kind.baseline_share,
                "kind_kept_share_consistent_tagging": self.kind_consistent.share,
                "kind_kept_share_consistent_tagging_random_baseline": self.kind_consistent.baseline_share,
                "agreed_quasi_changed_share": self._changed("agreed_quasi"),
                "agreed_no_mask_kept_share": self._kept("agreed_no_mask"),
                "direct_any_annotator_surviving_share": self._kept("direct"),
                "disputed_changed_share": self._changed("disputed"),
                "r_quasi_all_annotators": 1 - self.r_quasi_all.share if self.r_quasi_all.total else float("nan"),
                "kind_kept_by_gold_type": self.kind_gold.share,
                "kind_kept_by_gold_type_random_baseline": self.kind_gold.baseline_share}

    def _kept(self, group: str) -> float:
        c = self.agreement.get(group)
        return c.share if c else float("nan")

    def _changed(self, group: str) -> float:
        kept = self._kept(group)
        return 1 - kept if kept == kept else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "documents": {"gold": self.n_gold_documents, "output": self.n_output_documents,
                          "scored": self.n_scored_documents, "missing": self.missing_documents,
                          "extra": self.extra_documents, "duplicates": self.duplicate_documents,
                          "misaligned": self.misaligned_documents,
                          "n_misaligned": len(self.misaligned_documents),
                          "excluded_mentions": self.excluded_mentions},
            "headline": {k: _r(v) for k, v in self.headline.items()},
            "survival": {k: v.as_dict() for k, v in self.survival.items()},
            "survival_by_entity_type": {k: {t: c.as_dict() for t, c in v.items()}
                                        for k, v in self.survival_by_entity.items()},
            "kind": {"tagger": self.tagger, "seed": self.seed, **self.kind.as_dict(),
                     "consistent_tagging": self.kind_consistent.as_dict(),
                     "by_old_label": {k: v.as_dict() for k, v in sorted(self.kind_by_label.items())},
                     "skipped": dict(sorted(self.kind_skipped.items())),
                     "label_pairs": dict(sorted(self.kind_pairs.items(), key=lambda kv: (-kv[1], kv[0]))),
                     "by_gold_type": self.kind_gold.as_dict(),
                     "place_generalizations": dict(sorted(self.place_generalizations.items()))},
            "agreement": {k: v.as_dict() for k, v in self.agreement.items()},
            "r_quasi_all_annotators": {"entities": self.r_quasi_all.total,
                                       "changed": self.r_quasi_all.total - self.r_quasi_all.survived},
            "examples": self.examples,
            "kind_disagreements": self.kind_disagreements,
        }

    def to_markdown(self) -> str:
        h = self.headline
        out = [
            "### Release vs TAB gold (from the sanitized text alone)",
            "",
            f"Documents: {self.n_gold_documents} gold, {self.n_output_documents} in the output, "
            f"**{self.n_scored_documents} scored**; misaligned (line count differs, excluded): "
            f"{len(self.misaligned_documents)}"
            + (f" ({', '.join(self.misaligned_documents)})" if self.misaligned_documents else "")
            + f"; missing from the output (excluded): {len(self.missing_documents)}"
            + (f" ({', '.join(self.missing_documents)})" if self.missing_documents else "")
            + f"; not in the gold: {len(self.extra_documents)}; gold mentions excluded: {self.excluded_mentions}. "
            f"Gold annotator: {self.annotator}.",
            "",
            "| headline | value |",
            "| --- | ---: |",
            f"| NO_MASK kept share | {_pct(h['no_mask_kept_share'])} |",
            f"| QUASI changed share (1 − survived) | {_pct(h['quasi_changed_share'])} |",
            f"| DIRECT surviving share | {_pct(h['direct_surviving_share'])} |",
            f"| kind kept share (judged {self.kind.judged}) | {_pct(h['kind_kept_share'])} |",
            f"| kind kept, random same-label baseline (judged {self.kind.baseline_judged}) "
            f"| {_pct(h['kind_kept_share_random_baseline'])} |",
            f"| kind kept where the tagger reads the old value as its gold type (judged {self.kind_consistent.judged}) "
            f"| {_pct(h['kind_kept_share_consistent_tagging'])} |",
            f"| … its random same-label baseline (judged {self.kind_consistent.baseline_judged}) "
            f"| {_pct(h['kind_kept_share_consistent_tagging_random_baseline'])} |",
            f"| kind kept by gold type, consistently tagged, places by containment (judged {self.kind_gold.judged}) "
            f"| {_pct(h['kind_kept_by_gold_type'])} |",
            f"| … random value of the same gold type from another document (judged {self.kind_gold.baseline_judged}) "
            f"| {_pct(h['kind_kept_by_gold_type_random_baseline'])} |",
            "",
            "Agreement over all annotators (mentions overlapping on a line are one mention):",
            "",
            "| mentions | count | measure | share |",
            "| --- | ---: | --- | ---: |",
            *[f"| {group.replace('_', ' ')} | {self.agreement[group].total} | {measure} | {_pct(h[key])} |"
              for group, measure, key in (("agreed_quasi", "changed", "agreed_quasi_changed_share"),
                                          ("agreed_no_mask", "kept", "agreed_no_mask_kept_share"),
                                          ("direct", "surviving", "direct_any_annotator_surviving_share"),
                                          ("disputed", "changed", "disputed_changed_share"))
              if group in self.agreement],
            f"| QUASI entities, every annotator | {self.r_quasi_all.total} | R_quasi (all mentions changed) "
            f"| {_pct(h['r_quasi_all_annotators'])} |",
            "",
            "Places (gold LOC) replaced by a place name, by GeoNames containment: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.place_generalizations.items())) or "none") + ".",
            "",
            "Survival (exact span text still in the same line); *unchanged (diff)*: no token of the mention "
            "touched by the line diff.",
            "",
            "| identifier type | mentions | survived | share | unchanged (diff) |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for ident, c in self.survival.items():
            out.append(f"| {ident} | {c.total} | {c.survived} | {_pct(c.share)} | {c.unchanged} |")
        out += ["", "Survival share by identifier type × entity type (survived/mentions):", "",
                "| entity type | " + " | ".join(self.survival_by_entity) + " |",
                "| --- |" + " ---: |" * len(self.survival_by_entity)]
        types = [t for t in ENTITY_TYPES if any(t in v for v in self.survival_by_entity.values())]
        types += sorted({t for v in self.survival_by_entity.values() for t in v} - set(types))
        for t in types:
            cells = []
            for ident in self.survival_by_entity:
                c = self.survival_by_entity[ident].get(t)
                cells.append(f"{_pct(c.share)} ({c.survived}/{c.total})" if c and c.total else "–")
            out.append(f"| {t} | " + " | ".join(cells) + " |")
        out += ["", f"Kind kept (tagger: {self.tagger}; baseline seed {self.seed}), by the old value's label:", "",
                "| old label | judged | kept | share | baseline share |", "| --- | ---: | ---: | ---: | ---: |"]
        for label, c in sorted(self.kind_by_label.items(), key=lambda kv: -kv[1].judged):
            out.append(f"| {label} | {c.judged} | {c.agree} | {_pct(c.share)} | {_pct(c.baseline_share)} "
                       f"({c.baseline_agree}/{c.baseline_judged}) |")
        out.append(f"| **all** | {self.kind.judged} | {self.kind.agree} | {_pct(self.kind.share)} | "
                   f"{_pct(self.kind.baseline_share)} ({self.kind.baseline_agree}/{self.kind.baseline_judged}) |")
        if self.kind_skipped:
            out += ["", "Not judged: " + ", ".join(f"{k} {v}" for k, v in sorted(self.kind_skipped.items())) + "."]
        disagreements = [(k, v) for k, v in self.kind_pairs.items() if k.split("->")[0] != k.split("->")[1]]
        if disagreements:
            top = sorted(disagreements, key=lambda kv: (-kv[1], kv[0]))[:10]
            out += ["", "Most frequent label changes (old->new): " + ", ".join(f"{k} {v}" for k, v in top) + "."]
        if self.examples:
            out += ["", "Replaced QUASI mentions (random sample):", "",
                    "| doc | type | original | sanitized |", "| --- | --- | --- | --- |"]
            for ex in self.examples:
                out.append(f"| {ex['doc_id']} | {ex['entity_type']} | {_md(ex['original'])} | {_md(ex['sanitized'])} |")
        if self.kind_disagreements:
            out += ["", "Replacements whose label the tagger reads differently (random sample):", "",
                    "| doc | type | labels | original | sanitized |", "| --- | --- | --- | --- | --- |"]
            for ex in self.kind_disagreements:
                out.append(f"| {ex['doc_id']} | {ex['entity_type']} | {ex['labels']} | {_md(ex['original'])} "
                           f"| {_md(ex['sanitized'])} |")
        return "\n".join(out)


def _r(x: float, nd: int = 4) -> float | None:
    return None if x != x else round(x, nd)


def _pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f} %"


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------
def choose_annotator(doc: TabDocument, annotator: str | None) -> str | None:
    """``annotator`` if given and present, else the document's first annotator (file order)."""
    if annotator is not None:
        return annotator if annotator in doc.annotations else None
    return next(iter(doc.annotations), None)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _locate(starts: list[int], offset: int) -> int:
    import bisect

    return bisect.bisect_right(starts, offset) - 1


@dataclass
class _Mention:
    doc_id: str
    mention: GoldMention
    line: int  # line index (original and sanitized)
    start: int  # offsets within the original line
    end: int
    multi_line: bool


def _context(line: str, start: int, end: int, width: int) -> str:
    left = max(0, start - width)
    right = min(len(line), end + width)
    return (("…" if left > 0 else "") + line[left:start] + "**" + line[start:end] + "**" + line[end:right]
            + ("…" if right < len(line) else ""))


class _CachedTagger:
    def __init__(self, tagger: Tagger):
        self.tagger = tagger
        self.cache: dict[str, list[tuple[int, int, str]]] = {}

    def tag(self, lines: Sequence[str]) -> None:
        todo = list(dict.fromkeys(ln for ln in lines if ln not in self.cache))
        if todo:
            for ln, ents in zip(todo, self.tagger(todo)):
                self.cache[ln] = [(int(s), int(e), str(lab)) for s, e, lab in ents]

    def __getitem__(self, line: str) -> list[tuple[int, int, str]]:
        return self.cache[line]


def spacy_tagger(nlp: Any = None, batch_size: int = 64) -> Tagger:
    """Named-entity spans of spaCy (``en_core_web_md`` through the project's loader by default)."""
    if nlp is None:
        from ..pii.spacy_model import load_spacy

        nlp = load_spacy(disable=("parser", "lemmatizer", "tagger", "attribute_ruler", "senter"))

    def tag(lines: Sequence[str]) -> list[list[tuple[int, int, str]]]:
        return [[(e.start_char, e.end_char, e.label_) for e in doc.ents]
                for doc in nlp.pipe(lines, batch_size=batch_size)]

    meta = nlp.meta
    tag.name = f"spaCy {meta.get('lang', '?')}_{meta.get('name', '?')} {meta.get('version', '?')}"  # type: ignore[attr-defined]
    return tag


def survives(form: str, text: str) -> bool:
    """Whether ``form`` is still in ``text`` as written: as whole words, so a year inside the decade it was generalized
    to ("1970" in "the 1970s") or a number inside a band does not count as left in clear."""
    return re.search(rf"(?<!\w){re.escape(form)}(?!\w)", text) is not None


def _overlapping_groups(mentions: list[tuple[int, int, int, str, GoldMention]]) -> list[list]:
    """Mentions ``(line, start, end, annotator, mention)`` grouped where they overlap on one line (transitively)."""
    groups: list[list] = []
    for item in sorted(mentions, key=lambda t: (t[0], t[1], t[2])):
        last = groups[-1] if groups else None
        if last and last[-1][0] == item[0] and item[1] < max(m[2] for m in last):
            last.append(item)
        else:
            groups.append([item])
    return groups


def score_agreement(doc: TabDocument, lines: Sequence[str], sanitized_lines: Sequence[str],
                    scores: ReleaseScores) -> None:
    """Add one aligned document to the agreement counts and R_quasi over all annotators (module docstring)."""
    starts = _line_starts(doc.text)
    annotators = set(doc.annotations)
    single_line = []
    for name, mentions in doc.annotations.items():
        for m in mentions:
            li = _locate(starts, m.start)
            if li == _locate(starts, m.end - 1):
                single_line.append((li, m.start - starts[li], m.end - starts[li], name, m))
    for group in _overlapping_groups(single_line):
        masked_by = {name for _, _, _, name, m in group if m.identifier_type in ("DIRECT", "QUASI")}
        line = group[0][0]
        forms = sorted({lines[line][s:e] for _, s, e, _, _ in group}, key=len)
        if any(m.identifier_type == "DIRECT" for *_, m in group):
            kind, form = "direct", forms[0]
        elif masked_by == annotators:
            kind, form = "agreed_quasi", forms[0]
        elif not masked_by:
            kind, form = "agreed_no_mask", forms[-1]
        else:
            kind, form = "disputed", forms[0]
        count = scores.agreement.setdefault(kind, SurvivalCount())
        count.total += 1
        count.survived += survives(form, sanitized_lines[line])
    entities: dict[tuple[str, str], bool] = {}
    for li, s, e, name, m in single_line:
        if m.identifier_type == "QUASI":
            key = (name, m.entity_id)
            entities[key] = entities.get(key, False) or survives(lines[li][s:e], sanitized_lines[li])
    scores.r_quasi_all.total += len(entities)
    scores.r_quasi_all.survived += sum(entities.values())


def judge_by_gold_type(candidates: Sequence[tuple[_Mention, LineDiff, tuple[int, int], set[str]]],
                       all_mentions: Sequence[_Mention], cached: _CachedTagger, seed: int,
                       scores: ReleaseScores) -> None:
    """Kind kept by gold type (module docstring): places by containment, the rest by the tagger on the mentions it
    reads consistently with their gold type; baseline: a random value of the same gold type from another document."""
    cached.tag([diff.old for _, diff, _, _ in candidates] + [diff.new for _, diff, _, _ in candidates])
    pool: dict[str, list[tuple[str, str]]] = {}
    for dm in all_mentions:
        pool.setdefault(dm.mention.entity_type, []).append((dm.doc_id, dm.mention.span_text))
    pools = {t: sorted(set(v)) for t, v in pool.items()}
    rng = random.Random(seed)
    baseline: list[tuple[set[str], str, int, int]] = []
    for dm, diff, (ns, ne), context in candidates:
        gold_type, labels = dm.mention.entity_type, CONSISTENT_LABELS.get(dm.mention.entity_type, set())
        verdict = containment(dm.mention.span_text, diff.new[ns:ne], context) if gold_type == "LOC" else None
        if verdict in ("contained", "place_not_container", "place_unconfirmed"):
            scores.place_generalizations[verdict] = scores.place_generalizations.get(verdict, 0) + 1
            agree = verdict == "contained"
        elif best_label(cached[diff.old], dm.start, dm.end) in labels:
            agree = best_label(cached[diff.new], ns, ne) in labels
        else:
            continue
        scores.kind_gold.judged += 1
        scores.kind_gold.agree += agree
        choices = [text for doc_id, text in pools.get(gold_type, []) if doc_id != dm.doc_id
                   and text != dm.mention.span_text]
        if choices:
            value = rng.choice(choices)
            baseline.append((labels, diff.old[:dm.start] + value + diff.old[dm.end:], dm.start, dm.start + len(value)))
    cached.tag([line for _, line, _, _ in baseline])
    for labels, line, s, e in baseline:
        scores.kind_gold.baseline_judged += 1
        scores.kind_gold.baseline_agree += best_label(cached[line], s, e) in labels


def evaluate_release(
    documents: Sequence[TabDocument],
    sanitized: Mapping[str, str] | Sequence[tuple[str, str]],
    tagger: Tagger | None = None,
    annotator: str | None = None,
    seed: int = 0,
    examples: int = 0,
    example_context: int = 40,
) -> ReleaseScores:
    """Score sanitized texts (``{doc_id: text}``, or ``(doc_id, text)`` pairs in output order, which lets
    duplicates be reported) against the gold ``documents``; ``annotator`` None = each document's first."""
    pairs = list(sanitized.items()) if isinstance(sanitized, Mapping) else list(sanitized)
    out_text: dict[str, str] = {}
    duplicates: list[str] = []
    for doc_id, text in pairs:
        if doc_id in out_text and doc_id not in duplicates:
            duplicates.append(doc_id)
        out_text[doc_id] = text  # the last copy wins (a duplicate is reported either way)
    gold_ids = {d.doc_id for d in documents}
    scores = ReleaseScores(annotator=annotator or "first of each document", seed=seed,
                           n_gold_documents=len(documents), n_output_documents=len(out_text),
                           extra_documents=sorted(set(out_text) - gold_ids), duplicate_documents=duplicates)
    for ident in IDENTIFIER_TYPES:
        scores.survival[ident] = SurvivalCount()
        scores.survival_by_entity[ident] = {}
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    # ---- alignment, survival, replacements ------------------------------------------------------
    all_mentions: list[_Mention] = []  # every chosen-annotator mention of every gold doc (baseline pool)
    orig_lines: dict[str, list[str]] = {}
    new_lines: dict[str, list[str]] = {}
    candidates: list[tuple[_Mention, LineDiff, tuple[int, int]]] = []
    replaced_quasi: list[tuple[_Mention, LineDiff, tuple[int, int]]] = []
    gold_candidates: list[tuple[_Mention, LineDiff, tuple[int, int], set[str]]] = []
    for doc in documents:
        name = choose_annotator(doc, annotator)
        mentions = doc.annotations.get(name, []) if name is not None else []
        lines = doc.text.split("\n")
        orig_lines[doc.doc_id] = lines
        starts = _line_starts(doc.text)
        doc_mentions = []
        for m in mentions:
            li, lj = _locate(starts, m.start), _locate(starts, m.end - 1)
            doc_mentions.append(_Mention(doc.doc_id, m, li, m.start - starts[li], m.end - starts[li], li != lj))
        all_mentions.extend(doc_mentions)
        if doc.doc_id not in out_text:
            scores.missing_documents.append(doc.doc_id)
            scores.excluded_mentions += len(doc_mentions)
            continue
        sanitized_lines = out_text[doc.doc_id].split("\n")
        if len(sanitized_lines) != len(lines):
            scores.misaligned_documents.append(doc.doc_id)
            scores.excluded_mentions += len(doc_mentions)
            continue
        new_lines[doc.doc_id] = sanitized_lines
        scores.n_scored_documents += 1
        score_agreement(doc, lines, sanitized_lines, scores)
        context: set[str] | None = None
        diffs: dict[int, LineDiff] = {}
        for dm in doc_mentions:
            m = dm.mention
            ident = m.identifier_type
            if ident not in scores.survival:
                scores.survival[ident] = SurvivalCount()
                scores.survival_by_entity[ident] = {}
            by_type = scores.survival_by_entity[ident].setdefault(m.entity_type, SurvivalCount())
            lj = _locate(starts, m.end - 1)
            if dm.multi_line:
                survived = survives(m.span_text, "\n".join(sanitized_lines[dm.line:lj + 1]))
                unchanged = "\n".join(lines[dm.line:lj + 1]) == "\n".join(sanitized_lines[dm.line:lj + 1])
            else:
                survived = survives(m.span_text, sanitized_lines[dm.line])
                unchanged = False
            diff = None
            if not dm.multi_line:
                diff = diffs.get(dm.line)
                if diff is None:
                    diff = diffs[dm.line] = LineDiff(lines[dm.line], sanitized_lines[dm.line])
                changed, replaced = diff.touched(dm.start, dm.end)
                unchanged = not changed
            for c in (scores.survival[ident], by_type):
                c.total += 1
                c.survived += survived
                c.unchanged += unchanged
            # ---- candidates for the kind judgement ----
            if diff is None:
                if not unchanged:
                    skip("multi_line")
                continue
            if not replaced:
                if changed:
                    skip("changed_without_replace")
                continue
            new_span = diff.map_span(dm.start, dm.end)
            if new_span is None or new_span[0] >= new_span[1]:
                skip("changed_without_replace")
                continue
            if ident == "QUASI":
                replaced_quasi.append((dm, diff, new_span))
            if ident == "DIRECT":
                skip("direct")
                continue
            if is_placeholder(diff.new[new_span[0]:new_span[1]]):
                skip("placeholder")
                continue
            if is_common_phrase(diff.new[new_span[0]:new_span[1]]):
                skip("generalized_phrase")
                continue
            if context is None:
                context = countries_named(doc.text)
            gold_candidates.append((dm, diff, new_span, context))
            if is_country_generalization(dm.mention.span_text, diff.new[new_span[0]:new_span[1]]):
                skip("generalized_to_country")
                continue
            candidates.append((dm, diff, new_span))

    # ---- kind kept ------------------------------------------------------------------------------
    if tagger is None and (candidates or gold_candidates):
        tagger = spacy_tagger()
    scores.tagger = getattr(tagger, "name", getattr(tagger, "__name__", type(tagger).__name__)) if tagger else ""
    cached = _CachedTagger(tagger) if tagger else None
    if candidates:
        pool_lines = [orig_lines[dm.doc_id][dm.line] for dm in all_mentions if not dm.multi_line]
        cached.tag(pool_lines + [diff.new for _, diff, _ in candidates])
        pool: dict[str, set[str]] = {}
        for dm in all_mentions:
            if dm.multi_line:
                continue
            label = best_label(cached[orig_lines[dm.doc_id][dm.line]], dm.start, dm.end)
            if label is not None:
                pool.setdefault(label, set()).add(dm.mention.span_text)
        pools = {label: sorted(texts) for label, texts in pool.items()}
        rng = random.Random(seed)
        judged: list[tuple[str, str, bool]] = []  # (old label, new label, consistent)
        disagreeing: list[tuple[_Mention, LineDiff, tuple[int, int], str]] = []
        baseline: list[tuple[str, str, int, int]] = []  # (old label, line, start, end)
        for dm, diff, (ns, ne) in candidates:
            old_label = best_label(cached[diff.old], dm.start, dm.end)
            if old_label is None:
                skip("old_value_untagged")
                continue
            new_label = best_label(cached[diff.new], ns, ne) or NO_ENTITY
            consistent = old_label in CONSISTENT_LABELS.get(dm.mention.entity_type, set())
            judged.append((old_label, new_label, consistent))
            if old_label != new_label:
                disagreeing.append((dm, diff, (ns, ne), f"{old_label}->{new_label}"))
            choices = [t for t in pools.get(old_label, []) if t != dm.mention.span_text]
            if not choices:
                skip("baseline_no_other_value")
                continue
            value = rng.choice(choices)
            line = diff.old[:dm.start] + value + diff.old[dm.end:]
            baseline.append((old_label, line, dm.start, dm.start + len(value), consistent))
        cached.tag([b[1] for b in baseline])
        for old_label, new_label, consistent in judged:
            agree = old_label == new_label
            counts = [scores.kind, scores.kind_by_label.setdefault(old_label, KindCount())]
            for c in counts + ([scores.kind_consistent] if consistent else []):
                c.judged += 1
                c.agree += agree
            key = f"{old_label}->{new_label}"
            scores.kind_pairs[key] = scores.kind_pairs.get(key, 0) + 1
        for old_label, line, s, e, consistent in baseline:
            agree = (best_label(cached[line], s, e) or NO_ENTITY) == old_label
            counts = [scores.kind, scores.kind_by_label.setdefault(old_label, KindCount())]
            for c in counts + ([scores.kind_consistent] if consistent else []):
                c.baseline_judged += 1
                c.baseline_agree += agree
        if examples > 0 and disagreeing:
            rng = random.Random(seed)
            for dm, diff, (ns, ne), labels in rng.sample(disagreeing, min(examples, len(disagreeing))):
                scores.kind_disagreements.append({
                    "doc_id": dm.doc_id, "entity_type": dm.mention.entity_type, "labels": labels,
                    "original": _context(diff.old, dm.start, dm.end, example_context),
                    "sanitized": _context(diff.new, ns, ne, example_context)})
    if gold_candidates:
        judge_by_gold_type(gold_candidates, all_mentions, cached, seed, scores)
    scores.kind_skipped = skipped

    # ---- examples -----------------------------------------------------------------------------
    if examples > 0 and replaced_quasi:
        rng = random.Random(seed)
        for dm, diff, (ns, ne) in rng.sample(replaced_quasi, min(examples, len(replaced_quasi))):
            scores.examples.append({
                "doc_id": dm.doc_id,
                "entity_type": dm.mention.entity_type,
                "original": _context(diff.old, dm.start, dm.end, example_context),
                "sanitized": _context(diff.new, ns, ne, example_context),
            })
    return scores
