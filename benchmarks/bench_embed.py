"""Embed stage by backend, torch vs ONNX Runtime fp32 vs int8 (issue 13: ≥ 2× torch's chunks/s, vectors
within 0.99 cosine of torch's), and the stage vs raw ``SentenceTransformer.encode`` (issue 4: stage ≥ 0.9× raw
at the best batch size).

Backends (first, the headline of issue 13): the embed stage as it ships (``StageDriver.handle`` per window
of W chunks-pii wire records, model batches of the configured B, outputs serialized to bytes) once per
``ANONSTREAM_EMBED_BACKEND`` — ``torch`` (today's stage), ``onnx-fp32``, ``onnx`` (int8) — the three taking
turns window by window (``common.interleaved_steps``), with one and with the default number of threads
(torch's and ONNX Runtime's intra-op threads set alike). Ratios are ONNX chunks/s ÷ torch's in the same
round. Cosine of each ONNX vector with torch's over every chunk of the sample corpus (the int8 export's
quantization recipe was chosen on) and of the unseen TAB dev texts (``bench_kafka.dev_documents``), cut as the ingest stage cuts
them: min, 1st percentile, mean. Then a roofline: the machine's measured peak multiply-accumulates per second
(a large fp32 GEMM in numpy and torch; ONNX Runtime's fp32 and int8 MatMul at the feed-forward shape), the
model's MACs per chunk, and the rate each backend's stage reaches. ``--backends-only`` stops there.

One process, one model instance (``load_encoder`` is cached, so the raw calls and the stage's
``Embedder`` share it), the same chunk texts for every variant. The stage is measured as it ships:
the Kafka service hands ``StageDriver.handle`` windows of up to ``ANONSTREAM_EMBED_WINDOW`` records
(default 128; ``runtime/service.py::_batch_policy``) and the ``Embedder`` cuts model batches of
``ANONSTREAM_EMBED_BATCH`` (default 16; ``runtime/wiring.py``); ``encode`` sorts each window by
length before cutting batches. Output validation (``contracts.validate``) checks the embedding
vector natively (length == dim, finite) instead of walking it with the schema.

* a batch-size sweep of raw ``encode(texts, batch_size=B)``, B in {8,16,32,64,128}, the batch sizes
  taking turns block by block (blocks of 128 chunks); the best B is the fastest median over rounds;
* at the best B, rounds in which these variants take turns call by call (``common.interleaved_steps``:
  proportional turns, order rotated, so they share the machine's load):
  - ``raw``         — the issue's baseline ``encode(all texts, batch_size=B)``, timed on exactly the
                      batches that one call makes (it sorts the texts by length, then cuts batches);
  - ``raw-sliced``  — ``encode`` per slice of B consecutive texts (no stage code);
  - ``stage``       — the headline: ``StageDriver.handle`` on windows of W consecutive chunks-pii
                      wire records (bytes, as they come from Kafka), W = the configured window capped
                      at the sample, ``Embedder`` batch size B, outputs serialized to bytes as the
                      service does before producing;
  - ``stage@default-B`` — the same at the configured ``Embedder`` batch size (default 16), only when
                      the best B differs from it (otherwise it is ``stage``);
  - ``stage-one-batch`` — ``handle`` per slice of B records: one model batch per call (how the
                      stage was fed before windows; for comparison);
* an instrumented pass of the headline stage that splits its time by component;
* with ``--profile``, a cProfile of one headline stage pass (stderr).

Ratios are taken within a round and the median over rounds is reported, by wall time and by
process CPU time. Two passes: ``torch.set_num_threads(1)``, then the default thread count.
"""
from __future__ import annotations

import cProfile
import io
import pstats
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

import common
from bench_kafka import dev_documents
from anonstream import contracts, serde, topics
from anonstream.config import Settings
from anonstream.embedding import DEFAULT_MODEL, Embedder, load_encoder, load_onnx_encoder, resolve_model_path
from anonstream.embedding.onnx import dynamic_int8, load_session, load_tokenizer
from anonstream.records import Chunk, Document
from anonstream.stages.base import InputMessage, StageDriver
from anonstream.stages.embed import EmbedStage
from anonstream.stages.ingest import IngestStage

PREFIX = "anonstream"
TARGET = 0.9

def sample_chunks(n: int | None) -> tuple[list[Chunk], int]:
    """Chunks of the sample corpus (IngestStage, default sizes); with ``n``, every k-th chunk so the
    sample keeps the corpus's length mix. Returns (chunks, total chunk count)."""
    ingest = IngestStage()
    chunks = [c for doc in common.read_documents() for c in ingest.chunks(Document.from_wire(doc))]
    if n is None or n >= len(chunks):
        return chunks, len(chunks)
    step = len(chunks) / n
    return [chunks[int(i * step)] for i in range(n)], len(chunks)


def pii_wire_messages(chunks: list[Chunk]) -> list[InputMessage]:
    """The chunks as the pii stage would have produced them (no entities found), as Kafka bytes."""
    name = topics.name(topics.CHUNKS_PII, PREFIX)
    messages = []
    for offset, chunk in enumerate(chunks):
        chunk.entities = []
        chunk.lineage["pii"] = "1"
        value = chunk.to_wire()
        contracts.validate(topics.CHUNKS_PII.schema, value)
        messages.append(InputMessage(name, 0, offset, chunk.key.encode(), serde.dumps(value)))
    return messages


def slices(seq: list, size: int) -> list[list]:
    return [seq[i:i + size] for i in range(0, len(seq), size)]


@dataclass(frozen=True)
class Variant:
    """One side-by-side variant: ``group`` texts or records per call (one step of the interleaving),
    model batches of ``batch``; ``by_length``: the groups are cut from the texts sorted as one
    ``encode(all texts)`` call sorts them, else from consecutive records (as Kafka delivers them)."""

    what: str
    stage: bool
    group: int
    batch: int
    by_length: bool = False


class Bench:
    def __init__(self, chunks: list[Chunk], messages: list[InputMessage]):
        self.texts = [c.text for c in chunks]
        self.messages = messages
        self.encoder = load_encoder(DEFAULT_MODEL)
        self.embedder = Embedder(DEFAULT_MODEL, backend="torch")
        assert self.embedder.encoder is self.encoder  # one model instance for every variant
        self.stage = EmbedStage(self.embedder)
        self.driver = StageDriver(self.stage, PREFIX)
        # encode() sorts its inputs by decreasing character length, then cuts batches of B
        # (sentence_transformers: argsort of -len(text)); the same order, to time it batch by batch
        self.by_length = [int(i) for i in np.argsort([-len(t) for t in self.texts])]
        self.out: dict[str, list[tuple[list[int], np.ndarray]]] = defaultdict(list)
        self.n_steps: dict[str, int] = {}

    @property
    def n(self) -> int:
        return len(self.texts)

    def _encode(self, texts: list[str], batch: int) -> np.ndarray:
        return self.encoder.encode(texts, batch_size=batch, normalize_embeddings=True, show_progress_bar=False)

    def sweep_steps(self, batch: int, block: int) -> list[Callable[[], None]]:
        """Raw ``encode(texts, batch_size=batch)`` on consecutive blocks of ``block`` texts: every
        batch size gets the same steps, so the sweep's variants can take turns block by block."""
        return [lambda part=part: self._encode(part, batch) for part in slices(self.texts, block)]

    def steps(self, name: str, variant: Variant) -> list[Callable[[], None]]:
        """``variant`` as one callable per call (for ``common.interleaved_steps``); each records its
        vectors with the indices of its texts, for the equality check."""
        order = self.by_length if variant.by_length else list(range(self.n))
        groups = slices(order, variant.group)
        make = self._stage_step if variant.stage else self._raw_step
        self.n_steps[name] = len(groups)
        return [lambda g=g: make(name, g, variant.batch) for g in groups]

    def _raw_step(self, name: str, idx: list[int], batch: int) -> None:
        self.out[name].append((idx, self._encode([self.texts[i] for i in idx], batch)))

    def _stage_step(self, name: str, idx: list[int], batch: int) -> None:
        self.embedder.batch_size = batch
        handled = self.driver.handle([self.messages[i] for i in idx])
        if handled.dead_letters:
            raise RuntimeError(f"{len(handled.dead_letters)} dead letters in the embed benchmark")
        for e in handled.emits:
            serde.dumps(e.value)  # the service serializes every output before producing it
        self.out[name].append((idx, np.asarray([e.value["embedding"]["vector"] for e in handled.emits],
                                               dtype=np.float32)))

    def vectors(self, name: str) -> np.ndarray:
        """The last round's vectors of variant ``name``, in input order."""
        parts = self.out[name][-self.n_steps[name]:]
        result = np.zeros((self.n, self.embedder.dim), dtype=np.float32)
        for idx, vecs in parts:
            result[idx] = vecs
        return result

    def warm_up(self, batch: int) -> None:
        self._encode(self.texts[:batch], batch)
        self.embedder.batch_size = batch
        self.driver.handle(self.messages[:2])  # builds and caches the schema validators

    def breakdown(self, window: int, batch: int) -> tuple[dict[str, float], float]:
        """One stage pass (``handle`` per window of ``window`` records, model batches of ``batch``)
        with the pieces timed by wrapping them in this process (no code change). Returns seconds per
        component and the pass's total."""
        spent: dict[str, float] = defaultdict(float)

        def wrap(key: Callable[..., str], fn: Callable) -> Callable:
            def wrapper(*args, **kwargs):
                with common.timed() as t:
                    result = fn(*args, **kwargs)
                spent[key(*args)] += t.wall
                return result
            return wrapper

        stage, embedder, driver = self.stage, self.embedder, self.driver
        saved = (contracts.validate, serde.loads)
        contracts.validate = wrap(lambda schema, *_: f"validate {schema}", saved[0])
        serde.loads = wrap(lambda *_: "serde.loads (input bytes → dict)", saved[1])
        stage.decode = wrap(lambda *_: "Chunk.from_wire (decode)", stage.decode)
        embedder.encode = wrap(lambda *_: "encode (model)", embedder.encode)
        stage.process = wrap(lambda *_: "process (total)", stage.process)
        embedder.batch_size = batch
        total = 0.0
        try:
            for part in slices(self.messages, window):
                with common.timed() as t:
                    handled = driver.handle(part)
                total += t.wall
                with common.timed() as t:
                    for e in handled.emits:
                        serde.dumps(e.value)
                spent["serde.dumps (output dict → bytes)"] += t.wall
                total += t.wall
        finally:
            contracts.validate, serde.loads = saved
            for obj, attr in ((stage, "decode"), (embedder, "encode"), (stage, "process")):
                delattr(obj, attr)  # back to the class's method
        spent["process: vector.tolist, to_wire, key"] = spent.pop("process (total)") - spent["encode (model)"]
        known = sum(spent.values()) - spent["serde.dumps (output dict → bytes)"]
        handle_total = total - spent["serde.dumps (output dict → bytes)"]
        spent["driver loop, Handled, rest"] = handle_total - known
        return dict(spent), total

    def profile(self, variant: Variant, top: int = 25) -> str:
        profiler = cProfile.Profile()
        steps = self.steps("profile", variant)
        profiler.enable()
        for step in steps:
            step()
        profiler.disable()
        self.out.pop("profile", None)
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("tottime").print_stats(top)
        return buf.getvalue()


BACKENDS = {"torch": "torch", "onnx-fp32": "onnx-fp32", "onnx-int8": "onnx"}  # row name -> backend
BACKEND_TARGET = 2.0
COSINE_BOUND = 0.99


class BackendBench:
    """The embed stage as it ships, once per backend, on the same wire records."""

    def __init__(self, messages: list[InputMessage], batch: int):
        self.messages = messages
        self.embedders = {name: Embedder(DEFAULT_MODEL, batch, backend=b) for name, b in BACKENDS.items()}
        for name, embedder in self.embedders.items():
            if embedder.backend != BACKENDS[name]:
                raise RuntimeError(f"backend {BACKENDS[name]} fell back to {embedder.backend}")
        self.drivers = {name: StageDriver(EmbedStage(e), PREFIX) for name, e in self.embedders.items()}
        dim = self.embedders["torch"].dim
        self.vectors = {name: np.zeros((len(messages), dim), dtype=np.float32) for name in BACKENDS}

    def set_threads(self, threads: int) -> None:
        torch.set_num_threads(threads)
        for name, embedder in self.embedders.items():
            if name != "torch":
                embedder.encoder = load_onnx_encoder(DEFAULT_MODEL, embedder.encoder.precision, threads)

    def steps(self, name: str, window: int) -> list[Callable[[], None]]:
        return [lambda idx=idx: self._step(name, idx) for idx in slices(list(range(len(self.messages))), window)]

    def _step(self, name: str, idx: list[int]) -> None:
        handled = self.drivers[name].handle([self.messages[i] for i in idx])
        if handled.dead_letters:
            raise RuntimeError(f"{len(handled.dead_letters)} dead letters in the embed benchmark")
        for e in handled.emits:
            serde.dumps(e.value)  # the service serializes every output before producing it
        self.vectors[name][idx] = [e.value["embedding"]["vector"] for e in handled.emits]


def cosine_row(name: str, cos: np.ndarray) -> list[str]:
    return [name, len(cos), f"{cos.min():.4f}", f"{np.percentile(cos, 1):.4f}", f"{cos.mean():.4f}",
            "meets" if cos.min() >= COSINE_BOUND else "**misses**"]


def compare_backends(messages: list[InputMessage], corpora: dict[str, list[str]], window: int, batch: int,
                     reps: int, passes: list[tuple[int, str]]) -> tuple[str, bool, dict[tuple[int, str], float]]:
    """The backends side by side (stage throughput by pass) and their cosines with torch over each of
    ``corpora`` (label -> texts). Returns the text, whether issue 13's target is met, and the median stage
    chunks/s by (threads, backend)."""
    bench = BackendBench(messages, batch)
    n = len(messages)
    summary, details = [], []
    rates: dict[tuple[int, str], float] = {}
    for threads, label in passes:
        bench.set_threads(threads)
        common.log(f"[backends, {label}] warm-up")
        for name in BACKENDS:
            bench.steps(name, min(window, 2 * batch))[0]()
        common.log(f"[backends, {label}] side by side, W={window}, B={batch}: {', '.join(BACKENDS)}")
        rounds = common.interleaved_steps({name: bench.steps(name, window) for name in BACKENDS}, reps, common.log)
        for name in BACKENDS:
            tput = [n / r[name].wall for r in rounds]
            wall = [r["torch"].wall / r[name].wall for r in rounds]
            cpu = [r["torch"].cpu / r[name].cpu for r in rounds]
            cos = (bench.vectors[name] * bench.vectors["torch"]).sum(axis=1)
            rates[threads, name] = common.median(tput)
            summary.append([label, f"`{name}`", common.spread(tput, "{:.1f}"), f"**{common.median(wall):.2f}**"
                            if name.startswith("onnx-int8") else f"{common.median(wall):.2f}",
                            common.spread(wall, "{:.2f}"), common.spread(cpu, "{:.2f}"), f"{cos.min():.4f}"])
    cos_rows = []
    for label, corpus in corpora.items():
        common.log(f"[backends] cosines over {len(corpus)} chunks ({label})")
        reference = bench.embedders["torch"].encode(corpus)
        cos_rows += [[label, *cosine_row(f"`{name}`", (bench.embedders[name].encode(corpus) * reference).sum(axis=1))]
                     for name in BACKENDS if name != "torch"]
    int8 = [row for row in summary if row[1] == "`onnx-int8`"]
    meets = (all(float(row[3].strip("*")) >= BACKEND_TARGET for row in int8)
             and all(row[-1] == "meets" for row in cos_rows if row[1] == "`onnx-int8`"))
    details.append(common.table(["pass", "backend", "stage chunks/s", "÷ torch (wall, median)",
                                 "÷ torch (wall, min–max)", "÷ torch (CPU)", "min cosine (these chunks)"],
                                summary))
    details.append(f"Cosine of each backend's vectors with torch's, chunk by chunk (bound {COSINE_BOUND}):")
    details.append(common.table(["chunks of", "backend", "chunks", "min", "p1", "mean", f"min ≥ {COSINE_BOUND}?"],
                                cos_rows))
    return "\n\n".join(details), meets, rates


ROOFLINE_TOKENS = 2048  # rows of the feed-forward-shaped products: 16 chunks of 128 tokens
GEMM_SIDE = 2048  # the large square fp32 GEMM


def peak_rate(macs: float, call: Callable[[], Any], seconds: float = 2.0) -> float:
    """Multiply-accumulates per second of ``call`` (``macs`` per call), at its fastest over ~``seconds``
    of calls after one warm-up: a peak, the best the machine gave while it was shared."""
    call()
    best, spent = float("inf"), 0.0
    while spent < seconds:
        with common.timed() as t:
            call()
        best, spent = min(best, t.wall), spent + t.wall
    return macs / best


def onnx_matmul(weight: np.ndarray, int8: bool, threads: int, directory: Path) -> Callable[[np.ndarray], Any]:
    """A one-node ONNX graph ``y = x @ weight`` in ONNX Runtime, session options as the embed stage's; with
    ``int8`` quantized as the int8 export is (``embedding.onnx.dynamic_int8``)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rows, cols = weight.shape
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="ffn")], "matmul",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["tokens", rows])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["tokens", cols])],
                              [numpy_helper.from_array(weight, "w")])
    path = directory / f"matmul-{rows}x{cols}-fp32.onnx"  # one file per graph: sessions are cached by path
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10), str(path))
    if int8:
        dynamic_int8(path, path.with_name(f"matmul-{rows}x{cols}-int8.onnx"))
        path = path.with_name(f"matmul-{rows}x{cols}-int8.onnx")
    session = load_session(str(path), threads)
    return lambda x: session.run(None, {"x": x})


def model_macs(config, token_counts: np.ndarray) -> tuple[int, float]:
    """(MACs per token of the linear layers, mean MACs per chunk) of a BERT encoder: per layer, the four
    d x d attention projections and the two d x d_ff feed-forward ones per token, plus attention's scores and
    weighted sum, 2 n d per token of a chunk of n tokens; padding excluded (useful work)."""
    d, d_ff, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_token = layers * (4 * d * d + 2 * d * d_ff)
    per_chunk = token_counts * per_token + layers * 2 * d * token_counts.astype(np.float64) ** 2
    return per_token, float(per_chunk.mean())


def roofline(texts: list[str], rates: dict[tuple[int, str], float], threads: int) -> str:
    """The machine's measured peaks, the model's MACs per chunk and each backend's achieved MAC/s."""
    from transformers import AutoConfig

    path = resolve_model_path(DEFAULT_MODEL)
    config = AutoConfig.from_pretrained(path)
    tokenizer, max_length = load_tokenizer(path)
    counts = np.array([len(ids) for ids in tokenizer(texts, truncation="longest_first",
                                                     max_length=max_length)["input_ids"]])
    per_token, per_chunk = model_macs(config, counts)
    d, d_ff = config.hidden_size, config.intermediate_size
    rng = np.random.default_rng(0)
    square = rng.standard_normal((GEMM_SIDE, GEMM_SIDE), dtype=np.float32)
    x = rng.standard_normal((ROOFLINE_TOKENS, d), dtype=np.float32)
    w = (rng.standard_normal((d, d_ff), dtype=np.float32) / np.sqrt(d)).astype(np.float32)
    gelu = np.asarray(torch.nn.functional.gelu(torch.from_numpy(x @ w)))  # the FFN-out input: GELU outputs
    w_out = (rng.standard_normal((d_ff, d), dtype=np.float32) / np.sqrt(d_ff)).astype(np.float32)
    torch.set_num_threads(threads)
    ffn_in, ffn_out = ROOFLINE_TOKENS * d * d_ff, ROOFLINE_TOKENS * d_ff * d
    common.log(f"[roofline] peaks at {threads} threads")
    with tempfile.TemporaryDirectory() as tmp:
        peaks = [
            (f"numpy fp32 GEMM {GEMM_SIDE}³", peak_rate(GEMM_SIDE ** 3, lambda: square @ square)),
            (f"torch fp32 GEMM {GEMM_SIDE}³", peak_rate(GEMM_SIDE ** 3, lambda t=torch.from_numpy(square): t @ t)),
            (f"torch fp32 FFN-in {ROOFLINE_TOKENS}×{d} @ {d}×{d_ff}",
             peak_rate(ffn_in, lambda a=torch.from_numpy(x), b=torch.from_numpy(w): a @ b)),
            (f"ONNX Runtime fp32 MatMul FFN-in {ROOFLINE_TOKENS}×{d} @ {d}×{d_ff}",
             peak_rate(ffn_in, lambda f=onnx_matmul(w, False, threads, Path(tmp)): f(x))),
            (f"ONNX Runtime int8 MatMul FFN-in {ROOFLINE_TOKENS}×{d} @ {d}×{d_ff}",
             peak_rate(ffn_in, lambda f=onnx_matmul(w, True, threads, Path(tmp)): f(x))),
            (f"ONNX Runtime int8 MatMul FFN-out {ROOFLINE_TOKENS}×{d_ff} @ {d_ff}×{d}",
             peak_rate(ffn_out, lambda f=onnx_matmul(w_out, True, threads, Path(tmp)): f(gelu))),
        ]
    fp32_peak = max(rate for what, rate in peaks if "fp32" in what)
    int8_peak = max(rate for what, rate in peaks if "int8" in what)
    ort_fp32, ort_int8 = peaks[3][1], peaks[4][1]
    peak_rows = [[what, f"{rate / 1e9:.1f}"] for what, rate in peaks]
    rows = []
    for name in BACKENDS:
        chunks = rates[threads, name]
        rows.append([f"`{name}`", f"{chunks:.1f}", f"{chunks * counts.mean():.0f}", f"{chunks * per_chunk / 1e9:.1f}",
                     f"{100 * chunks * per_chunk / fp32_peak:.0f} %", f"{100 * chunks * per_chunk / int8_peak:.0f} %"])
    target = BACKEND_TARGET * rates[threads, "torch"]
    rows.append([f"{BACKEND_TARGET}× torch (the target)", f"{target:.1f}", f"{target * counts.mean():.0f}",
                 f"{target * per_chunk / 1e9:.1f}", f"{100 * target * per_chunk / fp32_peak:.0f} %",
                 f"{100 * target * per_chunk / int8_peak:.0f} %"])
    bound = int8_peak / per_chunk
    # the shipped int8 model: the FFN-out third of the linear MACs in fp32, the rest int8, at the measured rates
    linear = per_token * counts.mean()
    gemm_ms = 1e3 * (linear / 3 / ort_fp32 + 2 * linear / 3 / ort_int8)
    stage_ms = 1e3 / rates[threads, "onnx-int8"]
    return "\n\n".join([
        f"Measured peaks at {threads} threads (torch's and ONNX Runtime's intra-op threads; the fastest call over "
        "~2 s after a warm-up; the machine is shared, so these are what it gave, not its specification), in "
        "GMAC/s (10⁹ multiply-accumulates per second):",
        common.table(["kernel", "GMAC/s"], peak_rows),
        f"`{DEFAULT_MODEL}`: {config.num_hidden_layers} layers, d = {d}, d_ff = {d_ff}: {per_token / 1e6:.2f} M "
        f"MACs per token in the linear layers ({config.num_hidden_layers} × (4d² + 2·d·d_ff)), plus attention's "
        f"2·n·d per token and layer for a chunk of n tokens; the {len(texts)} chunks of the stage benchmark have "
        f"{counts.mean():.0f} tokens on average (max {counts.max()}), {per_chunk / 1e9:.2f} G MACs per chunk "
        "(padding excluded: useful work). Each backend's stage rate (the default-threads pass above) as MAC/s:",
        common.table(["backend", "stage chunks/s", "tokens/s", "GMAC/s", "÷ best fp32 peak", "÷ best int8 peak"],
                     rows),
        f"If every MAC ran at the best int8 MatMul rate and nothing else took time, the stage would embed "
        f"{bound:.1f} chunks/s = {bound / rates[threads, 'torch']:.2f}× torch's: the ceiling of int8 on this CPU "
        "with these kernels (not reachable: the rest of the model takes time too).",
        f"The shipped `onnx-int8` at the measured kernel rates: its linear layers need {gemm_ms:.1f} ms per chunk "
        f"(two thirds of their MACs at the int8 FFN-in rate, the fp32 feed-forward output third at ONNX Runtime's "
        f"fp32 rate); the stage spends {stage_ms:.1f} ms per chunk, so by this estimate "
        f"{100 * (1 - gemm_ms / stage_ms):.0f} % of its time goes elsewhere (attention scores and softmax, layer "
        "norms, GELU, (de)quantizing activations, tokenization, the stage's own code). The peaks and the stage rate "
        "are taken at different moments of a shared machine, so the estimate moves with its load; ONNX Runtime's own "
        "per-operator profile of the same exports is in `embed_ops.md`.",
    ])


def token_stats(encoder, texts: list[str]) -> str:
    lengths = np.array([len(ids) for ids in encoder.tokenizer(texts)["input_ids"]])
    limit = encoder.max_seq_length
    return (f"tokens per chunk: median {int(np.median(lengths))}, p90 {int(np.percentile(lengths, 90))}, "
            f"max {int(lengths.max())}; {int((lengths > limit).sum())} of {len(lengths)} cut at "
            f"max_seq_length {limit}")


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a, dtype=np.float32) - np.asarray(b, dtype=np.float32)).max())


ONE_BATCH = "stage-one-batch"


def variants(best: int, window: int, default_batch: int) -> dict[str, Variant]:
    """The side-by-side variants at the best B; ``stage`` is the headline (what ships)."""
    out = {
        "raw": Variant("`encode(all texts, batch_size=B)` — the baseline", False, best, best, by_length=True),
        "raw-sliced": Variant("`encode` per slice of B consecutive texts (no stage code)", False, best, best),
        "stage": Variant("`StageDriver.handle` per window of W wire records, model batches of B, outputs → "
                         "bytes (as shipped)", True, window, best),
    }
    if default_batch != best:
        out[default_name(default_batch)] = Variant(
            f"`stage` with the configured model batch `ANONSTREAM_EMBED_BATCH` = {default_batch}", True, window,
            default_batch)
    out[ONE_BATCH] = Variant("stage, one model batch per call: `handle` per slice of B wire records "
                             "(how it was fed before windows; for comparison)", True, best, best)
    return out


def default_name(default_batch: int) -> str:
    return f"stage@B={default_batch}"


def run_pass(bench: Bench, threads: int, label: str, batches: list[int], sweep_reps: int, reps: int,
             window: int, default_batch: int, profile: bool) -> tuple[list[Any], str]:
    torch.set_num_threads(threads)
    common.log(f"[{label}] warm-up")
    bench.warm_up(max(batches))
    n = bench.n

    block = max(batches)
    common.log(f"[{label}] batch-size sweep of raw encode over {n} chunks, blocks of {block}")
    sweep = common.interleaved_steps({f"B={b}": bench.sweep_steps(b, block) for b in batches}, sweep_reps,
                                     common.log)
    tput = {b: [n / r[f"B={b}"].wall for r in sweep] for b in batches}
    best = max(batches, key=lambda b: common.median(tput[b]))
    sweep_rows = [[b, common.spread(tput[b], "{:.1f}"), "**best**" if b == best else ""] for b in batches]

    specs = variants(best, window, default_batch)
    common.log(f"[{label}] side by side at B={best}, W={window}: {', '.join(specs)}")
    rounds = common.interleaved_steps({name: bench.steps(name, v) for name, v in specs.items()}, reps,
                                      common.log)
    wall = {v: [r["raw"].wall / r[v].wall for r in rounds] for v in specs}  # throughput ÷ raw's
    cpu = {v: [r["raw"].cpu / r[v].cpu for r in rounds] for v in specs}
    side_rows = [[f"`{name}`", v.what, bench.n_steps[name], common.spread([n / r[name].wall for r in rounds], "{:.1f}"),
                  common.spread(wall[name], "{:.3f}"), common.spread(cpu[name], "{:.3f}")]
                 for name, v in specs.items()]
    pure = [r["raw-sliced"].wall / r[ONE_BATCH].wall for r in rounds]
    pure_cpu = [r["raw-sliced"].cpu / r[ONE_BATCH].cpu for r in rounds]
    windows = [r[ONE_BATCH].wall / r["stage"].wall for r in rounds]
    windows_cpu = [r[ONE_BATCH].cpu / r["stage"].cpu for r in rounds]
    reference = bench.vectors("raw")
    for v in specs:
        diff = max_abs_diff(reference, bench.vectors(v))
        if diff > 1e-3:
            raise RuntimeError(f"{v} vectors differ from raw encode by {diff:.2e}")
    bench.out.clear()

    common.log(f"[{label}] instrumented stage pass (W={window}, B={best})")
    parts, total = bench.breakdown(window, best)
    breakdown_rows = [[name, f"{1000 * s / n:.2f}", f"{100 * s / total:.1f} %"]
                      for name, s in sorted(parts.items(), key=lambda kv: -kv[1])]
    breakdown_rows.append(["**total (instrumented pass)**", f"{1000 * total / n:.2f}", "100 %"])
    validation = sum(s for name, s in parts.items() if name.startswith("validate "))

    windows_in_sample = ", ".join(str(len(g)) for g in slices(list(range(n)), window))
    text = "\n\n".join([
        f"#### {label}",
        f"Raw `encode(texts, batch_size=B)` sweep: {sweep_reps} rounds, the batch sizes taking turns "
        f"block by block (each call encodes a block of {block} consecutive chunks); chunks/s, median "
        "(min–max):",
        common.table(["B", "raw chunks/s", ""], sweep_rows),
        f"Side by side at the best B = {best}, W = {window} (windows of {windows_in_sample} records): "
        f"{reps} rounds; in each round the variants take turns call by call (proportionally, order "
        "rotated) so they share the machine's load; `raw` is timed on the very batches one "
        "`encode(all texts)` call makes (it sorts by length, then cuts batches of B). Ratios are that "
        "variant's throughput ÷ `raw`'s in the same round, median (min–max); the CPU column uses "
        "process CPU time instead of wall time:",
        common.table(["variant", "what", "calls per round", "chunks/s", "× raw (wall)", "× raw (CPU)"],
                     side_rows),
        f"Windows (stage ÷ {ONE_BATCH}): {common.spread(windows, '{:.3f}')} wall, "
        f"{common.spread(windows_cpu, '{:.3f}')} CPU. Stage code alone ({ONE_BATCH} ÷ raw-sliced, same "
        f"batches): {common.spread(pure, '{:.3f}')} wall, {common.spread(pure_cpu, '{:.3f}')} CPU. Batch "
        f"composition alone (raw-sliced ÷ raw): {common.spread(wall['raw-sliced'], '{:.3f}')} wall. "
        "Vectors of every variant equal raw `encode`'s within 1e-3.",
        f"Where the headline stage's time goes (one instrumented pass, W = {window}, B = {best}; the "
        f"wrapping adds ~1 µs per call). Validation, input and output together: "
        f"{1000 * validation / n:.3f} ms per chunk ({100 * validation / total:.2f} %):",
        common.table(["component", "ms per chunk", "share"], breakdown_rows),
    ])
    ratio = common.median(wall["stage"])

    def pair(name: str) -> str:
        return f"{common.median(wall[name]):.3f} / {common.median(cpu[name]):.3f}"

    summary = [label, best, window, common.spread([n / r["raw"].wall for r in rounds], "{:.1f}"),
               common.spread([n / r["stage"].wall for r in rounds], "{:.1f}"),
               f"**{ratio:.3f}**", f"{common.median(cpu['stage']):.3f}",
               "meets" if ratio >= TARGET else "**misses**",
               "= stage (best B)" if default_batch == best else pair(default_name(default_batch)),
               pair(ONE_BATCH)]
    if profile:
        common.log(f"[{label}] cProfile of one stage pass, W={window}, B={best} (top by own time)")
        print(bench.profile(specs["stage"]), file=sys.stderr)
    return summary, text


def main() -> int:
    settings = Settings()
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, help="chunks to encode (default 192, quick 24)")
    parser.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",")],
                        help="batch sizes of the sweep (default 8,16,32,64,128; quick 8,16)")
    parser.add_argument("--sweep-reps", type=int, help="rounds of the sweep (default 2, quick 1)")
    parser.add_argument("--reps", type=int, help="rounds side by side at the best B (default 5, quick 1)")
    parser.add_argument("--window", type=int, default=settings.embed_window,
                        help="records per handle call of the stage (default: ANONSTREAM_EMBED_WINDOW = "
                             f"{settings.embed_window}; capped at the chunk count)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one stage pass to stderr")
    parser.add_argument("--backend-reps", type=int, help="rounds of the backends side by side (default 3, quick 1)")
    parser.add_argument("--backends-only", action="store_true",
                        help="only the backends comparison (not the stage-vs-raw sections of issue 4)")
    args = parser.parse_args()
    quick = args.quick
    n_chunks = args.chunks or (24 if quick else 192)
    batches = args.batches or ([8, 16] if quick else [8, 16, 32, 64, 128])
    sweep_reps = args.sweep_reps or (1 if quick else 2)
    reps = args.reps or (1 if quick else 5)
    default_batch = settings.embed_batch

    default_threads = torch.get_num_threads()
    results = common.Results("embed", "Embed stage: torch vs ONNX Runtime (issue 13), stage vs raw `encode` "
                             "(issue 4)", quick)
    chunks, total_chunks = sample_chunks(n_chunks)
    messages = pii_wire_messages(chunks)
    ingest = IngestStage()
    corpora = {"sample (recipe chosen on)": [c.text for c in sample_chunks(24 if quick else None)[0]],
               "TAB dev (unseen)": [c.text for doc in dev_documents(4 if quick else None)
                                    for c in ingest.chunks(Document.from_wire(doc))]}
    window = min(len(chunks), args.window)
    backend_passes = [(1, "threads = 1")]
    if default_threads != 1:
        backend_passes.append((default_threads, f"threads = {default_threads} (default)"))
    backends, meets, rates = compare_backends(messages, corpora, window, default_batch,
                                              args.backend_reps or (1 if quick else 3), backend_passes)
    results.section(
        "Backends: torch vs ONNX Runtime fp32 vs int8 (issue 13)",
        f"Target: the embed stage with `ANONSTREAM_EMBED_BACKEND=onnx` (int8, `onnx-int8` below) ≥ {BACKEND_TARGET}× today's "
        f"(torch) chunks/s, its vectors within {COSINE_BOUND} cosine of torch's — "
        f"**{'met' if meets else 'not met'}**. The stage as it ships, W = {window} records per `handle` call "
        f"(windows of the configured {settings.embed_window}, capped at the sample), model batches of the "
        f"configured B = {default_batch}, the backends taking turns window by window; ONNX Runtime's "
        f"intra-op threads = torch's threads in each pass. Inputs: {len(chunks)} chunks (every "
        f"{total_chunks / len(chunks):.1f}-th of the {total_chunks} chunks of `data/sample/tab-train-100.jsonl`) "
        f"as chunks-pii wire records. `onnx-int8` (shipped): dynamic quantization (weights per channel, 7-bit "
        f"range) of every MatMul except each layer's feed-forward output projection.",
    )
    results.add(backends)
    results.section("Roofline: how close each backend runs to this CPU's limit (issue 13)",
                    roofline([c.text for c in chunks], rates, backend_passes[-1][0]))
    if args.backends_only:
        results.add(f"Run with `--backends-only`: the stage-vs-raw sections (issue 4) were not run. Peak RSS "
                    f"{common.peak_rss_mib():.0f} MiB.")
        results.write()
        return 0

    with common.timed() as load:
        bench = Bench(chunks, messages)

    passes = [(1, "torch threads = 1")]
    if default_threads != 1:
        passes.append((default_threads, f"torch threads = {default_threads} (default)"))
    summaries, texts = [], []
    for threads, label in passes:
        summary, text = run_pass(bench, threads, label, batches, sweep_reps, reps, window, default_batch,
                                 args.profile)
        summaries.append(summary)
        texts.append(text)
    torch.set_num_threads(default_threads)

    results.section(
        "Stage vs raw `encode`, torch backend (issue 4)",
        f"Target: stage ≥ {TARGET}× raw `encode` throughput at the best batch size. The stage as it "
        f"ships: the service hands `StageDriver.handle` windows of up to `ANONSTREAM_EMBED_WINDOW` = "
        f"{settings.embed_window} records, the `Embedder` cuts model batches of `ANONSTREAM_EMBED_BATCH` "
        f"= {default_batch} (`encode` sorts each window by length first), and output validation checks "
        f"the embedding vector natively (length = dim, finite) rather than item by item. Here W = "
        f"{window} (the window capped at the sample) and the model batch is the best B of the raw sweep; "
        f"the configured B = {default_batch} is reported too. Inputs: {bench.n} "
        f"chunks (every {total_chunks / bench.n:.1f}-th of the {total_chunks} chunks that `IngestStage` makes "
        f"of `data/sample/tab-train-100.jsonl`) as chunks-pii wire records (no entities, lineage "
        f"ingest+pii); {token_stats(bench.encoder, bench.texts)}. Model `{DEFAULT_MODEL}` "
        f"(dim {bench.embedder.dim}, loaded in {load.wall:.1f} s, not counted). Peak RSS "
        f"{common.peak_rss_mib():.0f} MiB."
    )
    results.add(common.table(
        ["pass", "best B", "W", "raw chunks/s", "stage chunks/s", "stage ÷ raw (wall)", "(CPU)", f"≥ {TARGET}?",
         f"stage at B = {default_batch} ÷ raw (wall / CPU)", "one model batch per call ÷ raw (wall / CPU)"],
        summaries))
    results.add(
        "Chunks/s are medians of the side-by-side rounds; the machine's load moves between the sweep "
        "and those rounds, so compare absolute numbers only within one table, and read the ratios. "
        "With one torch thread the CPU-time ratio is the steadier estimate of the same ratio (waiting "
        "for a core is not counted); with two threads both count the threads' spinning at barriers. "
        "A window step is W records (several model batches), so the headline stage takes fewer, "
        "longer turns than the per-batch variants and its ratio varies more from round to round."
    )
    for text in texts:
        results.add(text)
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
