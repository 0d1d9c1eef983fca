"""risk: disclosure-risk models for the audit (issue 10).

``pitman``: the Ewens-Pitman partition model of cell counts, its MLE, population uniques and the
swap risk DR (paper 000 §2.4, eq. 2.9-2.16). ``uniqueness``: population uniques by the Pitman, Zayatz and SNB
models and Dankar et al.'s rule for choosing among them (as ARX offers them). ``kanon``: k-anonymity, l-diversity and paper 003's
two-stage identification probability (eq. 7-9) over (tuple, doc_id) records.
"""
from __future__ import annotations

from .pitman import (Frequencies, PitmanFit, disclosure_risk, fit_pitman, frequencies, hessian, log_likelihood,
                     p_hat, population_uniques, sample_partition, score)

__all__ = [
    "Frequencies", "PitmanFit", "disclosure_risk", "fit_pitman", "frequencies", "hessian", "log_likelihood",
    "p_hat", "population_uniques", "sample_partition", "score",
]
