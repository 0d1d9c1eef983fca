"""Which linear layers of the embedding can be int8: quantization recipes side by side (issue 13, item 7).

    .venv/bin/python benchmarks/bench_embed_recipes.py [--chunks N] [--rounds R] [--threads T]

The shipped int8 export (``embedding_onnx``) quantizes every MatMul except each layer's feed-forward output
projection (the GELU outputs' outlier channels). The recipes here start from the same optimized fp32 graph and
quantize (``embedding_onnx.dynamic_int8``, the shipped settings) a different set of MatMuls:

* ``shipped`` — every feed-forward output projection fp32 (what ``ANONSTREAM_EMBED_BACKEND=onnx`` runs);
* ``ffn-out L<i>`` — as shipped, but layer i's feed-forward output projection int8 too;
* ``all-int8`` — every MatMul int8;
* ``nbits<b>-block32`` — every MatMul (the attention's Q, K, V projections stay fp32 inside the fused
  ``Attention``) as ONNX Runtime's ``MatMulNBits``: b-bit weights in blocks of 32 along the input dimension,
  each with its own scale, and ``accuracy_level`` 4, under which the activations too are quantized to int8 per
  block of 32 of each row (finer than the per-tensor scale of dynamic quantization, so an outlier channel costs
  only its block's precision).

For each recipe: the cosine of its vectors with torch's (``SentenceTransformer.encode``) over every chunk of the
sample corpus (where the shipped recipe was chosen, ``bench_embed.sample_chunks``), and its speed: ``encode``
of a subset of those chunks in model batches of 16, the recipes taking turns batch by batch
(``common.interleaved_steps``), chunks/s ÷ ``shipped``'s in the same round, median (min–max) over rounds.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

import common
from anonstream.embedding import DEFAULT_MODEL, Embedder, resolve_model_path
from anonstream.embedding_onnx import OnnxEncoder, dynamic_int8, exported, ffn_output_projections
from bench_embed import sample_chunks

COSINE_BOUND = 0.99
BATCH = 16


def recipes(fp32: Path, directory: Path) -> dict[str, Path]:
    """{recipe name: its int8 ONNX file}; ``shipped`` is the cached export itself."""
    names = [n.name for n in ffn_output_projections(onnx.load(str(fp32)).graph)]
    out = {"shipped": exported(resolve_model_path(DEFAULT_MODEL), "int8")}
    for layer in range(len(names)):
        out[f"ffn-out L{layer}"] = directory / f"ffn-out-{layer}.onnx"
        dynamic_int8(fp32, out[f"ffn-out L{layer}"], [n for i, n in enumerate(names) if i != layer])
    out["all-int8"] = directory / "all-int8.onnx"
    dynamic_int8(fp32, out["all-int8"])
    for bits in (8, 4):
        out[f"nbits{bits}-block32"] = directory / f"nbits{bits}.onnx"
        blockwise(fp32, out[f"nbits{bits}-block32"], bits)
    return out


def blockwise(source: Path, target: Path, bits: int) -> None:
    """Every MatMul of ``source`` as ``MatMulNBits``: symmetric ``bits``-bit weights in blocks of 32, int8
    activations per block (``accuracy_level`` 4)."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), bits=bits, block_size=32, is_symmetric=True,
                                     accuracy_level=4)
    quantizer.process()
    quantizer.model.save_model_to_file(str(target), use_external_data_format=False)


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, help="chunks of the speed comparison (default 192, quick 24)")
    parser.add_argument("--rounds", type=int, help="rounds side by side (default 3, quick 1)")
    parser.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads (default 2)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    every, total = sample_chunks(24 if args.quick else None)
    texts = [c.text for c in every]
    timed_chunks, _ = sample_chunks(args.chunks or (24 if args.quick else 192))
    timed_texts = [c.text for c in timed_chunks]
    model = resolve_model_path(DEFAULT_MODEL)
    common.log(f"torch vectors of {len(texts)} chunks")
    reference = Embedder(DEFAULT_MODEL, BATCH, backend="torch").encode(texts)
    with tempfile.TemporaryDirectory(prefix="bench-embed-recipes-") as work:
        files = recipes(exported(model, "fp32"), Path(work))
        encoders = {name: OnnxEncoder(model, "int8", args.threads, path=path) for name, path in files.items()}
        cosines = {}
        for name, encoder in encoders.items():
            common.log(f"cosines: {name}")
            cosines[name] = np.sum(encoder.encode(texts, BATCH) * reference, axis=1)
        batches = [timed_texts[i:i + BATCH] for i in range(0, len(timed_texts), BATCH)]
        steps = {name: [lambda e=encoder, b=b: e.encode(b, BATCH) for b in batches] for name, encoder in encoders.items()}
        for encoder in encoders.values():
            encoder.encode(batches[0], BATCH)  # warm-up
        timings = common.interleaved_steps(steps, rounds, common.log)
    rows = []
    for name in encoders:
        rate = [len(timed_texts) / t[name].wall for t in timings]
        ratio = [t["shipped"].wall / t[name].wall for t in timings]
        cos = cosines[name]
        rows.append([f"`{name}`", f"{cos.min():.4f}", f"{np.percentile(cos, 1):.4f}", f"{cos.mean():.4f}",
                     "meets" if cos.min() >= COSINE_BOUND else "**no**", common.spread(rate, "{:.1f}"),
                     common.spread(ratio)])
    res = common.Results("embed_recipes", "Embedding: which linear layers can be int8 (issue 13, item 7)", args.quick)
    res.add(__doc__.split("\n\n", 2)[2].strip())
    res.add(f"Cosines over {len(texts)} chunks (of the sample corpus's {total}); speed over {len(timed_texts)} of them, "
            f"{args.threads} intra-op threads, {rounds} rounds.\n\n"
            + common.table(["recipe", "min cosine", "p1", "mean", f"min ≥ {COSINE_BOUND}?", "chunks/s",
                            "÷ shipped (wall)"], rows))
    res.write()
    print(res.path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
