"""The ONNX Runtime backend of the sentence embeddings: the model's transformer exported locally.

A sentence-transformers model of the form Transformer -> Pooling(mean) -> Normalize (its ``modules.json``
and ``1_Pooling/config.json``; ``all-MiniLM-L6-v2`` is one) runs here as:

* tokenization with the model's own tokenizer (``transformers.AutoTokenizer``, one call per ``encode``),
  truncated at ``max_seq_length`` (``sentence_bert_config.json``) as sentence-transformers calls it; the texts
  are then sorted by decreasing *token* count before batches are cut (``length_batches``) and each batch is
  padded to its longest text (``pad_batch``). ``SentenceTransformer.encode`` sorts by character count, which
  on the sample corpus's windows of 128 chunks pads 20 % more tokens than there are (8.7 % sorted by tokens);
  padding is masked out of the pooling, so the order changes no vector beyond float rounding;
* the transformer as an ONNX graph in ONNX Runtime;
* mean pooling and normalization in numpy exactly as sentence-transformers does: the sum of the token
  vectors under the attention mask over max(token count, 1e-9), then x / max(||x||_2, 1e-12).

The export is a reproducible step, done once per (weights, config, library versions) into a cache
directory (``ANONSTREAM_ONNX_CACHE``, default ``$XDG_CACHE_HOME/anonstream/onnx``): ``torch.onnx.export``
of the transformer (eager attention, so ONNX Runtime's BERT optimizer fuses attention, GELU and layer
norms), ``model-fp32.onnx`` = that optimized graph, ``model-int8.onnx`` = its int8 dynamic quantization
(weights per channel, 7-bit range, activations quantized per call, per tensor) of every MatMul except each
layer's feed-forward output projection, whose GELU outputs carry the outliers that pushed the quantized vectors
below 0.99 cosine of torch's.

Two recipes that quantize those projections too were measured and not kept (BENCHMARKS.md, "embed_recipes"):
SmoothQuant (Xiao et al. 2023) left the vectors at min cosine 0.986 of torch's (0.981 on unseen chunks), and
splitting each feed-forward block at its 32 outlier channels, kept fp32 (LLM.int8()'s decomposition), kept them
at 0.9916 but ran no faster at 2 threads.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

PRECISIONS = ("int8", "fp32")
EXPORT_FORMAT = 1  # bump when the export or the quantization recipe changes: a new cache entry
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
CACHE_ENV = "ANONSTREAM_ONNX_CACHE"


def unsupported_reason(model_path: str) -> str | None:
    """Why ``model_path`` cannot run here (None: it can): a local sentence-transformers directory whose
    modules are exactly Transformer, mean Pooling and Normalize."""
    root = Path(model_path)
    try:
        modules = json.loads((root / "modules.json").read_text())
        pooling = json.loads((root / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError):
        return "not a local sentence-transformers directory with modules.json and 1_Pooling/config.json"
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        return f"modules {kinds}, not Transformer, Pooling, Normalize"
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
    if modes != ["pooling_mode_mean_tokens"]:
        return f"pooling {modes}, not mean"
    return None


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "anonstream" / "onnx"


def fingerprint(model_path: str) -> str:
    """sha256 of the weights and configs of the model and of the versions that shape the export."""
    digest = hashlib.sha256(f"format {EXPORT_FORMAT}".encode())
    for dist in ("torch", "transformers", "onnx", "onnxruntime"):
        digest.update(f"{dist} {version(dist)}".encode())
    root = Path(model_path)
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".json", ".safetensors", ".bin", ".txt")):
        digest.update(str(path.relative_to(root)).encode())
        _hash_file(digest, path)
    return digest.hexdigest()[:16]


def _hash_file(digest, path: Path) -> None:
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)


def load_tokenizer(model_path: str):
    """(the model's tokenizer, its ``max_seq_length`` from ``sentence_bert_config.json``)."""
    from transformers import AutoTokenizer

    settings = json.loads((Path(model_path) / "sentence_bert_config.json").read_text())
    return AutoTokenizer.from_pretrained(model_path), int(settings["max_seq_length"])


def token_batches(tokenizer, texts: list[str], max_length: int, batch_size: int):
    """(indices of the texts, model inputs by name, attention mask) per batch: the texts tokenized in one call,
    truncated at ``max_length``, cut into batches by decreasing token count and each padded to its longest."""
    tokens = tokenizer(texts, truncation="longest_first", max_length=max_length)
    ids = tokens["input_ids"]
    types = tokens.get("token_type_ids")
    pad_id, left = tokenizer.pad_token_id or 0, tokenizer.padding_side == "left"
    for idx in length_batches([len(i) for i in ids], batch_size):
        input_ids, mask = pad_batch([ids[i] for i in idx], pad_id, left)
        if types is None:
            token_types = np.zeros_like(input_ids)
        else:
            token_types = pad_batch([types[i] for i in idx], tokenizer.pad_token_type_id, left)[0]
        yield idx, dict(zip(INPUT_NAMES, (input_ids, mask, token_types))), mask


def ffn_output_projections(graph) -> list:
    """The MatMul node of each layer's feed-forward output projection (its input: the GELU outputs)."""
    return [n for n in graph.node if n.op_type == "MatMul" and "/output/dense/" in n.name
            and "/attention/" not in n.name]


def dynamic_int8(source: Path, target: Path, excluded: list[str] = ()) -> None:
    """ONNX Runtime's dynamic quantization of ``source`` into ``target``: weights int8 per output channel in the
    7-bit range (AVX2 without VNNI sums pairs of u8 x s8 products in saturating int16, which full 8-bit weights
    can overflow), activations uint8 per tensor, scale computed per call; the nodes named in ``excluded`` stay fp32."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                     nodes_to_exclude=list(excluded), extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def export(model_path: str, directory: Path) -> None:
    """Write ``model-fp32.onnx`` and ``model-int8.onnx`` of the model's transformer into ``directory``."""
    import onnx
    import torch
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoConfig, AutoModel

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: torch.nn.Module):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    config = AutoConfig.from_pretrained(model_path)
    model = AutoModel.from_pretrained(model_path, attn_implementation="eager").eval()
    example = torch.ones((2, 8), dtype=torch.long)
    raw = directory / "transformer.onnx"
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(LastHiddenState(model), (example, torch.ones_like(example), torch.zeros_like(example)),
                          str(raw), input_names=list(INPUT_NAMES), output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    optimized = optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                               hidden_size=config.hidden_size)
    fp32 = directory / "model-fp32.onnx"
    optimized.save_model_to_file(str(fp32))
    raw.unlink()
    ffn_out = [n.name for n in ffn_output_projections(onnx.load(str(fp32)).graph)]
    dynamic_int8(fp32, directory / "model-int8.onnx", ffn_out)


def exported(model_path: str, precision: str) -> Path:
    """The ONNX file of ``model_path`` at ``precision``, exported on first use into the cache."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: one of {PRECISIONS}")
    target = cache_root() / f"{Path(model_path).name}-{fingerprint(model_path)}"
    path = target / f"model-{precision}.onnx"
    if path.exists():
        return path
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("exporting %s to ONNX into %s (once)", model_path, target)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        export(model_path, work)
        try:
            work.rename(target)  # atomic; a concurrent exporter that finished first wins
        except OSError:
            if not path.exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return path


def session_options(threads: int):
    """The embedding's ONNX Runtime session options (``load_session``'s; the per-operator benchmark adds profiling)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads  # 0: ONNX Runtime's default (one per physical core)
    options.inter_op_num_threads = 1
    # idle pool threads sleep instead of spinning: spinning took the cores from the stages that run between
    # embed calls in one process (anonstream run: cluster and refit 3x slower, benchmarks/results/profile.md)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


@lru_cache(maxsize=4)
def load_session(path: str, threads: int):
    import onnxruntime

    return onnxruntime.InferenceSession(path, session_options(threads), providers=["CPUExecutionProvider"])


def length_batches(lengths: list[int], batch_size: int) -> list[np.ndarray]:
    """Indices of the texts in batches of at most ``batch_size``, cut from the order of decreasing token count
    (stable), so that each batch pads as little as possible."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def pad_batch(sequences: list[list[int]], pad_id: int, left: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(ids, attention mask) as int64 arrays of shape (batch, longest sequence), padded with ``pad_id`` on the
    right (on the left with ``left``), as the tokenizer's ``padding=True`` does."""
    width = max(len(seq) for seq in sequences)
    ids = np.full((len(sequences), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.int64)
    for row, seq in enumerate(sequences):
        span = slice(width - len(seq), width) if left else slice(0, len(seq))
        ids[row, span] = seq
        mask[row, span] = 1
    return ids, mask


class OnnxEncoder:
    """``encode(texts, batch_size)`` -> unit vectors, as ``SentenceTransformer.encode(...,
    normalize_embeddings=True)`` computes them, with the transformer in ONNX Runtime."""

    def __init__(self, model_path: str, precision: str = "int8", threads: int = 0, path: Path | None = None):
        """``path``: an ONNX file of the model's transformer to run instead of the cached export."""
        reason = unsupported_reason(model_path)
        if reason:
            raise ValueError(f"{model_path}: {reason}")
        self.path = path or exported(model_path, precision)
        self.precision = precision
        self.session = load_session(str(self.path), threads)
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.tokenizer, self.max_seq_length = load_tokenizer(model_path)
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        # one encoder serves every stage of a process (embed on anonstream run's worker thread, audit on the
        # main one); the session runs concurrently, the fast tokenizer's settings are set per call: one at a time
        self._tokenizing = threading.Lock()

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._tokenizing:
            batches = list(token_batches(self.tokenizer, texts, self.max_seq_length, batch_size))
        for idx, feed, mask in batches:
            out[idx] = self._batch(feed, mask)
        return out

    def _batch(self, feed: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        feed = {name: value for name, value in feed.items() if name in self.input_names}
        hidden = self.session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def main() -> None:
    """``python -m anonstream.embedding.onnx [MODEL]``: export now (``make setup`` does), not on first use."""
    import sys

    from .models import DEFAULT_MODEL, resolve_model_path

    path = resolve_model_path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_MODEL)
    for precision in PRECISIONS:
        print(exported(path, precision))


if __name__ == "__main__":
    main()
