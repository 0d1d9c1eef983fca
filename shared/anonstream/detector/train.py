"""Fine-tune the NER of spaCy ``en_core_web_md`` on TAB's 8 mention types (paper 001 trains its detector on
annotated documents), on CPU, with a fixed seed.

The md NER (a transition-based tagger on its own tok2vec: hash embeddings + the static vectors) gets the TAB labels
added and is updated on every mention of the training texts; the OntoNotes labels it had are never in the
references, so they are trained towards "outside" and ignored at prediction (``TAB_TYPES`` only). What is saved is
the NER component alone (a few MB); loading puts it on the same base model's tokenizer and vectors.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

from ..pii.spacy_model import resolve_model, use_numpy_gemm
from ..records import TAB_TYPES
from .data import AnnotatedText, non_overlapping, paragraphs

BASE_EXCLUDE = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
META = "detector.json"
# TAB types trained under the base NER's own label of the same meaning, whose output units are already trained
# (a new label starts from zero: after 2 epochs the first model never predicted DATETIME, DEM or CODE).
TRAIN_LABELS = {"DATETIME": "DATE", "DEM": "NORP"}


def base_pipeline(base_model: str | None = None) -> Any:
    """The base model's tokenizer, vocabulary (with its static vectors) and NER, nothing else."""
    import spacy

    return spacy.load(resolve_model(base_model), exclude=list(BASE_EXCLUDE))


def make_examples(nlp: Any, items: Sequence[AnnotatedText], min_chars: int = 1000) -> list[Any]:
    """spaCy ``Example``s, one per piece of a few paragraphs; each mention becomes an entity (snapped outwards
    to token boundaries; spans that still overlap after snapping keep the longer one)."""
    from spacy.training import Example
    from spacy.util import filter_spans

    out = []
    for item in items:
        for _, piece, spans in paragraphs(item, min_chars):
            doc = nlp.make_doc(piece)
            ents = [doc.char_span(s, e, label=TRAIN_LABELS.get(t, t), alignment_mode="expand")
                    for s, e, t in non_overlapping(spans)]
            ref = doc.copy()
            ref.set_ents(filter_spans([e for e in ents if e is not None]), default="outside")
            out.append(Example(doc, ref))
    return out


def train_detector(items: Sequence[AnnotatedText], base_model: str | None = None, epochs: int = 2, seed: int = 0,
                   dropout: float = 0.2, batch_size: int = 8, progress: bool = True) -> Any:
    """Fine-tune the base NER on ``items``; returns the pipeline (tokenizer + NER)."""
    from spacy.util import fix_random_seed, minibatch
    from tqdm import tqdm

    fix_random_seed(seed)
    nlp = base_pipeline(base_model)
    ner = nlp.get_pipe("ner")
    for label in TAB_TYPES:
        ner.add_label(TRAIN_LABELS.get(label, label))
    nlp.meta["tab_labels"] = {TRAIN_LABELS.get(t, t): t for t in TAB_TYPES}  # model label -> TAB type
    examples = make_examples(nlp, items)
    optimizer = nlp.resume_training()
    use_numpy_gemm(nlp)  # numpy's BLAS: ~3x faster matrix products than thinc's BLIS here (spacy_model.py)
    rng = random.Random(seed)
    bar = tqdm(total=epochs * len(examples), desc="train-detector", unit="ex", disable=not progress)
    for epoch in range(epochs):
        rng.shuffle(examples)
        losses: dict[str, float] = {}
        for batch in minibatch(examples, size=batch_size):
            nlp.update(batch, drop=dropout, sgd=optimizer, losses=losses)
            bar.update(len(batch))
            bar.set_postfix(epoch=epoch + 1, loss=round(losses.get("ner", 0.0), 1))
    bar.close()
    if optimizer.averages:  # keep the averaged parameters (use_params restores the raw ones on exit)
        with nlp.use_params(optimizer.averages):
            averaged = nlp.get_pipe("ner").to_bytes()
        nlp.get_pipe("ner").from_bytes(averaged)
    return nlp


def save_detector(nlp: Any, out: str | Path, info: dict[str, Any]) -> Path:
    """Write the NER component and a small description (base model, labels, data, seed) to ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    nlp.get_pipe("ner").to_disk(out / "ner", exclude=["vocab"])  # the vectors stay in the base model
    meta = {"labels": list(TAB_TYPES), "tab_labels": nlp.meta.get("tab_labels"), **info}
    (out / META).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def load_detector(path: str | Path, base_model: str | None = None) -> Any:
    """The saved NER on the base model's tokenizer and vectors (numpy matrix products)."""
    nlp = base_pipeline(base_model)
    nlp.get_pipe("ner").from_disk(Path(path) / "ner", exclude=["vocab"])
    meta = json.loads((Path(path) / META).read_text(encoding="utf-8"))
    nlp.meta["tab_labels"] = meta.get("tab_labels") or {t: t for t in TAB_TYPES}
    return use_numpy_gemm(nlp)
