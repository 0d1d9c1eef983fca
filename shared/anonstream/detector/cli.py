"""``anonstream train-detector``: fine-tune the learned span detector on the annotated corpora in ``shared/data``."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from .data import TUNE, AnnotatedText, dev_half, kfold, load_dev_stopgap, load_tab_mentions

TAB_TRAIN = Path("tab") / "echr_train_first100.json"
DEV_STOPGAP = Path("tab") / "dev-stopgap"
WIKIBIO = Path("wikibio") / "wiki_test.json"


def find_data_root(explicit: str | None = None) -> Path:
    """``--data``, else the first ``shared/data`` (holding TAB train) above this file or the working directory."""
    if explicit:
        return Path(explicit)
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        for ancestor in [start, *start.parents]:
            if (ancestor / "shared" / "data" / TAB_TRAIN).exists():
                return ancestor / "shared" / "data"
    raise FileNotFoundError("shared/data with tab/echr_train_first100.json not found; pass --data DIR")


def training_corpus(root: Path, hold_out_fold: tuple[int, int] | None = None,
                    per_corpus: int | None = None) -> tuple[list[AnnotatedText], dict[str, Any]]:
    """TAB train (minus the held-out fold ``(i, k)``), the *tuning* half of TAB dev, the Wikipedia bios.
    The validation half of TAB dev is never read into training. ``per_corpus`` keeps the first n of each (quick)."""
    train = load_tab_mentions(root / TAB_TRAIN, "tab-train")
    if hold_out_fold is not None:
        i, k = hold_out_fold
        train = list(kfold(train, k))[i][0]
    dev = [d for d in load_dev_stopgap(root / DEV_STOPGAP) if dev_half(d.doc_id) == TUNE]
    wiki = load_tab_mentions(root / WIKIBIO, "wikibio")
    parts = {"tab-train": train, "tab-dev-tune": dev, "wikibio": wiki}
    if per_corpus is not None:
        parts = {k: v[:per_corpus] for k, v in parts.items()}
    items = [d for v in parts.values() for d in v]
    info = {"documents": {k: len(v) for k, v in parts.items()},
            "tab_train_held_out_fold": list(hold_out_fold) if hold_out_fold else None,
            "words": sum(len(d.text.split()) for d in items)}
    return items, info


def cmd_train_detector(args: argparse.Namespace) -> int:
    from .train import save_detector, train_detector

    root = find_data_root(args.data)
    fold = None
    if args.hold_out_train_fold:
        i, _, k = args.hold_out_train_fold.partition("/")
        fold = (int(i), int(k))
    epochs = 1 if args.quick else args.epochs
    items, info = training_corpus(root, fold, per_corpus=3 if args.quick else None)
    t0 = time.perf_counter()
    nlp = train_detector(items, args.base_model, epochs=epochs, seed=args.seed, progress=not args.quiet)
    info.update(epochs=epochs, seed=args.seed, seconds=round(time.perf_counter() - t0, 1),
                base_model=f"{nlp.meta.get('lang')}_{nlp.meta.get('name')}-{nlp.meta.get('version')}")
    out = save_detector(nlp, args.out, info)
    print(f"detector ({info['words']} words, {epochs} epochs, {info['seconds']} s) -> {out}", file=sys.stderr)
    return 0


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser("train-detector", help="fine-tune the learned span detector (spaCy NER, TAB's 8 types)")
    p.add_argument("--out", required=True, help="output directory (the NER component + detector.json)")
    p.add_argument("--data", help="the shared data folder (default: shared/data found upwards)")
    p.add_argument("--base-model", help="spaCy base model (default: en_core_web_md as the pii stage resolves it)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hold-out-train-fold", metavar="I/K",
                   help="leave fold I of K of TAB train out (cross-validation; fold = document index mod K)")
    p.add_argument("--quick", action="store_true", help="3 documents per corpus, 1 epoch (tests)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train_detector)
