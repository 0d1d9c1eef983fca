"""A hypernym hierarchy as a DAG of nodes (WordNet synsets, or the small trees of the tests).

Volume (paper 002 §3.1 leaves its definition open; digest §2.2): the number of distinct nodes in the hyponym
closure of a node, the node itself included: every concept an adversary who sees the node must consider as the
original. It grows strictly up any path, the property Alg. 1-6 rely on. A term shown as itself has volume 1
(``path_volumes``), whatever it subsumes: its value is disclosed.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class HypernymGraph:
    """``parents[n]`` / ``children[n]``: hypernyms / hyponyms of node n (instance links included), in the
    order of the source; ``names[n]``: a unique readable id ("diabetes.n.01"); ``lemmas[n]``: its words."""

    parents: list[tuple[int, ...]]
    children: list[tuple[int, ...]]
    names: list[str]
    lemmas: list[tuple[str, ...]]
    glosses: list[str] = field(default_factory=list)
    _volumes: dict[int, int] = field(default_factory=dict, repr=False)

    @classmethod
    def from_parents(cls, parents: list[tuple[int, ...]], names: list[str] | None = None,
                     lemmas: list[tuple[str, ...]] | None = None, glosses: list[str] | None = None) -> HypernymGraph:
        children: list[list[int]] = [[] for _ in parents]
        for node, ps in enumerate(parents):
            for p in ps:
                children[p].append(node)
        names = names or [f"n{i}" for i in range(len(parents))]
        return cls(parents=[tuple(p) for p in parents], children=[tuple(c) for c in children], names=names,
                   lemmas=lemmas or [(name,) for name in names], glosses=glosses or [""] * len(parents))

    def __len__(self) -> int:
        return len(self.parents)

    def volume(self, node: int) -> int:
        """Distinct nodes in the hyponym closure of ``node``, itself included (cached)."""
        cached = self._volumes.get(node)
        if cached is None:
            seen = {node}
            todo = [node]
            while todo:
                for child in self.children[todo.pop()]:
                    if child not in seen:
                        seen.add(child)
                        todo.append(child)
            cached = self._volumes[node] = len(seen)
        return cached

    def path(self, node: int) -> list[int]:
        """``node`` then its ancestors up to a root, along a shortest hypernym chain (WordNet nouns form a DAG;
        digest §6.2): breadth-first upward, parents in source order, so the choice is deterministic."""
        previous = {node: -1}
        queue = deque([node])
        while queue:
            current = queue.popleft()
            if not self.parents[current]:
                chain = [current]
                while previous[chain[-1]] != -1:
                    chain.append(previous[chain[-1]])
                return chain[::-1]
            for parent in self.parents[current]:
                if parent not in previous:
                    previous[parent] = current
                    queue.append(parent)
        raise ValueError(f"node {node} reaches no root (a hypernym cycle)")

    def path_volumes(self, path: list[int]) -> list[int]:
        """Volumes along a term's path: 1 for the term itself (shown as is), then each ancestor's volume."""
        return [1] + [self.volume(n) for n in path[1:]]

    def lemma(self, node: int) -> str:
        """The node's first word, readable ("state capital")."""
        return self.lemmas[node][0].replace("_", " ")
