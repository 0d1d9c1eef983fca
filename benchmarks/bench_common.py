"""What releasing common values costs and buys: ``common_k`` chosen by its effect on the attacker.

A QUASI named value that at least ``common_k`` protected identities mention is released as written
(shared/anonstream/commonness.py). This bench runs the same texts through releases that differ only in ``common_k``
(off, then several thresholds), side by side in one run:

1. Earnings calls (the company is the secret, identity field ``ticker``): the counts start from a reference corpus,
   MAEC calls of companies *outside* the attack set (``anonstream counts warm``, one call per company unless
   ``--calls-per-company``), then ``anonstream run --counts`` on the 185 calls of 2016Q3 and ``anonstream attack``
   trained on 2016Q2: accuracy of the full-text and capitalized-words attackers before/after, tokens unchanged,
   and how many mentions were released as common.
2. TAB (identity: the document): ``anonstream run`` on the 100 bundled documents counting on the stream itself
   (cold start), scored on annotator agreement by ``anonstream evaluate-release``: agreed QUASI changed, agreed
   NO_MASK kept, DIRECT surviving.

    .venv/bin/python benchmarks/bench_common.py [--thresholds 10,20,40] [--quick]

``--quick``: 30 calls and 20 TAB documents (a smoke run; figures not comparable).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import common

ANONSTREAM = [sys.executable, "-m", "anonstream.cli"]
SHARED = common.REPO.parent / "shared"
EARNINGS_ALL = SHARED / "data" / "earnings" / "maec-all.jsonl"
EARNINGS_PAIR = SHARED / "data" / "earnings" / "maec-2016q2-q3.jsonl"
TAB_GOLD = SHARED / "data" / "tab" / "echr_train_first100.json"


def reference_corpus(out: Path, calls_per_company: int) -> int:
    """MAEC calls of the companies that are not in the attack set, at most ``calls_per_company`` each."""
    attacked = {json.loads(line)["metadata"]["ticker"] for line in EARNINGS_PAIR.open(encoding="utf-8")}
    taken: dict[str, int] = {}
    with out.open("w", encoding="utf-8") as handle:
        for line in EARNINGS_ALL.open(encoding="utf-8"):
            doc = json.loads(line)
            ticker = doc["metadata"]["ticker"]
            if ticker in attacked or taken.get(ticker, 0) >= calls_per_company:
                continue
            taken[ticker] = taken.get(ticker, 0) + 1
            handle.write(json.dumps({"doc_id": doc["doc_id"], "text": doc["text"], "metadata": doc["metadata"]}) + "\n")
    return len(taken)


def release_file(path: Path, name: str, identity_field: str | None, common_k: int | None) -> Path:
    text = (common.REPO / "deploy" / "release.default.yaml").read_text(encoding="utf-8")
    text = text.replace("name: default", f"name: {name}", 1)
    # later keys of a YAML mapping win: the variant's settings replace the default's
    text += (f"\nidentity_field: {json.dumps(identity_field)}\ncommon_k: {'null' if common_k is None else common_k}\n"
             "common_share: 0.0\n")  # the threshold is common_k alone, whatever the default's share
    path.write_text(text, encoding="utf-8")
    return path


def run(input_path: Path, out_dir: Path, release: Path, counts: Path | None) -> dict:
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = ANONSTREAM + ["run", "--input", str(input_path), "--output", str(out_dir / "sanitized.jsonl"),
                         "--report", str(out_dir / "report.json"), "--quiet"]
    if counts is not None:
        argv += ["--counts", str(counts)]
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "ANONSTREAM_RELEASE": str(release)})
    if done.returncode != 0:
        raise SystemExit(f"anonstream run failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads((out_dir / "report.json").read_text())


def common_fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def first_lines(src: Path, dst: Path, n: int) -> Path:
    with src.open(encoding="utf-8") as handle:
        dst.write_text("".join(line for _, line in zip(range(n), handle)), encoding="utf-8")
    return dst


def main() -> int:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--thresholds", default="10,20,40", help="common_k values beside 'off'")
    parser.add_argument("--calls-per-company", type=int, default=1)
    parser.add_argument("--counts", help="reuse a reference counts file instead of counting again")
    args = parser.parse_args()
    variants: list[int | None] = [None] + [int(k) for k in args.thresholds.split(",") if k]
    results = common.Results("common", "Common values: common_k chosen by its effect on the attacker")
    with tempfile.TemporaryDirectory(prefix="bench-common-") as tmp:
        work = Path(tmp)
        split = work / "split"
        subprocess.run(ANONSTREAM + ["attack", "split", "--corpus", str(EARNINGS_PAIR), "--out", str(split)],
                       check=True, capture_output=True)
        test = split / "2016Q3.jsonl"
        tab = common.SAMPLE
        if args.quick:
            test = first_lines(test, work / "q3-quick.jsonl", 30)
            tab = first_lines(tab, work / "tab-quick.jsonl", 20)
        if args.counts:
            counts, companies = Path(args.counts), json.loads(Path(args.counts).read_text())["identities"]
            companies = len(companies)
        else:
            reference = work / "reference.jsonl"
            companies = reference_corpus(reference, args.calls_per_company)
            if args.quick:
                reference, companies = first_lines(reference, work / "reference-quick.jsonl", 40), 40
            counts = work / "counts.json"
            common.log(f"counts warm over {companies} companies' calls")
            with common.timed() as warm_time:
                subprocess.run(ANONSTREAM + ["counts", "warm", "--input", str(reference), "--identity-field", "ticker",
                                             "--out", str(counts), "--quiet"], check=True, capture_output=True)
            results.add(f"Reference counts: {companies} companies outside the attack set, "
                        f"{args.calls_per_company} call(s) each, counted in {warm_time.wall:.0f} s.")
        earnings_rows, tab_rows = [], []
        for k in variants:
            name = "off" if k is None else f"k{k}"
            common.log(f"earnings, common_k={k}")
            rel = release_file(work / f"release-earnings-{name}.yaml", f"earnings-{name}", "ticker", k)
            report = run(test, work / f"earnings-{name}", rel, counts)
            attack_json = work / f"attack-{name}.json"
            subprocess.run(ANONSTREAM + ["attack", "--train", str(split / "2016Q2.jsonl"), "--test", str(test),
                                         "--sanitized", str(work / f"earnings-{name}" / "sanitized.jsonl"),
                                         "--json", str(attack_json)], check=True, capture_output=True)
            attack = json.loads(attack_json.read_text())
            a = attack["attackers"]
            earnings_rows.append([
                "off" if k is None else k, report["audit"].get("decisions", {}).get("common", 0),
                f"{a['capitalized']['accuracy_before_paired']:.4f} → {a['capitalized']['accuracy_after']:.4f}",
                f"{a['capitalized']['relative_drop']:.3f}",
                f"{a['full']['accuracy_before_paired']:.4f} → {a['full']['accuracy_after']:.4f}",
                f"{attack['tokens']['unchanged_share']:.4f}", f"{report['documents_per_second']:.3f}"])
            common.log(f"TAB, common_k={k}")
            rel = release_file(work / f"release-tab-{name}.yaml", f"tab-{name}", None, k)
            report = run(tab, work / f"tab-{name}", rel, None)
            scored = subprocess.run(ANONSTREAM + ["evaluate-release", "--tab", str(TAB_GOLD), "--sanitized",
                                                  str(work / f"tab-{name}" / "sanitized.jsonl"), "--json"],
                                    check=True, capture_output=True, text=True)
            headline = json.loads(scored.stdout)["headline"]
            tab_rows.append(["off" if k is None else k, report["audit"].get("decisions", {}).get("common", 0)]
                            + [common_fmt(headline.get(m)) for m in ("agreed_quasi_changed_share", "agreed_no_mask_kept_share",
                                                                "direct_any_annotator_surviving_share")])
        results.section(
            f"Earnings calls: {'30' if args.quick else '185'} calls of 2016Q3, attacker trained on 2016Q2",
            common.table(["common_k", "mentions released as common", "capitalized attacker", "its relative drop",
                          "full-text attacker", "tokens unchanged", "documents/s"], earnings_rows)
            + "\n\nTargets (default release): capitalized-words attacker drops ≥ 70 % relative with ≥ 95 % of tokens "
              "unchanged.")
        results.section(
            f"TAB: {'20' if args.quick else '100'} documents, identity = the document, counts from the stream only",
            common.table(["common_k", "mentions released as common", "agreed QUASI changed", "agreed NO_MASK kept",
                          "DIRECT surviving"], tab_rows)
            + "\n\nTargets: agreed QUASI changed ≥ 0.98, agreed NO_MASK kept ≥ 0.95, DIRECT surviving 0.")
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
