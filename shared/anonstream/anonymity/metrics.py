"""Privacy and utility of a released (generalized, partly suppressed) table (paper 004, §5.1).

D is the input, D* the released records (suppressed ones removed), 𝓔 the equivalence classes of D* over
the quasi-identifiers:

* records retained = |D*| / |D|;
* C_avg = (|D*| / |𝓔|) / k, the normalized average class size of LeFevre et al. (1 is optimal), with k the
  *achieved* k = min |E| as the paper's code uses it;
* distinct l = min over E of the number of distinct sensitive values.

``paper_convention`` reproduces how the paper's evaluation code counted suppression: it treats the
largest class of the released table (the block of all-``*`` rows counted as one class) as the suppressed
block, whether or not it is one. The paper's numbers (e.g. C_avg 12.00 at k = 30 for ARX's hierarchies)
come from that rule; ``explicit`` counts the suppressed rows themselves.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

CONVENTIONS = ("explicit", "paper")


@dataclass(frozen=True)
class ReleaseMetrics:
    records: int
    retained: int
    classes: int
    achieved_k: int
    distinct_l: int | None

    @property
    def records_retained(self) -> float:
        return self.retained / self.records if self.records else 0.0

    @property
    def c_avg(self) -> float:
        """(|D*| / |𝓔|) / k with the achieved k; 0 when nothing is released."""
        if not self.classes or not self.achieved_k:
            return 0.0
        return self.retained / self.classes / self.achieved_k

    def as_dict(self) -> dict:
        return {**asdict(self), "records_retained": round(self.records_retained, 4), "c_avg": round(self.c_avg, 2)}


def release_metrics(class_sizes: np.ndarray, class_distinct_sensitive: np.ndarray | None, suppressed: int,
                    suppressed_distinct: int = 0, convention: str = "explicit") -> ReleaseMetrics:
    """Metrics of a release whose kept classes have ``class_sizes`` (and that many distinct sensitive values
    each, when given) and whose ``suppressed`` rows (``suppressed_distinct`` distinct sensitive values) were
    replaced by ``*``."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}")
    sizes = np.asarray(class_sizes, dtype=np.int64)
    distinct = None if class_distinct_sensitive is None else np.asarray(class_distinct_sensitive, dtype=np.int64)
    records = int(sizes.sum()) + int(suppressed)
    if convention == "paper":
        # the suppressed block is one more class; the largest class is dropped as "the suppressed one"
        sizes = np.append(sizes, suppressed) if suppressed else sizes
        if distinct is not None and suppressed:
            distinct = np.append(distinct, suppressed_distinct)
        if len(sizes):
            drop = int(np.argmax(sizes))
            sizes = np.delete(sizes, drop)
            distinct = None if distinct is None else np.delete(distinct, drop)
    if not len(sizes):
        return ReleaseMetrics(records, 0, 0, 0, None if distinct is None else 0)
    return ReleaseMetrics(records=records, retained=int(sizes.sum()), classes=len(sizes),
                          achieved_k=int(sizes.min()),
                          distinct_l=None if distinct is None else int(distinct.min()))
