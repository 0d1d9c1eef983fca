"""``plan-release``: replay a corpus through candidate releases and choose one (paper 000 §2.3, §3.2).

Writes ``DIR/frontier.json`` (a list, one object per candidate), ``DIR/plan.json`` (the run: the choice
rule, the prefix's numbers, timings, the Table-1 figures per category set J) and ``DIR/frontier.png``.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Callable

from .. import serde
from ..config import Settings
from .candidates import Candidate
from .frontier import choose, frontier_mask
from .measures import LABELS, RISK_MEASURES, du_note, risk_measure, separation
from .plot import plot_frontier
from .replay import CandidateResult, EmbeddingCache, progress_bar, replay, run_prefix

log = logging.getLogger(__name__)

_RISK_FIELDS = ("n", "sample_uniques_before", "s1_over_n", "swapped_uniques", "swapped_unique_share",
                "uniques_kept_share", "theta", "alpha", "boundary", "population", "p_hat", "dr", "classes_before",
                "k", "population_uniqueness")


def attack_function(train_path: str | Path, test_path: str | Path, label_key: str = "ticker",
                    lines_per_chunk: int = 5, seed: int = 0) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
    """Accuracy of the re-identification attack (``attack.harness``) on one candidate's sanitized documents:
    trained on ``train_path``, tested on ``test_path`` before and after (paired by doc_id)."""
    from ..attack.harness import load_documents, run_attack, to_docs

    train = load_documents(train_path, label_key)
    test = load_documents(test_path, label_key)

    def attack(documents: list[dict[str, Any]]) -> dict[str, Any]:
        result = run_attack(train, test, to_docs(documents, label_key), lines_per_chunk=lines_per_chunk,
                            label_key=label_key, seed=seed, count_proper_nouns=lambda texts: 0)
        out: dict[str, Any] = {"paired_documents": len(result.alignment.paired), "attackers": {}}
        for name, r in result.attackers.items():
            out["attackers"][name] = {
                "paired_chunks": r.paired_chunks, "accuracy_before": r.accuracy_before_paired,
                "accuracy_after": r.accuracy_after, "relative_drop": r.relative_drop,
                "mcnemar_p": None if r.mcnemar is None else r.mcnemar.p_value}
        return out

    return attack


def candidate_row(result: CandidateResult) -> dict[str, Any]:
    """One frontier.json object (``frontier`` / ``optimal`` filled in later)."""
    attack = result.attack
    terms = result.utility
    return {
        "name": result.candidate.name,
        "release": result.candidate.describe(),
        "DR": result.dr,
        "DU": result.du,
        "DU_eq_2_19": None if terms is None or terms.loglik_before == 0 else terms.loglik_after / terms.loglik_before,
        "DU_note": du_note(None if terms is None else terms.as_dict()),
        "share_changed": result.share_changed,
        "attack_accuracy": None if attack is None else
        {name: a["accuracy_after"] for name, a in attack["attackers"].items()},
        "frontier": False,
        "optimal": False,
        "risk": {k: result.risk.get(k) for k in _RISK_FIELDS},
        "utility": None if terms is None else terms.as_dict(),
        "attack": attack,
        "chunks": result.chunks,
        "changed_chunks": result.changed,
        "actions": result.actions,
        "documents_out": result.documents_out,
        "dead_letters": result.dead_letters,
        "seconds": round(result.seconds, 3),
        "embed_seconds": round(result.embed_seconds, 3),
    }


def noise_statement(risk: str, noise: dict[str, Any], names: list[str], chosen: str | None) -> str:
    """One plain sentence: does the named measure separate the candidates (``measures`` defines noise)?"""
    label = LABELS[risk]
    if noise["pairs"] == 0:
        return f"{label} is defined for fewer than two candidates: it cannot separate them"
    if not noise["any_separated"]:
        return (f"the candidates' {label} do not differ beyond noise ({noise['z']:g} standard errors): "
                f"the choice rests on DU alone")
    tied = [names[i] for i in noise["tied_with_chosen"]]
    head = f"{label} separates {noise['pairs_separated']} of {noise['pairs']} pairs of candidates"
    if chosen is not None and tied:
        return f"{head}; {chosen} is within noise of {', '.join(tied)}"
    return head


def table1(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Paper 000 Table 1 per category set J: theta_hat, alpha_hat, s1/n of the before-table z_J (it depends on
    J only, not on r; the first candidate of each J gives it)."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        J = tuple(row["release"]["J"])
        if J not in out:
            risk = row["risk"]
            out[J] = {"J": list(J), "n": risk["n"], "s1": risk["sample_uniques_before"], "s1_over_n": risk["s1_over_n"],
                      "theta": risk["theta"], "alpha": risk["alpha"], "boundary": risk["boundary"]}
    return list(out.values())


def plan_release(input_path: str | Path, candidates: list[Candidate], out_dir: str | Path,
                 max_risk: float | None = None, slope: float = 1.0, attack_train: str | Path | None = None,
                 attack_test: str | Path | None = None, label_key: str = "ticker", lines_per_chunk: int = 5,
                 seed: int = 0, settings: Settings | None = None, progress: bool = True,
                 write_sanitized: bool = False, risk: str = "dr") -> dict[str, Any]:
    """Run the planner; return plan.json's content (frontier.json's list under ``candidates``). ``risk``: the
    measure the choice is made on (``measures``: dr, uniques, attack) with DU."""
    if (attack_train is None) != (attack_test is None):
        raise ValueError("the attack needs both a training and a test corpus")
    if risk not in RISK_MEASURES:
        raise ValueError(f"unknown risk measure {risk!r}; known: {', '.join(RISK_MEASURES)}")
    if risk == "attack" and attack_train is None:
        raise ValueError("--risk attack needs the attack corpora")
    if max_risk is None and not slope > 0:
        raise ValueError(f"the trade-off slope must be positive, got {slope!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    prefix = run_prefix(Path(input_path), settings, progress=progress)
    log.info("planner: prefix done, %d documents, %d chunks, %d mixture version(s), %.1f s", prefix.documents,
             prefix.chunks, len(prefix.models), prefix.seconds)
    attack = None
    if attack_train is not None:
        attack = attack_function(attack_train, attack_test, label_key, lines_per_chunk, seed)
    embed = EmbeddingCache(prefix.embedder.encode)
    results: list[CandidateResult] = []
    bar = progress_bar(len(candidates), "replay swap per candidate", progress)
    for candidate in candidates:
        bar.set_postfix_str(candidate.name)
        result = replay(prefix, candidate, embed, seed=seed, attack=attack)
        log.info("planner: %s: DR=%s DU=%s changed %d/%d chunks (%.1f s)", candidate.name, result.dr, result.du,
                 result.changed, result.chunks, result.seconds)
        results.append(result)
        bar.update(1)
    bar.close()
    rows = [candidate_row(r) for r in results]
    measured = [risk_measure(r, risk) for r in rows]
    for row, m in zip(rows, measured):
        row["risk_measure"] = {"name": risk, **m.as_dict()}
    points = [(m.value, r["DU"]) for m, r in zip(measured, rows)]
    for row, on in zip(rows, frontier_mask(points)):
        row["frontier"] = on
    choice = choose(points, max_risk=max_risk, slope=slope, label=LABELS[risk])
    if choice.index is not None:
        rows[choice.index]["optimal"] = True
    (out / "frontier.json").write_text(json.dumps(rows, indent=2) + "\n")
    plot_frontier(rows, choice.as_dict(), out / "frontier.png", risk_label=LABELS[risk])
    chosen = rows[choice.index]["name"] if choice.index is not None else None
    noise = separation(measured, choice.index)
    noise["statement"] = noise_statement(risk, noise, [r["name"] for r in rows], chosen)
    if write_sanitized and choice.index is not None:
        with (out / "optimal.sanitized.jsonl").open("wb") as handle:
            for doc in results[choice.index].sanitized:
                handle.write(serde.dumps(doc) + b"\n")
    plan = {
        "input": str(input_path),
        "choice": {**choice.as_dict(), "name": chosen, "risk_measure": risk, "noise": noise},
        "prefix": {"documents": prefix.documents, "chunks": prefix.chunks, "dead_letters": prefix.dead_letters,
                   "mixture_versions": {str(v): {"family": m.family.value, "k": m.k, "n_train": m.n_train}
                                        for v, m in prefix.models.items()},
                   "seconds": round(prefix.seconds, 3)},
        "re_embedded": {"encoded": embed.encoded, "cache_hits": embed.hits},
        "table1": table1(rows),
        "seed": seed,
        "seconds": round(time.perf_counter() - started, 3),
        "outputs": {"frontier_json": str(out / "frontier.json"), "frontier_png": str(out / "frontier.png")},
        "candidates": rows,
    }
    (out / "plan.json").write_text(json.dumps({k: v for k, v in plan.items() if k != "candidates"}, indent=2) + "\n")
    return plan
