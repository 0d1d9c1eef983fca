"""Terms to t-plausible WordNet generalizations (paper 002), with t given as bits per term: a set of m terms is
generalized so that H(d̄) = Σ_i log2 volume(w̄_i) ≥ bits · m (t = 2^(bits·m), digest §7 item 3), at the
least uniform t-PAT cost (eq. 1) LUB + TDGS find (Alg. 4 + 6), or the exact optimum (Alg. 3) for small sets.

Uniform t-PAT is a guarantee on the set: a term may stay as it is when the others carry its share (eq. 1 only
penalizes it). ``min_term_bits`` adds a floor per term (each shown node at least 2^min_term_bits concepts, or its
root), so no term is disclosed whatever the others do. Terms WordNet does not know as nouns are suppressed (§2.1: unknown terms are likely unusual, hence identifying)
and do not count in m. ``WordNetGeneralizer`` is the release's ``wordnet`` generalizer: one value at a time, so
each value alone reaches 2^bits plausible concepts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..generalization import Generalizer
from . import wordnet
from .cost import Cost, cost, plausible
from .search import Plan, exact_search, lub_search, top_down_greedy
from .senses import Encode, choose_sense, common_term

ALGORITHMS = {"greedy": top_down_greedy, "lub": lub_search, "exact": exact_search}


@dataclass(frozen=True)
class TermGeneralization:
    term: str
    sense: str | None          # the synset of the sense generalized ("influenza.n.01"); None: unknown term
    synset: str | None         # what is shown instead ("respiratory_disease.n.01"); None: suppressed
    lemma: str | None          # its first word ("respiratory disease")
    levels_up: int             # hypernym steps from the sense (a common hypernym: from the sense's own path)
    volume: int                # plausible concepts the shown synset stands for
    bits: float                # log2 volume (Lemma 1)
    sense_method: str          # only, first, embedding, common (Alg. 2), unknown

    def as_dict(self) -> dict[str, Any]:
        return {"term": self.term, "sense": self.sense, "synset": self.synset, "lemma": self.lemma,
                "levels_up": self.levels_up, "volume": self.volume, "bits": round(self.bits, 4),
                "sense_method": self.sense_method}


@dataclass(frozen=True)
class TermsResult:
    terms: tuple[TermGeneralization, ...]
    bits_per_term: float
    min_term_bits: float       # the per-term floor (0: none)
    requested_bits: float      # log2 t = bits_per_term · m (m: known terms)
    achieved_bits: float       # H(d̄) = log2 |D(d̄)| (Lemma 2)
    plausible_texts: int       # |D(d̄)| = Π volumes
    satisfied: bool
    cost: Cost                 # eq. 1 of the shown synsets
    alpha: float
    algorithm: str

    def as_dict(self) -> dict[str, Any]:
        return {"bits_per_term": self.bits_per_term, "min_term_bits": self.min_term_bits,
                "t_requested_bits": round(self.requested_bits, 4),
                "t_achieved_bits": round(self.achieved_bits, 4), "plausible_texts": self.plausible_texts,
                "satisfied": self.satisfied, "alpha": self.alpha, "algorithm": self.algorithm,
                "cost": {"global": round(self.cost.global_, 6), "local": round(self.cost.local, 6),
                         "total": round(self.cost.total, 6)},
                "terms": [t.as_dict() for t in self.terms]}


def generalize_terms(terms: Sequence[str], bits_per_term: float, *, alpha: float = 0.5, algorithm: str = "greedy",
                     senses: str = "first", encode: Encode | None = None, context: str | None = None,
                     min_margin: float = 0.05, min_term_bits: float = 0.0,
                     nouns: wordnet.WordNetNouns | None = None) -> TermsResult:
    """Generalize ``terms`` together for t = 2^(bits_per_term · m), each term to at least 2^min_term_bits
    concepts. ``senses``: first, embedding (needs ``encode``; the context defaults to the terms themselves) or
    common (see ``senses.py``)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    nouns = nouns or wordnet.load()
    graph = nouns.graph
    known = [(i, found) for i, term in enumerate(terms) if (found := nouns.senses(term))]
    choices = [choose_sense(graph, found, senses, context or ", ".join(terms), encode, min_margin)
               for _, found in known]
    paths = [graph.path(c.node) for c in choices]
    floors = [next((j for j, v in enumerate(graph.path_volumes(p)) if math.log2(v) >= min_term_bits - 1e-9),
                   len(p) - 1) for p in paths]  # the lowest level each term may take
    log_t = bits_per_term * len(known)
    plan: Plan = ALGORITHMS[algorithm]([graph.path_volumes(p)[lo:] for p, lo in zip(paths, floors)], log_t, alpha)
    out: list[TermGeneralization | None] = [None] * len(terms)
    for (i, found), choice, path, level in zip(known, choices, paths, (lo + j for lo, j in zip(floors, plan.levels))):
        node, volume = path[level], graph.path_volumes(path)[level]
        if choice.method == "common" and level > 0:  # Alg. 2: a hypernym true of several senses
            node = common_term(graph, [graph.path(s) for s in found], volume)
            volume, level = graph.volume(node), (path.index(node) if node in path else level)
        shown = level > 0  # level 0: the term itself (a common hypernym is only sought above it)
        out[i] = TermGeneralization(terms[i], graph.names[path[0]], graph.names[node] if shown else None,
                                    graph.lemma(node) if shown else None, level, volume, math.log2(volume),
                                    choice.method)
    for i, term in enumerate(terms):
        if out[i] is None:
            out[i] = TermGeneralization(term, None, None, None, 0, 1, 0.0, "unknown")
    bits = [t.bits for t in out if t.sense is not None]
    plausible_texts = math.prod(t.volume for t in out if t.sense is not None)
    return TermsResult(tuple(out), bits_per_term, min_term_bits, log_t, sum(bits), plausible_texts,
                       plausible(bits, log_t), cost(bits, log_t, alpha), alpha, algorithm)


def lazy_encoder(model: str | None = None) -> Encode:
    """``Embedder.for_space(model).encode`` (default model: ``ANONSTREAM_EMBED_MODEL``), loaded at the first call: terms
    with a single sense never load the model."""
    from ..config import Settings
    from ..embedding import Embedder

    embedder: list[Embedder] = []

    def encode(texts: list[str]):
        if not embedder:
            settings = Settings()
            # word senses by gloss similarity were measured with MiniLM's transformer: keep its space whatever
            # backend the embed stage runs (Embedder.for_space; a static space named explicitly runs static)
            embedder.append(Embedder.for_space(model or settings.embed_model, settings.embed_batch))
        return embedder[0].encode(texts)

    return encode


class WordNetGeneralizer(Generalizer):
    """A common-noun value (an occupation, a MISC term) to its t-plausible WordNet hypernym: the lowest
    ancestor of at least 2^``bits`` concepts (one term: LUB = the optimum of eq. 1), as its first word
    ("teacher" → "educator" at 6 bits). A lower-case phrase WordNet lacks is read by its last word ("secondary
    school teacher" → "teacher"); a capitalized one is a name ("Turkish armed forces" is not any "force"). ``senses``: first or embedding (the sense nearest "<value> (<kind or category>)").
    A value WordNet does not know, a capitalized value WordNet also knows as a name ("Siemens"; "Teacher" is
    read as "teacher"), or one that cannot reach 2^bits, becomes ``fallback`` (default: the category label,
    ``[Demographic]``): names are for the swap and the pseudonyms, not for WordNet. ``otherwise``: a generalizer
    spec for those values instead (``{name: demographic}``: "Danish" → "European")."""

    name = "wordnet"

    def __init__(self, bits: float = 6.0, senses: str = "first", fallback: str | None = None,
                 model: str | None = None, otherwise: dict[str, Any] | None = None):
        from ..generalization import build_generalizer

        if senses not in ("first", "embedding"):
            raise ValueError("wordnet generalizer senses must be 'first' or 'embedding'")
        self.bits = bits
        self.senses = senses
        self.fallback = fallback
        self.model = model
        self._encoder: Encode | None = None
        self.otherwise = build_generalizer(otherwise) if otherwise else None

    def _encode(self) -> Encode | None:
        if self.senses != "embedding":
            return None
        if self._encoder is None:
            self._encoder = lazy_encoder(self.model)
        return self._encoder

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        nouns = wordnet.load()
        words = value.split()
        for candidate in (value, words[-1] if len(words) > 1 and value[:1].islower() else None):
            found = nouns.senses(candidate) if candidate else ()
            if found and value[:1].isupper() and any(w[:1].isupper() for s in found for w in nouns.graph.lemmas[s]):
                break  # a capitalized value WordNet knows as a name ("Siemens": the engineer, or the unit?)
            if found:
                result = generalize_terms([candidate], self.bits, senses=self.senses, encode=self._encode(),
                                          context=f"{value} ({kind or category})", nouns=nouns)
                term = result.terms[0]
                if result.satisfied and term.lemma:
                    return term.lemma
                break
        if self.otherwise is not None:
            return self.otherwise.generalize(value, category, kind, country)
        return self.fallback or f"[{category}]"
