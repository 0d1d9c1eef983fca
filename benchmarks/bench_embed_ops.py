"""Where the ONNX Runtime embedding spends its time, per operator (issue 13, item 7).

    nice -n 10 .venv/bin/python benchmarks/bench_embed_ops.py [--chunks N] [--threads T]

The shipped int8 and fp32 exports (``embedding_onnx``) encode the same chunks of the sample corpus
(``bench_embed.sample_chunks``: the ingest stage's chunks of ``data/sample/tab-train-100.jsonl``) with ONNX Runtime's
profiler on (``SessionOptions.enable_profiling``); its per-node kernel times are summed by operator type. One warm-up
``encode`` before the profiled one. The fused operators are the BERT optimizer's: ``QAttention`` / ``Attention``
hold the Q, K, V projections and the attention itself, ``DynamicQuantizeMatMul`` an int8 linear layer with its
activations quantized per call, ``MatMul`` a linear layer left in fp32 (in int8: each layer's feed-forward output
projection), ``SkipLayerNormalization`` the residual add and layer norm, ``BiasGelu`` the feed-forward activation.
"""
from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import common
from anonstream.embedding import DEFAULT_MODEL, resolve_model_path
from anonstream.embedding_onnx import PRECISIONS, OnnxEncoder, session_options
from bench_embed import sample_chunks


def op_profile(encoder: OnnxEncoder, texts: list[str], batch: int, threads: int) -> tuple[dict[str, float], float]:
    """(operator type -> kernel seconds, wall seconds) of one profiled ``encode`` of ``texts``."""
    import onnxruntime

    options = session_options(threads)
    options.enable_profiling = True
    encoder.session = onnxruntime.InferenceSession(str(encoder.path), options, providers=["CPUExecutionProvider"])
    encoder.encode(texts[:batch], batch)  # warm-up
    started = time.perf_counter()
    encoder.encode(texts, batch)
    wall = time.perf_counter() - started
    trace = Path(encoder.session.end_profiling())
    per_op: dict[str, float] = defaultdict(float)
    for event in json.loads(trace.read_text()):
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            per_op[event["args"]["op_name"]] += event["dur"] / 1e6
    trace.unlink()
    return dict(per_op), wall


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, help="chunks to encode (default 192, quick 24)")
    parser.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads (default 2)")
    parser.add_argument("--batch", type=int, default=16, help="model batch size (the stage's default 16)")
    parser.add_argument("--rounds", type=int, help="profiled encodes per export, taking turns (default 3, quick 1)")
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 3)
    chunks, total = sample_chunks(args.chunks or (24 if args.quick else 192))
    texts = [c.text for c in chunks]
    path = resolve_model_path(DEFAULT_MODEL)
    encoders = {precision: OnnxEncoder(path, precision, args.threads) for precision in PRECISIONS}
    per_op: dict[str, dict[str, float]] = {p: defaultdict(float) for p in PRECISIONS}
    walls: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for r in range(args.rounds):  # the exports take turns, so they share the machine's load
        for precision in (PRECISIONS if r % 2 == 0 else PRECISIONS[::-1]):
            ops, wall = op_profile(encoders[precision], texts, args.batch, args.threads)
            for op, seconds in ops.items():
                per_op[precision][op] += seconds
            walls[precision].append(wall)
            common.log(f"round {r + 1}: {precision} {wall:.2f} s")
    rows, sections = [], []
    for precision, encoder in encoders.items():
        tokens = sum(len(ids) for ids in encoder.tokenizer(texts, truncation="longest_first",
                                                           max_length=encoder.max_seq_length)["input_ids"])
        kernels = sum(per_op[precision].values())
        rows.append([f"`{precision}`", common.spread([len(texts) / w for w in walls[precision]], "{:.1f}"),
                     f"{tokens / len(texts):.0f}"])
        sections.append(f"**{precision}** (kernel seconds summed over the rounds)\n\n" + common.table(
            ["operator", "kernel s", "share of kernel time"],
            [[op, f"{t:.3f}", f"{100 * t / kernels:.1f} %"]
             for op, t in sorted(per_op[precision].items(), key=lambda x: -x[1]) if t / kernels >= 0.001]))
    res = common.Results("embed_ops", "ONNX Runtime embedding: time per operator (issue 13, item 7)", args.quick)
    res.add(__doc__.split("\n", 3)[3].strip())
    res.section("Per export", f"{len(texts)} chunks (every {total / len(texts):.1f}-th of the sample corpus's {total}), "
                f"model batches of {args.batch}, {args.threads} intra-op threads, {args.rounds} rounds; chunks/s "
                "median (min–max) over the rounds.\n\n"
                + common.table(["export", "chunks/s", "tokens per chunk"], rows) + "\n\n" + "\n\n".join(sections))
    res.write()
    print(res.path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
