"""Which sense of a polysemous term to generalize (paper 002 §4.2).

* ``first``: WordNet's most frequent sense (``index.noun`` order), the paper's base method;
* ``embedding``: the sense whose gloss embeds nearest the term's context (digest §7 item 6); when the best two
  senses are closer than a margin the choice is not trusted and the term goes to
* ``common``: Alg. 2 (Common_Terms_Search), a hypernym shared by several senses, so the shown node is true of
  whichever sense was meant.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .graph import HypernymGraph

Encode = Callable[[list[str]], np.ndarray]  # texts -> unit rows (anonstream.embedding.Embedder.encode)
SENSE_METHODS = ("first", "embedding", "common")


@dataclass(frozen=True)
class SenseChoice:
    node: int                 # the sense whose path is searched
    method: str               # "only" (one sense), "first", "embedding", or "common" (Alg. 2 applies after)
    margin: float | None      # cosine of the best gloss minus the second best (embedding only)


def gloss_text(graph: HypernymGraph, node: int) -> str:
    """What is embedded for a sense: its words and gloss ("influenza, flu, grippe: an acute febrile ...")."""
    words = ", ".join(w.replace("_", " ") for w in graph.lemmas[node])
    return f"{words}: {graph.glosses[node]}" if graph.glosses[node] else words


def choose_sense(graph: HypernymGraph, senses: Sequence[int], method: str = "first", context: str | None = None,
                 encode: Encode | None = None, min_margin: float = 0.05) -> SenseChoice:
    """The sense of a term among ``senses`` (most frequent first). ``embedding`` compares ``context`` with each
    sense's gloss by cosine; a margin below ``min_margin`` turns the choice into ``common``."""
    if method not in SENSE_METHODS:
        raise ValueError(f"sense method must be one of {', '.join(SENSE_METHODS)}")
    if len(senses) == 1:
        return SenseChoice(senses[0], "only", None)
    if method == "first":
        return SenseChoice(senses[0], "first", None)
    if method == "common":
        return SenseChoice(senses[0], "common", None)
    if encode is None or not context:
        raise ValueError("embedding sense choice needs an encoder and a context")
    vectors = _encode_cached(encode, (context,) + tuple(gloss_text(graph, s) for s in senses))
    similarity = vectors[1:] @ vectors[0]
    order = np.argsort(-similarity, kind="stable")
    margin = float(similarity[order[0]] - similarity[order[1]])
    best = senses[int(order[0])]
    return SenseChoice(best, "embedding" if margin >= min_margin else "common", margin)


@functools.lru_cache(maxsize=4096)
def _encode_one(encode: Encode, text: str) -> np.ndarray:
    return np.asarray(encode([text])[0], dtype=np.float32)


def _encode_cached(encode: Encode, texts: tuple[str, ...]) -> np.ndarray:
    """Embeddings of ``texts``, each computed once per encoder (glosses repeat across values)."""
    return np.stack([_encode_one(encode, t) for t in texts])


def common_term(graph: HypernymGraph, paths: Sequence[Sequence[int]], min_volume: int) -> int:
    """Alg. 2 (Common_Terms_Search): over the lower half of each sense's path (levels 1..|h|/2, away from
    near-root terms such as "entity"), the node that lies on the most sense paths (at least two) and whose
    volume is at least ``min_volume`` (the privacy level the search chose); the first such node on the most
    frequent sense's path wins ties. None found: the root of the first path (§4.2.2)."""
    on_paths = [set(p) for p in paths]
    coverage: dict[int, set[int]] = {}  # the paper's T: node -> senses it was found for
    for i, path in enumerate(paths):
        others = set().union(*(s for k, s in enumerate(on_paths) if k != i))
        for node in path[1:len(path) // 2 + 1]:
            if node in others and graph.volume(node) >= min_volume:
                coverage.setdefault(node, set()).add(i)
    best, count = paths[0][-1], 0
    for node, senses in coverage.items():
        if len(senses) > count:
            best, count = node, len(senses)
    return best
