"""Synthesis runs and the λ calibration (paper 003 §5.3).

``synthesize`` fits the chain at one λ-ratio R and draws M copies: the first is the release, all M enter
the pMSE ratio (§4.1) and the per-field agreement with the true values. ``calibrate`` walks a log-spaced path
of R from 1 down to ``min_ratio`` (the paper: 100 values down to λ_max / 1000; here ``points`` of them) and
picks the R whose mean pMSE ratio is closest to 1; a ratio below 1 at the chosen point is flagged
(over-fitting: the release reproduces the true values).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .consistency import allowed_levels
from .model import SequentialSynthesizer, TextFeatures
from .pmse import PMSE, pmse_ratio

__all__ = ["Calibration", "SynthesisRun", "agreement", "calibrate", "lambda_path", "synthesize"]


def agreement(true: Sequence[str], synthetic: Sequence[str]) -> float:
    """Share of records whose synthetic value equals the true one."""
    return float(np.mean(np.asarray(true, dtype=object) == np.asarray(synthetic, dtype=object)))


def marginal_agreement(true: Sequence[str]) -> float:
    """Expected agreement of draws from the empirical marginal: sum_k p̄_k^2 (the target at R = 1)."""
    _, counts = np.unique(np.asarray(true, dtype=object).astype(str), return_counts=True)
    p = counts / counts.sum()
    return float(np.sum(p ** 2))


@dataclass
class SynthesisRun:
    synthesizer: SequentialSynthesizer
    copies: list[dict[str, list[str]]]              # copies[0] is the release
    probabilities: list[dict[str, np.ndarray]]
    pmse: PMSE
    agreement: dict[str, float]                      # mean over copies
    marginal_agreement: dict[str, float]
    restricted: dict[str, int]                       # draws the consistency rule restricted

    def report(self) -> dict:
        fields = self.synthesizer.summary()["fields"]
        return {"lambda_ratio": self.synthesizer.lambda_ratio,
                "lambda": {f: v["lambda"] for f, v in fields.items()},
                "lambda_max": {f: v["lambda_max"] for f, v in fields.items()},
                **self.pmse.as_dict(), "copies": len(self.copies),
                "agreement": self.agreement, "marginal_agreement": self.marginal_agreement,
                "restricted_by_text": self.restricted,
                "limit": "R >= 1 draws each field from its empirical marginal distribution (intercept kept), not uniformly",
                "model": {"vocabulary": self.synthesizer.text.vocabulary_size, "fields": fields}}


def synthesize(texts: Sequence[str], values: Mapping[str, Sequence[str]], fields: Sequence[str], lambda_ratio: float,
               seed: int = 0, copies: int = 1, projections: int = 20,
               surface_forms: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
               consistent: bool = True) -> SynthesisRun:
    """Fit at R = ``lambda_ratio`` and draw ``copies`` synthetic copies of ``fields`` (§2.3-2.4)."""
    synthesizer = SequentialSynthesizer(tuple(fields), lambda_ratio).fit(texts, {f: values[f] for f in fields})
    levels = {f: lv.tolist() for f, lv in synthesizer.levels().items()}
    allowed = allowed_levels(texts, levels, surface_forms) if consistent else None
    rng = np.random.default_rng(seed)
    drawn = [synthesizer.sample(texts, rng, allowed) for _ in range(copies)]
    real = {f: [str(v) for v in values[f]] for f in fields}
    text_matrix = synthesizer.text.transform(texts)
    score = pmse_ratio(text_matrix, real, [c for c, _ in drawn], levels, projections=projections, seed=seed)
    return SynthesisRun(
        synthesizer, [c for c, _ in drawn], [p for _, p in drawn], score,
        {f: float(np.mean([agreement(real[f], c[f]) for c, _ in drawn])) for f in fields},
        {f: marginal_agreement(real[f]) for f in fields},
        {f: sum(1 for a in allowed[f] if a) for f in fields} if allowed else {f: 0 for f in fields})


def lambda_path(points: int, min_ratio: float = 1e-3) -> np.ndarray:
    """R from 1 down to ``min_ratio``, log-spaced (the paper's grid, §3.3)."""
    if points < 2 or not 0 < min_ratio < 1:
        raise ValueError("points >= 2 and 0 < min_ratio < 1")
    return np.geomspace(1.0, min_ratio, points)


@dataclass
class Calibration:
    path: list[dict]            # per R: the run's report without the model
    chosen: dict

    def as_dict(self) -> dict:
        return {"chosen": self.chosen, "path": self.path,
                "overfit_warning": self.chosen["pmse_ratio"] < 1.0}


def calibrate(texts: Sequence[str], values: Mapping[str, Sequence[str]], fields: Sequence[str],
              ratios: Sequence[float], seed: int = 0, copies: int = 5, projections: int = 10,
              surface_forms: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
              consistent: bool = True) -> Calibration:
    """The R on the path whose mean pMSE ratio is closest to 1 (§5.3)."""
    path = []
    for ratio in ratios:
        run = synthesize(texts, values, fields, float(ratio), seed, copies, projections, surface_forms, consistent)
        entry = {k: v for k, v in run.report().items() if k != "model"}
        entry["nonzero_coefficients"] = {m.name: m.nonzero for m in run.synthesizer.models}
        path.append(entry)
    chosen = min(path, key=lambda e: abs(e["pmse_ratio"] - 1.0))
    return Calibration(path, chosen)
