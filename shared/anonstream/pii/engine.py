"""The pii stage's core: detection, in-document entity grouping, identifier typing, operators.

Contract used by the pii stage and the embedded runner:

* ``DocumentEntities`` (grouping.py) — per-document entity registry; chunks of one document are processed
  in order with the same registry; ``to_state()``/``from_state()`` make it JSON-able (the service keeps it
  in Redis between chunks).
* ``PseudonymStore`` — ``surrogate_for(namespace, entity_key, entity_type)`` returns a consistent surrogate;
  ``InMemoryPseudonymStore`` here, ``RedisPseudonymStore`` in ``anonstream.stores.redis_pseudonyms``.
* ``PiiEngine.detect(text, entities)`` → ``list[EntitySpan]`` (offsets into ``text``, nothing rewritten);
  ``PiiEngine.process(text, entities, pseudonyms, namespace)`` → ``(new_text, spans)`` with offsets into the
  new text; replaced spans carry ``surrogate`` (and ``text`` = the surrogate: raw PII does not leave the
  stage); spans left in clear for the swap stage have ``surrogate=None``.
* ``detect_many`` / ``process_many`` batch spaCy with ``nlp.pipe``.
* ``process_document(texts, entities, pseudonyms, namespace)`` — all chunks of one document, in order, one
  registry: detects every chunk first, then applies, so an entity's masking decision is the same in all of them
  (a name first masked in a later chunk is masked in the earlier ones too). ``process_many`` uses it when every
  text has the same registry object.

Pipeline per text: recognizers (spaCy NER, patterns, gazetteers, titles, initials, acronyms, deny list) →
span refinement (merge.py) → allow list → vetting of bare PERSON candidates (vetting.py) → overlap resolution
and mention propagation (merge.py) → grouping (grouping.py) → identifier typing per entity (policy.py; an
entity's type only goes up, DIRECT > QUASI > NO_MASK) → masking consistency (consistency.py: every whole-word
occurrence of a masked PERSON surface is masked) → operators (operators.py) on spans whose type is in
``mask_now_types`` and whose identifier type is not NO_MASK.
"""
from __future__ import annotations

import logging
import re
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..records import EntitySpan
from .address import AddressedNameRecognizer
from .aliases import LifeDatesRecognizer, stated_aliases
from . import gazetteer, wordnet
from .base import Detection, Recognizer
from .gazetteer import (
    AcronymRecognizer, GazetteerRecognizer, InitialsRecognizer, InstitutionRecognizer, LetterNameRecognizer,
    ListRecognizer, ProperPhraseRecognizer, RoleRecognizer, TitleRecognizer,
)
from .consistency import RECOGNIZER as CONSISTENCY, consistent_spans, record_masked_surfaces
from .grouping import DocumentEntities, normalize
from .keys import KeyRing
from .boundaries import extend_names, without_ordinal
from .kinds import kind_of
from .merge import (combine_adjacent, cut_at_glued_sentences, cut_at_placeholders, native_aliases,
                    propagate_mentions, refine, resolve_overlaps, split_at_line_breaks)
from .ner import SpacyNerRecognizer
from .works import WorkTitleRecognizer
from .windows import NerWindows
from .operators import Operator, OperatorContext, make_operator
from .patterns import (
    CardRecognizer, CaseNumberRecognizer, DateTimeRecognizer, EmailRecognizer, IbanRecognizer, IpRecognizer,
    MoneyRecognizer, PhoneRecognizer, QuantityRecognizer, ResultRecognizer, UrlRecognizer, ends_in_cross_reference,
    is_category_label, is_cross_reference, is_currency_code, is_inside_a_code, is_inside_a_name, is_legal_date,
    is_provision_reference,
)
from .policies import make_policy
from .policy import IdentifierPolicy, country_of, rank_max
from .vetting import (PersonVetter, VetContext, initials_as_persons, is_closed_class, is_redaction_placeholder,
                      periods_as_dates)

__all__ = [
    "DocumentEntities", "PseudonymStore", "InMemoryPseudonymStore", "PiiConfig", "PiiEngine", "PATTERN_LABELS",
]

log = logging.getLogger(__name__)
_STATE_WORDS = re.compile(r"\b(?:Government|Republic|Kingdom|State|Confederation|Federation|Authorities|Grand Duchy|Principality)\b")

# Subtypes whose placeholder label is the subtype itself ([EMAIL_1] rather than [CODE_1]).
PATTERN_LABELS = ("EMAIL", "URL", "PHONE", "IBAN", "CARD", "IP")


# ---------------------------------------------------------------------------------------------
# Pseudonym stores
# ---------------------------------------------------------------------------------------------
class PseudonymStore(ABC):
    """Maps (namespace, entity key, type) to a surrogate, the same one every time it is asked."""

    @abstractmethod
    def surrogate_for(self, namespace: str, entity_key: str, entity_type: str) -> str: ...


class InMemoryPseudonymStore(PseudonymStore):
    """Process-local store (embedded runner, tests): ``[TYPE_n]``, n allocated per (namespace, type)."""

    def __init__(self, template: str = "[{type}_{index}]"):
        self.template = template
        self._map: dict[tuple[str, str, str], str] = {}
        self._counters: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def surrogate_for(self, namespace: str, entity_key: str, entity_type: str) -> str:
        k = (namespace, entity_type, entity_key)
        with self._lock:
            got = self._map.get(k)
            if got is None:
                n = self._counters.get((namespace, entity_type), 0) + 1
                self._counters[(namespace, entity_type)] = n
                got = self.template.format(type=entity_type, index=n)
                self._map[k] = got
            return got


# A private-use code point that word processors export for the space of a symbol font ("Mr\uf020L.\uf020Wildhaber"
# in TAB's texts): the recognizers read it as the space it stands for.
_SPACE_LIKE = str.maketrans({"\uf020": " "})


# ---------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------
ALL_RECOGNIZERS = ("ner", "email", "url", "phone", "iban", "card", "ip", "case_number", "datetime", "money",
                   "quantity", "gazetteer", "title", "initials", "acronym", "institution", "letter_name", "role",
                   "proper_phrase", "life_dates", "result", "work_title", "addressed")


@dataclass
class PiiConfig:
    spacy_model: str | None = None
    # Only the NER runs: in en_core_web_md it has its own internal tok2vec, so the shared tok2vec, tagger,
    # parser, attribute_ruler and lemmatizer are skipped (about 2.3x faster than the full pipeline); the
    # recognizers need no POS tags.
    spacy_disable: tuple[str, ...] = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
    recognizers: tuple[str, ...] = ALL_RECOGNIZERS
    phone_regions: tuple[str, ...] = ("US", "GB", "DE", "FR", "DK", "PL", "TR", "NO", "SE", "IT", "ES", "NL")
    min_score: float = 0.5
    confident: float = 0.75
    cardinals: bool = True  # counted quantities from NER CARDINAL + noun ("30 hearings")
    propagate: bool = True  # other occurrences of detected names in the document are mentions too
    vet_persons: bool = True  # bare PERSON candidates that are places/common words/parts of other entities (vetting.py)
    consistent_masking: bool = True  # every whole-word occurrence of a masked PERSON surface is masked (consistency.py)
    policy: Any = "rules"  # "rules" | "voting" | {"kind": "voting", "k": 3} | {RulePolicy options}
    # Types whose mentions are replaced now (the rest stay in clear for the swap stage).
    mask_now_types: tuple[str, ...] = ("PERSON", "CODE")
    operators: dict[str, Any] = field(default_factory=lambda: {"default": "indexed"})  # label/type -> operator
    allow_list: tuple[str, ...] = ()  # phrases never reported (exact, case-insensitive)
    deny_list: dict[str, str] = field(default_factory=dict)  # phrase -> TAB type, always reported
    batch_size: int = 16
    # The NER runs only on windows of ``ner_window_context`` tokens around candidate tokens (capitalised,
    # digits, number and time words), not on the whole text (windows.py); the recognizers still get one
    # full-text Doc. Only when the enabled spaCy components are just the NER.
    ner_windows: bool = True
    ner_window_context: int = 4
    # The learned span detector (anonstream.detector, issue 15) as one more recognizer: None (off), "shipped",
    # a model directory, or {model: ..., score: ..., vet: [...]} (detector/recognizer.py).
    detector: Any = None

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> "PiiConfig":
        obj = dict(obj)
        for k in ("spacy_disable", "recognizers", "phone_regions", "mask_now_types", "allow_list"):
            if k in obj and obj[k] is not None:
                obj[k] = tuple(obj[k])
        return cls(**obj)

    @classmethod
    def load(cls, path: str) -> "PiiConfig":
        import yaml

        with open(path, encoding="utf-8") as fh:
            return cls.from_dict(yaml.safe_load(fh) or {})


def build_recognizers(config: PiiConfig) -> list[Recognizer]:
    enabled = set(config.recognizers)
    table: list[tuple[str, Any]] = [
        ("ner", lambda: SpacyNerRecognizer(cardinals=config.cardinals)),
        ("email", EmailRecognizer), ("url", UrlRecognizer),
        ("phone", lambda: PhoneRecognizer(regions=tuple(config.phone_regions))),
        ("iban", IbanRecognizer), ("card", CardRecognizer), ("ip", IpRecognizer),
        ("case_number", CaseNumberRecognizer), ("datetime", DateTimeRecognizer), ("money", MoneyRecognizer),
        ("quantity", QuantityRecognizer), ("gazetteer", GazetteerRecognizer), ("title", TitleRecognizer),
        ("initials", InitialsRecognizer), ("acronym", AcronymRecognizer), ("institution", InstitutionRecognizer),
        ("letter_name", LetterNameRecognizer), ("role", RoleRecognizer), ("proper_phrase", ProperPhraseRecognizer),
        ("life_dates", LifeDatesRecognizer), ("result", ResultRecognizer), ("work_title", WorkTitleRecognizer),
        ("addressed", AddressedNameRecognizer),
    ]
    out = [factory() for name, factory in table if name in enabled]
    if config.deny_list:
        out.append(ListRecognizer(dict(config.deny_list)))
    if config.detector:
        from ..detector.recognizer import LearnedSpanRecognizer

        out.append(LearnedSpanRecognizer.from_spec(config.detector, config.spacy_model))
    return out


def _known_forms(entities: DocumentEntities) -> dict[str, tuple[str, str | None]]:
    """Surfaces of names seen in earlier chunks of the document (for mention propagation)."""
    out: dict[str, tuple[str, str | None]] = {}
    for ent in entities.entities:
        surface = ent.get("surface")
        if surface and ent["type"] in ("PERSON", "ORG", "LOC", "MISC", "CODE") and ent.get("identifier_type") != "NO_MASK":
            out.setdefault(surface, (ent["type"], ent.get("subtype")))
    return out


# ---------------------------------------------------------------------------------------------
# Engine
# ---------------------------------------------------------------------------------------------
class PiiEngine:
    def __init__(self, nlp: Any, recognizers: Sequence[Recognizer], config: PiiConfig | None = None,
                 policy: IdentifierPolicy | None = None, keys: KeyRing | None = None):
        self.nlp = nlp
        self.recognizers = list(recognizers)
        self.config = config or PiiConfig()
        self.policy = policy or make_policy(self.config.policy)
        self.keys = keys
        self._allow = frozenset(normalize(a) for a in self.config.allow_list)
        self._vetter = PersonVetter(self.config.confident) if self.config.vet_persons else None
        self._operators: dict[str, Operator] = {k: make_operator(v) for k, v in self.config.operators.items()}
        self._windows = NerWindows(nlp, self.config.ner_window_context) if self.config.ner_windows else None
        if "default" not in self._operators:
            self._operators["default"] = make_operator("indexed")
        if self.keys is None and any(op.name == "hash" for op in self._operators.values()):
            self.keys = KeyRing.from_env(required=False)
            if self.keys.ephemeral_key:
                log.warning("ANONSTREAM_PSEUDONYM_KEY not set: the hash operator uses a random per-run key")

    @classmethod
    def from_config(cls, config: "PiiConfig | None" = None, keys: KeyRing | None = None) -> "PiiEngine":
        from .spacy_model import load_spacy

        config = config or PiiConfig()
        nlp = load_spacy(config.spacy_model, disable=config.spacy_disable)
        gazetteer.load()  # the lists typing and the policy consult: read at start, like the model
        wordnet.load()
        return cls(nlp, build_recognizers(config), config, keys=keys)

    # -- detection ---------------------------------------------------------------------------
    def detections(self, text: str, doc: Any, known: dict[str, Any] | None = None,
                   entities: DocumentEntities | None = None) -> list[Detection]:
        """All recognizers, refined spans, min-score filter, allow list, PERSON vetting, overlaps resolved.
        ``entities`` (the document's registry of earlier chunks) is evidence for the vetting."""
        found: list[Detection] = []
        for r in self.recognizers:
            found.extend(r.analyze(text, doc))
        found = [d for d in found if not (d.type in ("MISC", "ORG", "LOC") and (
            is_provision_reference(text[d.start:d.end]) or ends_in_cross_reference(text[d.start:d.end])
            or is_category_label(text[d.start:d.end]) and d.recognizer != WorkTitleRecognizer.name  # "Hamlet 2"
            or is_currency_code(text[d.start:d.end])))
            and not (d.type == "QUANTITY" and is_inside_a_code(text, d.start, d.end))
            and not (d.type in ("QUANTITY", "DATETIME") and is_inside_a_name(text, d.start, d.end))]
        for r in self.recognizers:  # a recognizer may overrule the others' detections (detector/recognizer.py)
            if hasattr(r, "vet_detections"):
                found = r.vet_detections(text, found)
        found = [d for d in refine(text, found) if d.score >= self.config.min_score and text[d.start:d.end].strip()
                 and not (d.type == "DATETIME" and is_legal_date(text, d.start, d.end))
                 and not (d.type in ("QUANTITY", "DATETIME") and is_cross_reference(text, d.start))
                 and not (d.type == "DEM" and wordnet.starts_a_term(text, d.end))
                 and not is_redaction_placeholder(text, d.start, d.end) and not is_closed_class(text[d.start:d.end])]
        found = cut_at_placeholders(text, cut_at_glued_sentences(text, found))
        if self._allow:
            found = [d for d in found if normalize(text[d.start : d.end]) not in self._allow]
        ctx = None
        if self._vetter is not None:
            ctx = VetContext.from_registry(entities)
            found = self._vetter.vet(text, found, ctx)
        dets = resolve_overlaps(found, self.config.confident)
        dets = combine_adjacent(text, resolve_overlaps(extend_names(text, dets), self.config.confident))
        extra = native_aliases(text, dets) + stated_aliases(text, dets)
        if self.config.propagate:
            extra += propagate_mentions(text, dets + extra, known)
        if extra and self._vetter is not None:
            extra = self._vetter.vet(text, extra, ctx, others=dets)
        if extra:
            dets = resolve_overlaps(dets + extra, self.config.confident)
        # a name read across a line break splits into one piece per line ("this is J.\nF.\nI think": "J.", "F.",
        # "I"); a piece may be a word or a lone initial, which the filters above saw only as part of the whole
        pieces = split_at_line_breaks(text, dets)
        if self._vetter is not None:
            pieces = periods_as_dates(text, initials_as_persons(text, pieces))
        return [d for d in cut_at_placeholders(text, pieces) if not is_closed_class(text[d.start:d.end])]

    def _to_spans(self, text: str, dets: list[Detection], entities: DocumentEntities) -> list[EntitySpan]:
        resolved = []
        for d in dets:
            surface = without_ordinal(text[d.start : d.end])
            ent = entities.resolve(d.type, surface, d.subtype, d.recognizer, following=text[d.end : d.end + 16])
            ent["surface"] = ent.get("surface") or surface
            if d.type in ("LOC", "DEM", "ORG") and ent.get("country") is None:
                ent["country"] = country_of(ent["forms"][0]) or ""
            if ent.get("country"):
                # the state as an actor ("Polish Government", "Republic of Poland") signals the document's
                # background country far more than places or nationalities do
                entities.count_country(ent["country"], 10 if _STATE_WORDS.search(surface) else 1)
            own = kind_of(d.type, d.subtype, surface, text[max(0, d.start - 16):d.start], text[d.end:d.end + 16]) \
                if "kind" not in ent or d.type == "DEM" else None
            if "kind" not in ent:  # the first mention decides the entity's kind (pii/kinds.py) ...
                ent["kind"] = own
            # ... except a demonym's: "a Finnish national" and "submissions in Finnish" are one form, a nationality
            # there and a language here (it had read "submissions in European")
            kind = own if d.type == "DEM" and "language" in (own, ent["kind"]) else ent["kind"]
            resolved.append((d, ent, kind))
        for ent in {id(e): e for _, e, _ in resolved}.values():
            ent["identifier_type"] = rank_max(ent.get("identifier_type"), self.policy.classify(ent, entities))
        spans: list[EntitySpan] = []
        for d, ent, kind in resolved:
            spans.append(
                EntitySpan(
                    start=d.start,
                    end=d.end,
                    type=d.type,
                    identifier_type=ent["identifier_type"],
                    entity_id=ent["id"],
                    text=text[d.start : d.end],
                    subtype=d.subtype,
                    kind=kind,
                    recognizer=f"{d.recognizer}/{d.rule}" if d.rule else d.recognizer,
                    score=d.score,
                )
            )
        return spans

    def make_consistent(self, text: str, spans: list[EntitySpan], entities: DocumentEntities) -> list[EntitySpan]:
        """Record this text's masked PERSON surfaces on their entities, then mask every whole-word occurrence of
        the document's masked PERSON surfaces in ``text`` (consistency.py)."""
        if not self.config.consistent_masking:
            return spans
        record_masked_surfaces(text, spans, entities, self.masks_now)
        return consistent_spans(text, spans, entities, self.masks_now)

    def _spans(self, text: str, doc: Any, entities: DocumentEntities) -> list[EntitySpan]:
        dets = self.detections(text, doc, _known_forms(entities), entities)
        return self.make_consistent(text, self._to_spans(text, dets, entities), entities)

    def spacy_docs(self, texts: list[str], batch_size: int | None = None) -> Iterable[Any]:
        """One full-text spaCy Doc per text: the NER on candidate windows (``ner_windows``) or on the whole text."""
        if self._windows is not None:
            return self._windows.docs(texts, batch_size or self.config.batch_size)
        return self.nlp.pipe(texts, batch_size=batch_size or self.config.batch_size)

    def detect(self, text: str, entities: DocumentEntities) -> list[EntitySpan]:
        return self.detect_many([text], [entities])[0]

    def detect_many(self, texts: Iterable[str], entities: Iterable[DocumentEntities],
                    batch_size: int | None = None) -> list[list[EntitySpan]]:
        """Spans per text. Space look-alikes (``_SPACE_LIKE``) are read as spaces (same offsets); the spans'
        ``text`` is the original's."""
        originals = list(texts)
        texts = [t.translate(_SPACE_LIKE) for t in originals]
        out = []
        for original, text, doc, ents in zip(originals, texts, self.spacy_docs(texts, batch_size), entities):
            spans = self._spans(text, doc, ents)
            if text != original:
                for span in spans:
                    span.text = original[span.start : span.end]
            out.append(spans)
        return out

    def explain(self, text: str, entities: DocumentEntities) -> list[dict[str, Any]]:
        """Decision trace per span: recognizer, rule, score, context words, entity and policy verdict.
        (Contains the mention text: for debugging on test data, never for logs.)"""
        doc = next(iter(self.spacy_docs([text])))
        dets = self.detections(text, doc, _known_forms(entities), entities)
        by_offsets = {(d.start, d.end): d for d in dets}
        spans = self.make_consistent(text, self._to_spans(text, dets, entities), entities)
        out = []
        for s in spans:
            ent = entities.by_id(s.entity_id) or {}
            d = by_offsets.get((s.start, s.end))
            trace = d.trace() if d is not None and s.recognizer != CONSISTENCY else {
                "recognizer": s.recognizer.split("/")[0], "rule": s.recognizer.split("/")[-1], "score": s.score,
                "context": []}
            out.append({"start": s.start, "end": s.end, "text": s.text, "type": s.type, "subtype": s.subtype,
                        "identifier_type": s.identifier_type, "entity_id": s.entity_id, **trace,
                        "policy": self.policy.trace(ent, entities) if ent else None})
        return out

    # -- rewriting ---------------------------------------------------------------------------
    @staticmethod
    def label(span: EntitySpan) -> str:
        if span.type == "CODE" and span.subtype in PATTERN_LABELS:
            return span.subtype
        return span.type

    def _operator(self, label: str, type_: str) -> Operator:
        return self._operators.get(label) or self._operators.get(type_) or self._operators["default"]

    def masks_now(self, span: EntitySpan) -> bool:
        return span.type in self.config.mask_now_types and span.identifier_type != "NO_MASK"

    def apply(self, text: str, spans: list[EntitySpan], entities: DocumentEntities, pseudonyms: PseudonymStore,
              namespace: str = "default") -> tuple[str, list[EntitySpan]]:
        """Replace the spans the policy masks now; offsets of all spans are moved into the new text."""
        pieces: list[str] = []
        out: list[EntitySpan] = []
        cursor = 0  # in the original text
        shift = 0  # new offset - original offset
        for span in sorted(spans, key=lambda s: s.start):
            orig_start, orig_end = span.start, span.end
            pieces.append(text[cursor:orig_start])
            new_text = text[orig_start:orig_end]
            if self.masks_now(span):
                ent = entities.by_id(span.entity_id)
                label = self.label(span)
                ctx = OperatorContext(label=label, entity_key=(ent or {}).get("key", f"{span.type}:{normalize(new_text)}"),
                                      namespace=namespace, pseudonyms=pseudonyms, keys=self.keys)
                op = self._operator(label, span.type)
                new_text = op.apply(new_text, ctx)
                if op.name != "keep":
                    span.surrogate = new_text
                    span.text = new_text  # the span describes the NEW text: raw PII does not leave the stage
            pieces.append(new_text)
            span.start = orig_start + shift
            span.end = span.start + len(new_text)
            shift += len(new_text) - (orig_end - orig_start)
            cursor = orig_end
            out.append(span)
        pieces.append(text[cursor:])
        return "".join(pieces), out

    def process(self, text: str, entities: DocumentEntities, pseudonyms: PseudonymStore,
                namespace: str = "default") -> tuple[str, list[EntitySpan]]:
        return self.apply(text, self.detect(text, entities), entities, pseudonyms, namespace)

    def process_document(self, texts: Iterable[str], entities: DocumentEntities, pseudonyms: PseudonymStore,
                         namespace: str = "default") -> list[tuple[str, list[EntitySpan]]]:
        """All chunks of one document, in order, with its registry: detect every chunk (each sees the entities
        of the earlier ones), then a document-level second pass — every span takes its entity's final
        identifier type (types only go up) and every chunk is made consistent with the masked PERSON surfaces
        of the whole document (a name first masked in a later chunk is masked in the earlier ones) — then apply."""
        texts = list(texts)
        detected = self.detect_many(texts, [entities] * len(texts))
        out = []
        for text, spans in zip(texts, detected):
            for s in spans:
                ent = entities.by_id(s.entity_id)
                if ent is not None and ent.get("identifier_type"):
                    s.identifier_type = rank_max(s.identifier_type, ent["identifier_type"])
            out.append(self.apply(text, self.make_consistent(text, spans, entities), entities, pseudonyms, namespace))
        return out

    def process_many(self, texts: Iterable[str], entities: Iterable[DocumentEntities], pseudonyms: PseudonymStore,
                     namespace: str = "default") -> list[tuple[str, list[EntitySpan]]]:
        """Texts with their registries. When every text has the same registry object the texts are the chunks of
        one document, in order, and go through ``process_document``; otherwise each is processed on its own."""
        texts = list(texts)
        entities = list(entities)
        if len(texts) > 1 and all(e is entities[0] for e in entities):
            return self.process_document(texts, entities[0], pseudonyms, namespace)
        detected = self.detect_many(texts, entities)
        return [self.apply(t, s, e, pseudonyms, namespace) for t, s, e in zip(texts, detected, entities)]
