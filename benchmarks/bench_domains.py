"""The release on three domains (issue 26, item 5): TAB court judgments, Wikipedia biographies, MAEC earnings calls.

``anonstream run`` (default release, the working tree) on each domain, then the judges of ``evaluate-release``:

1. TAB train (``data/sample/tab-train-100.jsonl``, gold ``echr_train_first100.json``): agreed QUASI changed, agreed
   NO_MASK kept, any annotator's DIRECT surviving, disputed mentions, R_quasi of all annotators, the kind by gold type
   against its random baseline, and the checks any domain can use (``evaluation/checks.py``).
2. The Wikipedia biographies (``wikibio/wiki_test.json``, one annotator per document): the same code path.
3. The MAEC earnings calls held out: the attack harness (train 2016Q2 raw, test 2016Q3 before and after) and the
   checks on a sample of the sanitized 2016Q3 calls, over-masking against the counts of one call of each company
   outside the test set (``anonstream counts warm --identity-field ticker``: a reference corpus other than the one
   the run counted). With ``--warm-counts`` the calls are released a second time from the counts of half those
   companies (a stream that has seen about 500 companies), and judged by the other half.

``--review-lines N`` writes N random changed lines per domain, original and sanitized side by side, to
``--review-out`` for a blind review (no code, no check verdicts in it).

    .venv/bin/python benchmarks/bench_domains.py [--quick] [--review-lines 50]

``--quick``: 5 TAB documents, 5 biographies, 4 test calls against a 20-company reference; a smoke run, not for
quoting.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import common

DATA = common.REPO.parent / "shared" / "data"
TAB_GOLD = DATA / "tab" / "echr_train_first100.json"
WIKIBIO = DATA / "wikibio" / "wiki_test.json"
EARNINGS = DATA / "earnings" / "maec-2016q2-q3.jsonl"
EARNINGS_ALL = DATA / "earnings" / "maec-all.jsonl"
ANONSTREAM = [str(common.REPO / ".venv" / "bin" / "python"), "-m", "anonstream.cli"]
TEST_PERIOD = "2016Q3"


SOURCE: Path | None = None  # --source: the package ``anonstream run`` uses (a baseline checkout's shared/)


def anonstream(*args: str, source: Path | None = None, release: Path | None = None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANONSTREAM_PII_CONFIG", "ANONSTREAM_RELEASE")}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    if release is not None:
        env["ANONSTREAM_RELEASE"] = str(release)
    subprocess.run(ANONSTREAM + list(args), check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_release(corpus: Path, out_dir: Path, counts: Path | None = None,
                release: Path | None = None) -> tuple[dict, Path]:
    """``anonstream run`` on ``corpus`` (from ``counts``, under ``release``): its report and the sanitized JSONL."""
    out_dir.mkdir(parents=True, exist_ok=True)
    sanitized = out_dir / "sanitized.jsonl"
    anonstream("run", "--input", str(corpus), "--output", str(sanitized), "--report", str(out_dir / "report.json"),
               "--quiet", *(["--counts", str(counts)] if counts else []), source=SOURCE, release=release)
    return json.loads((out_dir / "report.json").read_text()), sanitized


def split_counts(path: Path, work: Path) -> tuple[Path, Path]:
    """A counts file (``anonstream counts warm --out``) split by identity into two halves of alternate identities:
    one warms a stream, the other is the reference that stream's over-masking is judged by."""
    obj = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for half in (0, 1):
        keep = [i for i in range(len(obj["identities"])) if i % 2 == half]
        index = {old: new for new, old in enumerate(keep)}
        values = {k: [index[i] for i in v if i in index] for k, v in obj["values"].items()}
        half_path = work / f"reference-counts-{'warm' if half == 0 else 'judge'}.json"
        half_path.write_text(json.dumps({"identity_field": obj["identity_field"],
                                         "identities": [obj["identities"][i] for i in keep],
                                         "values": {k: v for k, v in values.items() if len(v) >= 2}}), encoding="utf-8")
        out.append(half_path)
    return out[0], out[1]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def changed_lines(raw: dict[str, str], sanitized: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(original, sanitized) of every changed line of the aligned documents."""
    out = []
    for doc_id, text in sanitized:
        old_lines, new_lines = raw.get(doc_id, "").split("\n"), text.split("\n")
        if doc_id in raw and len(old_lines) == len(new_lines):
            out += [(a, b) for a, b in zip(old_lines, new_lines) if a != b]
    return out


def review_file(domains: dict[str, list[tuple[str, str]]], n: int, seed: int) -> str:
    """N random changed lines per domain, side by side, numbered; nothing else."""
    rng = random.Random(seed)
    parts = ["# Changed lines for a blind review", "",
             "Each row: a line of the original document and the same line as released. Label every changed span."]
    for domain, lines in domains.items():
        sample = rng.sample(lines, min(n, len(lines)))
        parts += ["", f"## {domain}", "", "| # | original | released |", "| ---: | --- | --- |"]
        parts += [f"| {i} | {old.replace('|', '/')} | {new.replace('|', '/')} |" for i, (old, new) in
                  enumerate(sample, 1)]
    return "\n".join(parts) + "\n"


def flow_of(report: dict) -> str:
    """Documents out / in of a run report, and its dead letters by stage (a document lost is scored as missing)."""
    dead = report.get("dead_letters_by_stage") or {}
    return f"{report.get('documents_out')} / {report.get('documents_in')}" + (
        " (" + ", ".join(f"{k} {v}" for k, v in sorted(dead.items()) if v) + ")" if any(dead.values()) else "")


def pct(value) -> str:
    return "–" if value is None or value != value else f"{100 * value:.1f} %"


def main() -> None:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--tab-docs", type=int, help="TAB train documents (default 100; quick 5)")
    parser.add_argument("--bios", type=int, help="biographies (default 100; quick 5)")
    parser.add_argument("--test-calls", type=int, help="2016Q3 calls released and attacked (default all 185; quick 4)")
    parser.add_argument("--check-calls", type=int, help="of them, calls the checks read (default 40; quick 4)")
    parser.add_argument("--reference-calls", type=int,
                        help="companies outside the test set whose calls (one each) are the reference counts "
                             "(default all of them; quick 20)")
    parser.add_argument("--reference-counts",
                        help="a counts file (anonstream counts warm --identity-field ticker --out) to judge "
                             "over-masking by, instead of counting --reference-calls calls here")
    parser.add_argument("--common-k", type=float, default=0.025,
                        help="over-masking: a changed value this share (below 1) or count of reference companies "
                             "mention (default %(default)s: about 20 of 716 companies, the issue's measure)")
    parser.add_argument("--warm-counts", action="store_true",
                        help="also release the earnings calls from counts of half the reference companies "
                             "(release identity_field: ticker), judging over-masking by the other half")
    parser.add_argument("--review-lines", type=int, default=50, help="changed lines per domain for the blind review")
    parser.add_argument("--review-out", default=str(common.RESULTS_DIR / "domains-review.md"))
    parser.add_argument("--source", help="the package directory (a checkout's shared/) whose `anonstream run` is "
                                         "measured, e.g. a baseline commit's worktree; the judges are this checkout's")
    parser.add_argument("--keep-outputs", help="copy each domain's input and sanitized JSONL to this directory")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    global SOURCE
    SOURCE = Path(args.source).resolve() if args.source else None
    title = "The release on three domains: court judgments, biographies, earnings calls"
    if SOURCE is not None:  # a baseline's release, judged by today's judges, in a results file of its own
        commit = subprocess.run(["git", "-C", str(SOURCE), "log", "-1", "--format=%h %s"], capture_output=True,
                                text=True).stdout.strip()
        title += f" — `anonstream run` of {commit[:80]}"
    results = common.Results("domains-baseline" if SOURCE is not None else "domains", title, args.quick)
    work = Path(tempfile.mkdtemp(prefix="bench-domains-"))
    try:
        measure(args, work, results)
        if args.keep_outputs:
            keep = Path(args.keep_outputs)
            keep.mkdir(parents=True, exist_ok=True)
            for path in [*work.glob("*.jsonl"), *work.glob("*/sanitized.jsonl")]:
                shutil.copy(path, keep / (path.name if path.parent == work else f"{path.parent.name}.sanitized.jsonl"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results.write()


def measure(args, work: Path, results) -> None:
    """Run the three domains in ``work`` and fill ``results`` (module docstring)."""
    from anonstream.evaluation.checks import CHECKS, FALSE_OR_BROKEN, check_release
    from anonstream.evaluation.cli import load_reference, read_sanitized
    from anonstream.evaluation.release import evaluate_release, spacy_tagger
    from anonstream.evaluation.tab import load_tab

    quick = args.quick
    n_tab = args.tab_docs or (5 if quick else 100)
    n_bio = args.bios or (5 if quick else 100)
    n_test = args.test_calls or (4 if quick else None)
    n_check = args.check_calls or (4 if quick else 40)
    n_reference = args.reference_calls or (20 if quick else None)
    tagger = spacy_tagger()
    rng = random.Random(args.seed)

    # ---- TAB and the biographies: gold -----------------------------------------------------------
    gold_scores, checks, changed, rates, flow = {}, {}, {}, {}, {}
    tab_corpus = work / "tab.jsonl"
    tab_corpus.write_text("".join(common.SAMPLE.read_text().splitlines(keepends=True)[:n_tab]))
    bios = load_tab(WIKIBIO)[:n_bio]
    bio_corpus = write_jsonl(work / "bios.jsonl", [{"doc_id": d.doc_id, "text": d.text, "metadata": {}} for d in bios])
    for domain, corpus, gold in (("TAB train", tab_corpus, load_tab(TAB_GOLD)[:n_tab]),
                                 ("biographies", bio_corpus, bios)):
        common.log(f"anonstream run, {domain} ({len(gold)} documents)")
        report, sanitized_path = run_release(corpus, work / domain.replace(" ", "-"))
        rates[domain] = report["documents_per_second"]
        flow[domain] = flow_of(report)
        sanitized = read_sanitized(sanitized_path)
        raw = {d.doc_id: d.text for d in gold}
        gold_scores[domain] = evaluate_release(gold, sanitized, tagger=tagger, seed=args.seed)
        checks[domain] = check_release([(i, raw[i], t) for i, t in sanitized if i in raw], tagger=tagger)
        changed[domain] = changed_lines(raw, sanitized)

    # ---- MAEC earnings calls: attack and checks ----------------------------------------------------
    split = work / "maec"
    anonstream("attack", "split", "--corpus", str(EARNINGS), "--out", str(split))
    test = [json.loads(line) for line in (split / f"{TEST_PERIOD}.jsonl").read_text().splitlines() if line.strip()]
    if n_test:
        test = test[:n_test]
    test_corpus = write_jsonl(work / "calls-test.jsonl", test)
    attacked = {r["metadata"]["ticker"] for r in test}
    if args.reference_counts:
        counts_path = Path(args.reference_counts)
    else:
        by_company: dict[str, list[dict]] = {}
        with EARNINGS_ALL.open(encoding="utf-8") as handle:
            for r in map(json.loads, handle):
                if r["metadata"]["ticker"] not in attacked:
                    by_company.setdefault(r["metadata"]["ticker"], []).append(r)
        companies = sorted(by_company)
        companies = rng.sample(companies, min(n_reference, len(companies))) if n_reference else companies
        reference_corpus = write_jsonl(work / "calls-reference.jsonl",
                                       [rng.choice(by_company[c]) for c in sorted(companies)])
        common.log(f"anonstream counts warm on one call of each of {len(companies)} companies outside the test set")
        counts_path = work / "reference-counts.json"
        anonstream("counts", "warm", "--input", str(reference_corpus), "--identity-field", "ticker", "--out",
                   str(counts_path), "--quiet")
    modes = {"earnings calls": (None, None)}
    if args.warm_counts:  # one half of the reference companies warms the stream, the other half judges it
        warm_path, judge_path = split_counts(counts_path, work)
        release = work / "release-earnings-warm.yaml"
        release.write_text((common.REPO / "deploy" / "release.default.yaml").read_text(encoding="utf-8")
                           + "\nidentity_field: ticker\n", encoding="utf-8")
        modes["earnings calls, warm"] = (warm_path, release)
        counts_path = judge_path
    reference = load_reference(counts_path)
    raw = {r["doc_id"]: r["text"] for r in test}
    attack = {}
    for domain, (warm, release) in modes.items():
        common.log(f"anonstream run, {domain} ({len(test)} {TEST_PERIOD} calls)")
        report, sanitized_path = run_release(test_corpus, work / domain.replace(" ", "-").replace(",", ""),
                                             counts=warm, release=release)
        rates[domain] = report["documents_per_second"]
        flow[domain] = flow_of(report)
        attack_json = work / "attack.json"
        common.log("attack")
        anonstream("attack", "--train", str(split / "2016Q2.jsonl"), "--test", str(test_corpus), "--sanitized",
                   str(sanitized_path), "--json", str(attack_json))
        attack[domain] = json.loads(attack_json.read_text())
        sanitized = read_sanitized(sanitized_path)
        # the same calls every run: the output's order follows the pool's releases, which vary from run to run
        checked = random.Random(args.seed).sample(sorted(sanitized), min(n_check, len(sanitized)))
        checks[domain] = check_release([(i, raw[i], t) for i, t in checked if i in raw], tagger=tagger,
                                       reference=reference, common_k=args.common_k)
        changed[domain] = changed_lines(raw, sanitized)

    # ---- the table -----------------------------------------------------------------------------------
    calls = list(modes)
    domains = ["TAB train", "biographies", *calls]
    tab, bio = gold_scores["TAB train"].headline, gold_scores["biographies"].headline
    dash = ["–"] * len(calls)

    def findings(domain: str) -> str:
        c = checks[domain]
        return f"{c.false_or_broken} in {c.replacements} replaced values ({c.documents} docs)"

    def kind(h: dict) -> str:
        return f"{pct(h['kind_kept_by_gold_type'])} vs {pct(h['kind_kept_by_gold_type_random_baseline'])}"

    def over_masked(domain: str) -> str:
        c = checks[domain]
        return f"{c.counts()['over_masked']} (≥ {c.over_masking_threshold} of {reference.identities} reference companies)"

    rows = [
        ["checker: false generalizations and broken phrases = 0", *(findings(d) for d in domains)],
        ["agreed QUASI changed ≥ 98 % (TAB)", pct(tab["agreed_quasi_changed_share"]),
         pct(bio["agreed_quasi_changed_share"]), *dash],
        ["agreed NO_MASK kept ≥ 95 % (TAB)", pct(tab["agreed_no_mask_kept_share"]),
         pct(bio["agreed_no_mask_kept_share"]), *dash],
        ["DIRECT surviving = 0 (any annotator)", pct(tab["direct_any_annotator_surviving_share"]),
         pct(bio["direct_any_annotator_surviving_share"]), *dash],
        ["QUASI changed ≥ 90 % (biographies; first annotator)", pct(tab["quasi_changed_share"]),
         pct(bio["quasi_changed_share"]), *dash],
        ["kind kept by gold type ≥ its random baseline", kind(tab), kind(bio), *dash],
        ["disputed mentions changed (reported)", pct(tab["disputed_changed_share"]), pct(bio["disputed_changed_share"]),
         *dash],
        ["R_quasi, all annotators (reported)", pct(tab["r_quasi_all_annotators"]), pct(bio["r_quasi_all_annotators"]),
         *dash],
        ["capitalized-words attacker drop ≥ 70 % relative", "–", "–",
         *(pct(attack[d]["attackers"].get("capitalized", {}).get("relative_drop")) for d in calls)],
        ["tokens unchanged ≥ 95 %", "–", "–", *(pct(attack[d].get("tokens", {}).get("unchanged_share")) for d in calls)],
        ["over-masked changed values (reported)", "–", "–", *(over_masked(d) for d in calls)],
        ["`anonstream run` documents/s (after model load)", *(f"{rates[d]:.2f}" for d in domains)],
        ["documents out / in (dead letters by stage)", *(flow[d] for d in domains)],
        ["blind review: over-masked + broken + false ≤ 8 % of changed spans",
         *(f"{min(args.review_lines, len(changed[d]))} lines to label" for d in domains)],
    ]
    results.section("Targets by domain (default release)", common.table(["target", *domains], rows)
                    + f"\n\nTAB: the first {n_tab} train documents against every annotator; biographies: the first "
                    f"{n_bio} of `wiki_test.json` (one annotator each, so agreed = that annotator); earnings calls: "
                    f"{len(test)} {TEST_PERIOD} calls released and attacked (train 2016Q2 raw, "
                    f"{attack['earnings calls']['train']['labels']} companies), the checks on {min(n_check, len(test))} of them"
                    + (f"; \"warm\": the stream starts from the counts of half the reference companies "
                       f"(`anonstream run --counts`, release `identity_field: ticker`), over-masking is judged by the "
                       f"other half" if args.warm_counts else "") + ".")
    results.section("Findings of the checks (`evaluate-release`, evaluation/checks.py)", common.table(
        ["check", "false or broken", *domains],
        [[c, "yes" if c in FALSE_OR_BROKEN else "reported", *(checks[d].counts()[c] for d in domains)]
         for c in CHECKS]
        + [["judged: " + k, "", *(checks[d].judged[k] for d in domains)] for k in checks["TAB train"].judged]
        + [["places replaced: " + v, "", *(checks[d].place_verdicts.get(v, 0) for d in domains)]
           for v in sorted({v for d in domains for v in checks[d].place_verdicts})]))
    results.section("TAB train in full", gold_scores["TAB train"].to_markdown().replace("### ", "#### "))
    results.section("Biographies in full", gold_scores["biographies"].to_markdown().replace("### ", "#### "))
    if args.review_lines > 0:
        review = Path(args.review_out)
        review.write_text(review_file(changed, args.review_lines, args.seed), encoding="utf-8")
        results.add(f"Blind review lines ({args.review_lines} per domain, seed {args.seed}): `{common.rel(review)}`.")


if __name__ == "__main__":
    sys.exit(main())
