"""The embedding backend judged by what it does to the release (issue 27, items 2 and 3): today's backend and the
candidates side by side in one run.

Variants (``ANONSTREAM_EMBED_BACKEND`` and friends, each in fresh child processes taking turns a, b, c, c, b, a):
``onnx`` (today's default: MiniLM's transformer in ONNX Runtime, int8), ``onnx-fp32`` (the same export unquantized),
``onnx-128`` (int8, token cut-off 128 instead of the model's 256), ``static`` (a token table distilled from the shipped
MiniLM, ``anonstream.embedding.static``: Model2Vec's recipe, PCA 256, no transformer at run time).

1. **Throughput and the release on TAB**: ``anonstream.runtime.embedded.run`` (what ``anonstream run`` calls) on the
   first ``--documents`` of the unseen TAB dev texts (``bench_kafka.dev_documents``), the swap stage's draws seeded.
   Per run: words/s (model loading excluded), DU as the audit reports it (in the variant's own space), and per chunk
   the embed stage's text and vector, the final mixture's component and, if the release changed it, its text after. With ``--presidio``, Presidio
   analyze+anonymize (``bench_kafka.PresidioAnonymize``, same spaCy model) on the same documents in this process
   once per round, between the variants: run ÷ Presidio within the round.
2. **Swap partner quality**: for each pair of chunks that exchanged values (swap log ``partner``), the cosine of the
   two chunks' texts under MiniLM (``onnx-fp32``, the fixed reference whichever backend chose the partners);
   mean over pairs, and the same for random pairs of the chunks that had values to swap (the floor).
3. **Agreement of mixture assignments**: ARI between a variant's and ``onnx``'s components (each run's last mixture
   assigning its own vectors) over the chunks both embedded; as the scale, ``onnx`` against a mixture refitted on its
   own vectors with another seed (``fit_mixture(seed=1)``, same family and K).
4. **DU in one space**: eq. 2.19 for every changed chunk with MiniLM vectors before and after under one mixture
   fitted on MiniLM vectors of today's run (the audit's own DU is in each variant's space and mixture, so its
   values are not comparable across spaces).
5. **The MAEC attack** (``--attack-calls N``, 0: off): ``anonstream run`` of each variant on the first N 2016Q3
   earnings calls, ``anonstream attack`` trained on 2016Q2 raw, tested before and after; the accuracy drop in points.

Targets (issue 27): partners ≥ 0.95× today's mean MiniLM cosine, attack drop within 2 points, DU within 0.01,
run ≥ 2× Presidio.

    .venv/bin/python benchmarks/bench_embed_backends.py --documents 30 --rounds 2 --presidio --attack-calls 40
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import orjson

import common

VARIANTS = {
    "onnx": {"ANONSTREAM_EMBED_BACKEND": "onnx"},
    "onnx-fp32": {"ANONSTREAM_EMBED_BACKEND": "onnx-fp32"},
    "onnx-128": {"ANONSTREAM_EMBED_BACKEND": "onnx", "BENCH_MAX_TOKENS": "128"},
    "static": {"ANONSTREAM_EMBED_BACKEND": "static"},
}
BASE = "onnx"
EARNINGS = common.REPO.parent / "shared" / "data" / "earnings" / "maec-2016q2-q3.jsonl"
ANONSTREAM = [sys.executable, "-m", "anonstream.cli"]


def documents(source: str, limit: int | None) -> list[dict]:
    if source == "dev":
        from bench_kafka import dev_documents

        return dev_documents(limit)
    return common.read_documents(limit=limit)


def child(variant: str, source: str, limit: int, out: Path) -> dict:
    """One ``embedded.run`` in this process with the variant's environment; per chunk text, vector, component."""
    os.environ.update({k: v for k, v in VARIANTS[variant].items() if k.startswith("ANONSTREAM_")})
    cut = VARIANTS[variant].get("BENCH_MAX_TOKENS")
    if cut:
        from anonstream.embedding import onnx as onnx_backend

        load_tokenizer = onnx_backend.load_tokenizer
        onnx_backend.load_tokenizer = lambda path: (load_tokenizer(path)[0], int(cut))
    from anonstream.runtime import embedded

    docs = documents(source, limit) if source != "file" else common.read_documents(Path(os.environ["BENCH_INPUT"]))
    built: list = []
    texts: dict[str, str] = {}
    vectors: dict[str, list[float]] = {}
    after: dict[str, str] = {}  # the released text of every chunk the release changed
    build_stages = embedded.build_stages

    def seeded(*args, **kwargs):
        stages = build_stages(*args, **kwargs)
        next(s for s in stages if s.name == "swap").processor.rng = random.Random(0)
        embed = next(s for s in stages if s.name == "embed")
        process = embed.process

        def capture(items):
            result = process(items)
            for _, chunk in items:
                key = f"{chunk.doc_id}|{chunk.chunk_index}"
                texts[key] = chunk.text
                if chunk.embedding is not None:
                    vectors[key] = chunk.embedding["vector"]
            return result

        embed.process = capture
        audit = next(s for s in stages if s.name == "audit")
        audit_process = audit.process

        def capture_released(items):
            for topic, record in items:
                if isinstance(record, dict) and record.get("changes") and "text" in record:
                    after[f"{record['doc_id']}|{record['chunk_index']}"] = record["text"]
            return audit_process(items)

        audit.process = capture_released
        built.extend(stages)
        return stages

    embedded.build_stages = seeded
    source_path = out / "input.jsonl"
    source_path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
    report = embedded.run(source_path, out / "sanitized.jsonl", out / "report.json", progress=False)
    stage = {s.name: s for s in built}
    cluster = stage["cluster"]
    keys = sorted(vectors)
    X = np.asarray([vectors[k] for k in keys], dtype=np.float32)
    components = cluster.model.assign(X)[0].tolist() if cluster.model is not None and len(X) else []
    pairs = sorted({tuple(sorted((f"{r['doc_id']}|{r['chunk_index']}",
                                  f"{r['partner']['doc_id']}|{r['partner']['chunk_index']}")))
                    for r in report.swap_log if r.get("partner")})
    with_values = sorted(f"{r['doc_id']}|{r['chunk_index']}" for r in report.swap_log if r["reason"] != "no_values")
    utility = next(iter(report.audit.get("risk", {}).values()), {}).get("utility", {})
    np.save(out / "vectors.npy", X)
    (out / "chunks.json").write_text(json.dumps({"keys": keys, "components": components, "texts": texts,
                                                 "pairs": pairs, "with_values": with_values,
                                                 "after": after}))
    return {"variant": variant, "seconds": report.seconds, "words": sum(len(d["text"].split()) for d in docs),
            "documents": report.documents_in, "documents_out": report.documents_out,
            "embedded": stage["embed"].metrics()["embedded"], "chunks": len(texts), "du": utility.get("du"),
            "space": stage["embed"].embedder.model_name,
            "dim": int(X.shape[1]) if len(X) else 0, "model_versions": len(report.model_updates),
            "mixture": {"family": cluster.model.family.value, "k": int(cluster.model.k)} if cluster.model else None,
            "dead_letters": dict(report.dead_letters_by_stage)}


def run_child(variant: str, source: str, limit: int, out: Path, env: dict | None = None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, __file__, "--child", variant, "--source", source, "--documents", str(limit),
            "--out", str(out)]
    result = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=common.REPO,
                            env={**os.environ, **(env or {})})
    return {**json.loads(result.stdout.strip().splitlines()[-1]), "out": str(out)}


def reference_cosines(runs: dict[str, dict], reference) -> dict[str, dict]:
    """Per variant: mean MiniLM cosine of its swap pairs, and of as many random pairs of its chunks with values."""
    out = {}
    for variant, run in runs.items():
        data = json.loads((Path(run["out"]) / "chunks.json").read_text())
        texts, pairs = data["texts"], data["pairs"]
        keys = sorted({k for p in pairs for k in p} | set(data["with_values"]))
        keys = [k for k in keys if k in texts]
        index = {k: i for i, k in enumerate(keys)}
        V = reference.encode([texts[k] for k in keys])
        swapped = [float(V[index[a]] @ V[index[b]]) for a, b in pairs if a in index and b in index]
        rng = np.random.default_rng(0)
        pool = [index[k] for k in data["with_values"] if k in index]
        rand = []
        for _ in range(max(len(swapped), 1) * 20):
            i, j = rng.choice(pool, 2, replace=False)
            rand.append(float(V[i] @ V[j]))
        out[variant] = {"pairs": len(swapped), "mean": float(np.mean(swapped)) if swapped else float("nan"),
                        "se": float(np.std(swapped, ddof=1) / np.sqrt(len(swapped))) if len(swapped) > 1 else 0.0,
                        "random": float(np.mean(rand))}
    return out


def reference_du(runs: dict[str, dict], reference, k: int = 8) -> dict[str, dict]:
    """DU (eq. 2.19) of each variant's release in one fixed space: MiniLM vectors of the changed chunks before and
    after, under one mixture fitted on MiniLM vectors of the base run's embedded chunks (pkb, ``k``, seed 0),
    the component taken from the chunk before."""
    from anonstream.mixture.em import fit_mixture

    base = json.loads((Path(runs[BASE]["out"]) / "chunks.json").read_text())
    keys = sorted(base["keys"])
    mixture = fit_mixture(reference.encode([base["texts"][key] for key in keys]), "pkb", min(k, len(keys) // 4))
    out = {}
    for variant, run in runs.items():
        data = json.loads((Path(run["out"]) / "chunks.json").read_text())
        changed = sorted(key for key in data["after"] if key in data["texts"])
        if not changed:
            continue
        before = reference.encode([data["texts"][key] for key in changed])
        after = reference.encode([data["after"][key] for key in changed])
        labels = mixture.assign(before)[0]
        rows = np.arange(len(changed))
        log_before = mixture.log_component_densities(before)[rows, labels].sum()
        log_after = mixture.log_component_densities(after)[rows, labels].sum()
        out[variant] = {"du": float(log_after / log_before), "changed": len(changed),
                        "cosine": float(np.mean(np.sum(before * after, axis=1)))}
    return out


def agreement(runs: dict[str, dict]) -> tuple[dict[str, float], float | None]:
    """ARI of each variant's components against the base's on the chunks both embedded; the base against a
    mixture refitted on its own vectors with another seed."""
    from sklearn.metrics import adjusted_rand_score

    from anonstream.mixture.em import fit_mixture

    def load(run):
        data = json.loads((Path(run["out"]) / "chunks.json").read_text())
        return dict(zip(data["keys"], data["components"])), np.load(Path(run["out"]) / "vectors.npy"), data["keys"]

    base, X, keys = load(runs[BASE])
    out = {}
    for variant, run in runs.items():
        other = load(run)[0]
        common_keys = sorted(set(base) & set(other))
        out[variant] = float(adjusted_rand_score([base[k] for k in common_keys], [other[k] for k in common_keys]))
    mixture = runs[BASE].get("mixture")
    reseeded = None
    if mixture and len(X) >= 4 * mixture["k"]:
        model = fit_mixture(X, mixture["family"], mixture["k"], seed=1)
        reseeded = float(adjusted_rand_score([base[k] for k in keys], model.assign(X)[0].tolist()))
    return out, reseeded


def attack(variants: list[str], calls: int, work: Path) -> dict[str, dict]:
    """The MAEC attack on the first ``calls`` 2016Q3 calls released by each variant (train 2016Q2 raw)."""
    split = work / "maec"
    subprocess.run(ANONSTREAM + ["attack", "split", "--corpus", str(EARNINGS), "--out", str(split)], check=True,
                   capture_output=True, cwd=common.REPO)
    test = work / "q3.jsonl"
    lines = [line for line in (split / "2016Q3.jsonl").read_bytes().splitlines() if line.strip()][:calls]
    test.write_bytes(b"\n".join(lines) + b"\n")
    out = {}
    for variant in variants:
        common.log(f"attack: {variant} releases {calls} calls")
        run = run_child(variant, "file", calls, work / f"maec-{variant}", env={"BENCH_INPUT": str(test)})
        result = work / f"attack-{variant}.json"
        done = subprocess.run(ANONSTREAM + ["attack", "--train", str(split / "2016Q2.jsonl"), "--test", str(test),
                                            "--sanitized", str(Path(run["out"]) / "sanitized.jsonl"), "--json",
                                            str(result)], capture_output=True, text=True, cwd=common.REPO)
        if done.returncode:
            common.log(f"attack on {variant} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        data = json.loads(result.read_text())
        out[variant] = {name: {"before": a["accuracy_before_paired"], "after": a["accuracy_after"],
                               "chunks": a["paired_chunks"]} for name, a in data["attackers"].items()}
        out[variant]["_run"] = run
    return out


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="first N documents (default 30, quick 6)")
    parser.add_argument("--rounds", type=int, help="runs per variant, taking turns (default 2, quick 1)")
    parser.add_argument("--source", choices=("dev", "train", "file"), default="dev",
                        help="dev: the unseen TAB dev texts (default); train: data/sample/tab-train-100.jsonl")
    parser.add_argument("--variants", default="onnx,static,onnx-fp32,onnx-128",
                        help=f"comma-separated, the first is today's (of {', '.join(VARIANTS)})")
    parser.add_argument("--presidio", action="store_true", help="Presidio analyze+anonymize once per round")
    parser.add_argument("--attack-calls", type=int, help="MAEC 2016Q3 calls for the attack (default 40, quick 0)")
    parser.add_argument("--child", choices=VARIANTS)
    parser.add_argument("--out")
    parser.add_argument("--keep", help="a directory for the runs' files and figures (default: a temporary one)")
    args = parser.parse_args()
    limit = args.documents or (6 if args.quick else 30)
    if args.child:
        print(json.dumps(child(args.child, args.source, limit, Path(args.out))))
        return 0
    rounds = args.rounds or (1 if args.quick else 2)
    calls = args.attack_calls if args.attack_calls is not None else (0 if args.quick else 40)
    variants = args.variants.split(",")
    if variants[0] != BASE or not set(variants) <= set(VARIANTS):
        parser.error(f"--variants: {BASE} first, then any of {', '.join(VARIANTS)}")
    docs = documents(args.source, limit)
    presidio = None
    if args.presidio:
        from bench_kafka import PresidioAnonymize

        presidio = PresidioAnonymize()
        presidio.run(docs[:2])
    systems = variants + (["presidio"] if presidio else [])
    runs: dict[str, list[dict]] = {s: [] for s in systems}
    with tempfile.TemporaryDirectory(prefix="anonstream-bench-backends-") as tmp:
        work = Path(args.keep or tmp)
        for i in range(rounds):
            for system in (systems if i % 2 == 0 else systems[::-1]):
                common.log(f"round {i + 1}/{rounds}: {system}")
                if system == "presidio":
                    with common.timed() as t:
                        presidio.run(docs)
                    runs[system].append({"seconds": t.wall, "cpu": t.cpu})
                else:
                    runs[system].append(run_child(system, args.source, limit, work / f"{system}-{i}"))
                common.log(f"  {runs[system][-1]['seconds']:.1f} s")
        first = {v: runs[v][0] for v in variants}
        from anonstream.embedding import Embedder

        common.log("MiniLM reference cosines")
        reference = Embedder(batch_size=64, backend="onnx-fp32")
        cosines = reference_cosines(first, reference)
        ari, reseeded = agreement(first)
        du = reference_du(first, reference)
        (work / "figures.json").write_text(json.dumps({"runs": runs, "cosines": cosines, "ari": ari,
                                                      "reseeded": reseeded, "du": du}))
        attacked = attack(variants, calls, work) if calls else {}
        (work / "attack.json").write_text(json.dumps(attacked))
    write(args, variants, runs, cosines, ari, reseeded, du, attacked, calls, presidio)
    return 0


def write(args, variants, runs, cosines, ari, reseeded, du, attacked, calls, presidio) -> None:
    results = common.Results("embed_backends", "Embedding backends judged by the release: today's vs the candidates "
                             "(issue 27)", args.quick)
    base = runs[BASE][0]
    corpus = ("the unseen TAB dev texts (`bench_kafka.dev_documents`)" if args.source == "dev"
              else "`data/sample/tab-train-100.jsonl`")
    results.add(f"`anonstream.runtime.embedded.run` on the first {base['documents']} documents of {corpus} "
                f"({base['words']} words), {len(runs[BASE])} runs per variant in fresh child processes taking turns"
                + (", Presidio analyze+anonymize in this process once per round" if presidio else "")
                + ". Variants: " + "; ".join(f"`{v}`: " + " ".join(f"{k}={x}" for k, x in VARIANTS[v].items())
                                             for v in variants)
                + ". Partner cosine: mean MiniLM (onnx-fp32) cosine between the two chunks of each swap pair, "
                  "whichever backend chose the pairs; random: random pairs of chunks with values, the floor. ARI: "
                  f"components of each run's last mixture against `{BASE}`'s on the chunks both embedded"
                + (f" (`{BASE}` against its own vectors refitted with another seed: **{reseeded:.2f}**)"
                   if reseeded is not None else "") + ". DU (own space): as the audit reports it, in the variant's own space and mixture; DU in MiniLM: the same "
                  "ratio (eq. 2.19) for every chunk the release changed, in one fixed space (MiniLM vectors before and "
                  f"after under one pkb mixture fitted on `{BASE}`'s chunks' MiniLM vectors), comparable across variants.")
    rows = []
    for v in variants:
        rs = runs[v]
        c = cosines[v]
        ratio = [b["seconds"] / r["seconds"] for b, r in zip(runs[BASE], rs)]
        row = [f"`{v}`", f"`{rs[0]['space']}` ({rs[0]['dim']})",
               common.spread([r["words"] / r["seconds"] for r in rs], "{:.0f}"), common.spread(ratio)]
        if presidio:
            row.append(common.spread([p["seconds"] / r["seconds"] for p, r in zip(runs["presidio"], rs)]))
        row += [f"{c['mean']:.3f} ± {c.get('se', 0):.3f} ({c['pairs']})", f"{c['mean'] / cosines[BASE]['mean']:.3f}", f"{c['random']:.3f}",
                f"{ari[v]:.2f}", (rs[0]["mixture"] or {}).get("k", "–"), "–" if rs[0]["du"] is None else f"{rs[0]['du']:.3f}",
                f"{du[v]['du']:.4f} ({du[v]['changed']})" if v in du else "–",
                f"{rs[0]['embedded']}/{rs[0]['chunks']}"]
        rows.append(row)
    header = ["variant", "space (dim)", "words/s", f"÷ {BASE} time"] + (["run ÷ Presidio"] if presidio else []) + [
        "partner cosine ± s.e. (pairs)", f"÷ {BASE}", "random pairs", f"ARI vs {BASE}", "mixture K", "DU (own space)", "DU in MiniLM (changed chunks)", "chunks embedded"]
    results.add(common.table(header, rows))
    if presidio:
        p = runs["presidio"]
        results.add(f"Presidio analyze+anonymize: {common.spread([base['words'] / r['seconds'] for r in p], '{:.0f}')} "
                    "words/s (same documents, same spaCy model).")
    if attacked:
        rows = []
        for v in variants:
            if v not in attacked or BASE not in attacked:
                rows.append([f"`{v}`", "(attack failed)", "", "", "", "", ""])
                continue
            for name, a in attacked[v].items():
                if name.startswith("_"):
                    continue
                drop = 100 * (a["before"] - a["after"])
                base_drop = 100 * (attacked[BASE][name]["before"] - attacked[BASE][name]["after"])
                rows.append([f"`{v}`", name, a["chunks"], f"{a['before']:.4f}", f"{a['after']:.4f}", f"{drop:.1f}",
                             f"{drop - base_drop:+.1f}"])
        results.section(f"MAEC attack: the first {calls} 2016Q3 calls, trained on 2016Q2 raw", common.table(
            ["variant", "attacker", "chunks", "accuracy before", "after", "drop (points)", f"vs {BASE}"], rows))
    results.add("Targets: partner cosine ≥ 0.95× today's, attack drop within 2 points, DU within 0.01, "
                "run ≥ 2× Presidio.")
    results.write()


if __name__ == "__main__":
    sys.exit(main())
