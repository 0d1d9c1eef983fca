"""The UCI Adult regression harness of paper 004 (§4–§6): the same quasi-identifiers, sensitive attribute,
privacy models and suppression limit as the paper's ARX runs, with ARX's hand-made hierarchies (the copies
the paper's authors used) against hierarchies built here from the project's embeddings.

Settings (the paper's, from its code): QI = workclass, education, occupation, native-country; SA = income;
k-anonymity + distinct 2-diversity; suppression limit 50 %; the 32,561 training records, ``?`` included.
A ``?`` leaf missing from a manual hierarchy (workclass) gets the row ``?;?;...;*`` as the authors' copies
give occupation and native-country.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..anonymity.lattice import QuasiIdentifier, search
from .builder import build_hierarchy
from .model import ROOT, Hierarchy

COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
           "income")
QUASI_IDENTIFIERS = ("workclass", "education", "occupation", "native-country")
SENSITIVE = "income"
L_DIVERSITY = 2
SUPPRESSION_LIMIT = 0.5
MANUAL_DIR = Path("arx-hierarchies") / "clustem4ano-baseline"


def load_table(data_dir: Path, file: str = "adult.data") -> dict[str, list[str]]:
    """The columns of ``adult.data`` (fields split on ``,`` and stripped; FORMAT.md)."""
    rows = [[f.strip() for f in line.split(",")] for line in (data_dir / file).read_text().splitlines()
            if line.strip() and not line.startswith("|")]
    return {name: [r[i] for r in rows] for i, name in enumerate(COLUMNS)}


def manual_hierarchy(data_dir: Path, attribute: str, values: Sequence[str]) -> Hierarchy:
    h = Hierarchy.from_arx_csv(attribute, (data_dir / MANUAL_DIR / f"adult_hierarchy_{attribute}.csv").read_text(),
                               {"method": "manual (ARX)"})
    missing = [v for v in dict.fromkeys(values) if v not in h.paths]
    if missing:
        paths = dict(h.paths)
        for v in missing:
            paths[v] = (v,) * (h.levels - 1) + (ROOT,)
        h = Hierarchy(attribute, paths, {}, h.info)
    return h


def embedding_hierarchies(table: dict[str, list[str]], embed: Callable[[list[str]], np.ndarray], method: str,
                          ratio: float, embedding_model: str, cut: str = "count", seed: int = 0,
                          weights: str = "values") -> dict[str, Hierarchy]:
    return {a: build_hierarchy(a, Counter(table[a]), embed, method=method, ratio=ratio, cut=cut,
                               embedding_model=embedding_model, seed=seed, weights=weights)
            for a in QUASI_IDENTIFIERS}


@dataclass(frozen=True)
class BenchRow:
    k: int
    hierarchies: str  # manual | embedding
    method: str  # manual | ward | kmeans
    node: tuple[int, ...]
    records_retained: float
    c_avg: float
    achieved_k: int
    distinct_l: int | None
    records_retained_explicit: float
    c_avg_explicit: float
    evaluated: int
    lattice_size: int

    def as_dict(self) -> dict:
        return {"k": self.k, "hierarchies": self.hierarchies, "method": self.method,
                "records_retained": round(self.records_retained, 4), "c_avg": round(self.c_avg, 2),
                "achieved_k": self.achieved_k, "distinct_l": self.distinct_l,
                "records_retained_explicit": round(self.records_retained_explicit, 4),
                "c_avg_explicit": round(self.c_avg_explicit, 2), "levels": list(self.node),
                "lattice_nodes": self.lattice_size, "nodes_grouped": self.evaluated}


def bench(table: dict[str, list[str]], hierarchies: dict[str, Hierarchy], ks: Sequence[int], kind: str,
          method: str) -> list[BenchRow]:
    """One row per k: the optimal feasible node, measured under the paper's counting convention
    (``records_retained``, ``c_avg``) and with suppressed rows counted explicitly (``*_explicit``)."""
    qis = [QuasiIdentifier.from_paths(a, table[a], hierarchies[a].paths) for a in QUASI_IDENTIFIERS]
    sensitive = np.unique(table[SENSITIVE], return_inverse=True)[1]
    rows = []
    for k in ks:
        result = search(qis, k, L_DIVERSITY, sensitive, SUPPRESSION_LIMIT)
        if result.best is None:
            raise ValueError(f"no feasible generalization for k={k}")
        paper, explicit = result.best.metrics("paper"), result.best.metrics("explicit")
        rows.append(BenchRow(k, kind, method, result.best.node, paper.records_retained, paper.c_avg,
                             explicit.achieved_k, explicit.distinct_l, explicit.records_retained, explicit.c_avg,
                             result.evaluated, result.lattice_size))
    return rows
