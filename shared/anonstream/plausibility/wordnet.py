"""The WordNet 3.0 noun hypernym graph, read from the dictionary folder of Debian ``wordnet-base``
(``anonstream.pii.wordnet.wordnet_dir()``: ``ANONSTREAM_WORDNET_DIR``, ``$WNHOME/dict``, ``/usr/share/wordnet``).

nltk's reader needs the ``lexnames`` file Debian does not ship, so this reads ``data.noun`` (synsets, their
``@``/``@i`` hypernym and ``~``/``~i`` hyponym pointers, glosses) and ``index.noun`` (a lemma's senses, most
frequent first) directly, per the wndb(5) format. Synset names follow nltk's ``lemma.n.NN``: the first lemma
and its sense number in ``index.noun``.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from ..pii.wordnet import wordnet_dir
from .graph import HypernymGraph

HYPERNYM_POINTERS = ("@", "@i")
HYPONYM_POINTERS = ("~", "~i")


class WordNetNouns:
    """Noun synsets as a ``HypernymGraph`` plus the lemma → senses index."""

    def __init__(self, graph: HypernymGraph, senses: dict[str, tuple[int, ...]]):
        self.graph = graph
        self._senses = senses

    def senses(self, term: str) -> tuple[int, ...]:
        """Node ids of ``term``'s noun senses, most frequent first; a regular plural falls back to its singular
        ("leukemias"); () when WordNet has no such noun."""
        key = "_".join(term.strip().lower().split()).replace("‑", "-")
        found = self._senses.get(key)
        if found is None:
            for suffix, replacement in (("ies", "y"), ("ses", "s"), ("es", ""), ("s", "")):
                if key.endswith(suffix) and (found := self._senses.get(key[: len(key) - len(suffix)] + replacement)):
                    break
        return found or ()

    def node(self, name: str) -> int:
        """The node of a synset name ("state_capital.n.01")."""
        lemma, _, number = name.rsplit(".", 2)
        return self._senses[lemma][int(number) - 1]


def parse(data_lines, index_lines) -> WordNetNouns:
    """A ``WordNetNouns`` from the lines of ``data.noun`` and ``index.noun`` (license lines start with two
    spaces)."""
    offsets: list[int] = []
    words: list[tuple[str, ...]] = []
    glosses: list[str] = []
    up: list[list[int]] = []
    down: list[list[int]] = []
    for line in data_lines:
        if line.startswith("  "):
            continue
        head, _, gloss = line.partition(" | ")
        parts = head.split()
        count = int(parts[3], 16)
        lemma_words = tuple(re.sub(r"\(.*\)$", "", parts[4 + 2 * i]) for i in range(count))
        at = 4 + 2 * count
        hypernyms, hyponyms = [], []
        for i in range(int(parts[at])):
            symbol, target = parts[at + 1 + 4 * i], int(parts[at + 2 + 4 * i])
            if symbol in HYPERNYM_POINTERS:
                hypernyms.append(target)
            elif symbol in HYPONYM_POINTERS:
                hyponyms.append(target)
        offsets.append(int(parts[0]))
        words.append(lemma_words)
        glosses.append(gloss.strip())
        up.append(hypernyms)
        down.append(hyponyms)
    node_of = {offset: i for i, offset in enumerate(offsets)}
    senses: dict[str, tuple[int, ...]] = {}
    for line in index_lines:
        if line.startswith("  "):
            continue
        parts = line.split()
        synsets, pointers = int(parts[2]), int(parts[3])
        senses[parts[0]] = tuple(node_of[int(o)] for o in parts[6 + pointers:6 + pointers + synsets])
    names = [""] * len(offsets)
    for lemma, nodes in senses.items():
        for number, n in enumerate(nodes, 1):
            if words[n][0].lower() == lemma:
                names[n] = f"{lemma}.n.{number:02d}"
    graph = HypernymGraph(parents=[tuple(node_of[o] for o in p) for p in up],
                          children=[tuple(node_of[o] for o in c) for c in down],
                          names=names, lemmas=words, glosses=glosses)
    return WordNetNouns(graph, senses)


@functools.lru_cache(maxsize=1)
def load(root: Path | None = None) -> WordNetNouns:
    """The noun graph of the WordNet folder ``root`` (default: ``wordnet_dir()``); about 82,000 synsets, read
    once per process. Raises FileNotFoundError when WordNet is missing."""
    root = root or wordnet_dir()
    if root is None:
        raise FileNotFoundError("WordNet not found: install wordnet-base (deploy/system-deps.sh) or set "
                                "ANONSTREAM_WORDNET_DIR")
    with open(root / "data.noun", encoding="latin-1") as data, open(root / "index.noun", encoding="latin-1") as index:
        return parse(data, index)
