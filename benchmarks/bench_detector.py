"""Learned span detector (issue 15): rules only vs rules + learned vs Presidio, in one run, on documents the
detector was not trained on.

    nice -n 10 .venv/bin/python benchmarks/bench_detector.py [--model DIR] [--fold-models DIR DIR]

* **TAB dev stop-gap** (127 texts, one annotator's full mention list): split by ``detector.data.dev_half`` into a
  tuning half (in the shipped model's training data) and a validation half (in nothing: not trained on, not
  looked at while choosing anything). Mention recall (a mention found when >= 90 % of its characters are inside
  detected spans) and character precision, overall and per type (``detector.metrics``). Every span a system
  reports counts as detected (ours: all types and identifier types; Presidio: every analyzer result).
* **TAB train** (100 documents, official decisions), 2-fold cross-validation: fold i is scored by a model trained
  without it (``anonstream train-detector --hold-out-train-fold i/2``); TAB's entity recall R_direct/R_quasi and
  uniform token precision P of the DIRECT/QUASI mask (``evaluation.tab``), and the mention scores against the
  first annotator's mentions.
* **Speed**: words per CPU-second of detection on all 127 dev texts, BLAS threads 1, the systems one after the other
  in the same run (Presidio as in bench_pii.py).
* **Operating point** (``OPERATING``): the vetting chosen on the tuning half, also with the learned model run only
  on the sentences holding a span it is asked to confirm (``windows: uncertain``, issue 15 item 4).
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from anonstream.detector.cli import DEV_STOPGAP, TAB_TRAIN, find_data_root  # noqa: E402
from anonstream.detector.data import TUNE, VALIDATION, dev_half, kfold, load_dev_stopgap, load_tab_mentions  # noqa: E402
from anonstream.detector.metrics import score_corpus  # noqa: E402
from anonstream.detector.recognizer import SHIPPED, LearnedSpanRecognizer  # noqa: E402
from anonstream.evaluation.tab import TabEvaluator, load_tab  # noqa: E402
from anonstream.pii.engine import DocumentEntities, PiiConfig, PiiEngine  # noqa: E402
from anonstream.pii.spacy_model import load_spacy, resolve_model  # noqa: E402
from anonstream.records import TAB_TYPES  # noqa: E402
from bench_pii import Presidio  # noqa: E402
from common import Results, arg_parser, log, table  # noqa: E402

MASKED = ("DIRECT", "QUASI")
VET = ("MISC", "ORG", "QUANTITY", "DEM")
# The operating point, chosen on the dev tuning half only: the best mention recall with char precision >= 0.80
# among vetting MISC (0.906 / 0.814), MISC/QUANTITY (0.896 / 0.830), MISC/ORG (0.893 / 0.904),
# MISC/ORG/QUANTITY (0.886 / 0.926), MISC/QUANTITY/DEM (0.893 / 0.839), VET (0.878 / 0.941) at cover 0.5 and
# MISC (0.906 / 0.814), MISC/DEM (0.902 / 0.822) at cover 0.25; none: 0.907 / 0.667. The tuning half is in the
# model's training data, so the learned spans are better there than on unseen texts.
OPERATING = {"vet": ["MISC"]}


class Rules:
    """The pii engine: every span it reports (typed), and its DIRECT/QUASI mask."""

    def __init__(self, name: str, config: PiiConfig):
        self.name = name
        self.engine = PiiEngine.from_config(config)

    def run(self, texts, ids):
        results = self.engine.detect_many(texts, [DocumentEntities(i) for i in ids])
        spans = {i: [(s.start, s.end, s.type) for s in r] for i, r in zip(ids, results)}
        masks = {i: [[s.start, s.end] for s in r if s.identifier_type in MASKED] for i, r in zip(ids, results)}
        return spans, masks


class LearnedOnly:
    def __init__(self, name: str, recognizer: LearnedSpanRecognizer):
        self.name = name
        self.recognizer = recognizer

    def run(self, texts, ids):
        return dict(zip(ids, self.recognizer.spans_many(texts))), None


class PresidioSpans:
    def __init__(self, presidio: Presidio):
        self.name = "presidio"
        self.presidio = presidio

    def run(self, texts, ids):
        results = self.presidio.batch.analyze_iterator(texts, language="en", batch_size=16)
        spans = {i: [(r.start, r.end, "presidio") for r in res] for i, res in zip(ids, results)}
        return spans, {i: [[s, e] for s, e, _ in v] for i, v in spans.items()}


def timed(system, items):
    c0 = time.process_time()
    spans, masks = system.run([d.text for d in items], [d.doc_id for d in items])
    return spans, masks, time.process_time() - c0


def fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def mention_rows(label: str, scores) -> list[list[str]]:
    rec, prec = scores.recall_by_type(), scores.precision_by_type()
    return [[label, fmt(scores.recall), fmt(scores.precision),
             *(f"{fmt(rec.get(t))} / {fmt(prec.get(t))}" for t in TAB_TYPES)]]


MENTION_HEADER = ["system", "mention recall", "char precision", *(f"{t} R / P" for t in TAB_TYPES)]


def main(argv=None) -> int:
    ap = arg_parser(__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(SHIPPED), help="the detector scored on TAB dev (default: the shipped one)")
    ap.add_argument("--fold-models", nargs=2, metavar="DIR",
                    help="models trained with --hold-out-train-fold 0/2 and 1/2 (TAB train cross-validation)")
    ap.add_argument("--vet", nargs="*", default=list(VET),
                    help="TAB types of rule spans the learned spans must confirm in the vetting row")
    ap.add_argument("--data", help="shared data folder")
    ap.add_argument("--results-name", default="detector", help="writes benchmarks/results/<name>.md")
    args = ap.parse_args(argv)
    root = find_data_root(args.data)
    res = Results(args.results_name, "Learned span detector: rules vs rules + learned vs Presidio (issue 15)", args.quick)

    dev = load_dev_stopgap(root / DEV_STOPGAP)
    if args.quick:
        dev = dev[:6]
    halves = {h: [d for d in dev if dev_half(d.doc_id) == h] for h in (TUNE, VALIDATION)}
    model_path = resolve_model()
    rules = Rules("rules only", PiiConfig())
    combined = Rules("rules + learned", PiiConfig(detector=args.model))
    vetted = Rules(f"rules + learned, vetting {'/'.join(args.vet)}",
                   PiiConfig(detector={"model": args.model, "vet": args.vet}))
    windowed = Rules(f"rules + learned on the NER windows, vetting {'/'.join(args.vet)}",
                     PiiConfig(detector={"model": args.model, "vet": args.vet, "windows": True}))
    op_name = f"vetting {'/'.join(OPERATING['vet'])}" + (
        f" (cover {OPERATING['vet_cover']})" if "vet_cover" in OPERATING else "")
    operating = Rules(f"rules + learned, {op_name} (operating point)",
                      PiiConfig(detector={"model": args.model, **OPERATING}))
    uncertain = Rules(f"rules + learned on the uncertain sentences only, {op_name}",
                      PiiConfig(detector={"model": args.model, **OPERATING, "windows": "uncertain"}))
    learned = LearnedOnly("learned only", combined.engine.recognizers[-1])
    presidio = PresidioSpans(Presidio(model_path))
    systems = [rules, combined, vetted, windowed, operating, uncertain, learned, presidio]
    for system in systems:  # warm-up: first-call costs
        system.run([d.text for d in dev[:2]], [d.doc_id for d in dev[:2]])
    words = sum(len(d.text.split()) for d in dev)
    out, cpu = {}, {}
    for system in systems:
        log(f"dev: {system.name}")
        out[system.name], _, cpu[system.name] = timed(system, dev)
    rows = {h: [] for h in halves}
    for h, items in halves.items():
        for system in systems:
            rows[h] += mention_rows(system.name, score_corpus(items, out[system.name]))
    n_words = {h: sum(len(d.text.split()) for d in items) for h, items in halves.items()}
    res.section(
        "TAB dev stop-gap: mention recall and character precision",
        f"{len(dev)} texts, one annotator's full mention list (NO_MASK included). Halves by sha256(doc id): "
        f"tuning {len(halves[TUNE])} texts ({n_words[TUNE]:,} words; in the shipped model's training data), "
        f"validation {len(halves[VALIDATION])} texts ({n_words[VALIDATION]:,} words; in nothing). Detector model: "
        f"`{Path(args.model).name}`. Per type: recall of the gold type's mentions / character precision of the "
        f"spans we typed so. Presidio's types are not TAB's: its per-type precision is not defined.")
    for h in (VALIDATION, TUNE):
        res.add(f"**{h} half**\n\n" + table(MENTION_HEADER, rows[h]))

    speed = {name: words / c for name, c in cpu.items()}
    ratio = {name: speed[name] / speed[presidio.name] for name in speed}
    res.section("Speed (all dev texts, one core, CPU time)",
                f"{words:,} words; BLAS/OpenMP threads 1, not pinned (the shared machine's cores were "
                f"saturated; CPU time, not wall time, is compared).\n\n" + table(
                    ["system", "CPU s", "words/CPU-s", "× Presidio"],
                    [[n, f"{cpu[n]:.1f}", f"{speed[n]:,.0f}", f"{ratio[n]:.2f}"] for n in cpu]))

    if args.fold_models:
        gold_path = root / TAB_TRAIN
        train_docs = load_tab(gold_path)
        mentions = load_tab_mentions(gold_path)
        if args.quick:
            train_docs, mentions = train_docs[:6], mentions[:6]
        evaluator = TabEvaluator(train_docs, nlp=load_spacy())
        cv = {f"{combined.name} (2-fold CV)": {}, f"{vetted.name} (2-fold CV)": {"vet": args.vet},
              f"{operating.name} (2-fold CV)": OPERATING,
              f"{uncertain.name} (2-fold CV)": {**OPERATING, "windows": "uncertain"}}
        cv_spans = {name: {} for name in cv}
        cv_masks = {name: {} for name in cv}
        for fold, ((_, held), model) in enumerate(zip(kfold(mentions, 2), args.fold_models)):
            log(f"train: fold {fold}")
            for name, options in cv.items():
                engine = Rules(name, PiiConfig(detector={"model": model, **options}))
                s, m = engine.run([d.text for d in held], [d.doc_id for d in held])
                cv_spans[name].update(s)
                cv_masks[name].update(m)
        for system in (rules, presidio):
            cv_spans[system.name], cv_masks[system.name] = system.run([d.text for d in mentions],
                                                                      [d.doc_id for d in mentions])
        tab_rows, m_rows = [], []
        for name in (rules.name, *cv, presidio.name):
            sc = evaluator.evaluate(cv_masks[name])
            tab_rows.append([name, fmt(sc["recall_direct_entities"]), fmt(sc["recall_quasi_entities"]),
                             fmt(sc["token_recall"]), fmt(sc["token_precision"])])
            m_rows += mention_rows(name, score_corpus(mentions, cv_spans[name]))
        res.section(
            "TAB train (100 documents, official decisions): 2-fold cross-validation",
            "Fold = document index mod 2; each fold is scored by the detector trained without it (and on the dev "
            "tuning half and the Wikipedia bios). The rules were tuned on these documents (issue 3): their row is "
            "not a hold-out number.\n\n"
            + table(["system", "R_direct", "R_quasi", "R_tok", "P"], tab_rows)
            + "\n\nAgainst the first annotator's full mention list:\n\n" + table(MENTION_HEADER, m_rows))
    res.write()
    print(res.path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
