"""Batch mode: the paper's sequential procedure on a corpus, and the ``swap-corpus`` command."""
from __future__ import annotations

import argparse
import copy
import json
import random

from anonstream import serde
from anonstream.swap import Release
from anonstream.swap.batch import swap_corpus
from anonstream.swap.cli import add_commands
from anonstream.swap.release import DEFAULT_RELEASE
from anonstream.swap.summary import summarize
from anonstream.swap.testing import make_chunk

MONTHS = ["January", "March", "May", "July", "September"]


def corpus(n_docs=6, per_doc=5, seed=0):
    rng = random.Random(seed)
    return [make_chunk(f"d{d}", i, "{ORG:Org%d} in {LOC/GPE:Loc%d} in {DATETIME/DATE:%s 2001}." % (
        rng.randrange(9), rng.randrange(4), rng.choice(MONTHS)), component=rng.randrange(2), chunk_count=per_doc)
        for d in range(n_docs) for i in range(per_doc)]


def release(rate: float) -> Release:
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["swap_rate"] = rate
    obj["categories"]["Date"] = {"status": "G", "generalizer": {"name": "date", "level": "month"}}
    return Release.from_dict(obj)


def test_batch_stops_at_the_target_rate_or_when_no_valid_pair_is_left():
    chunks = corpus()
    out, log = swap_corpus(chunks, release(4 / len(chunks)), random.Random(1))
    assert sum(r["action"] == "swapped" for r in log) == 4  # r = 4/n: two pairs, as in the paper's grid
    assert [c.key for c in out] == [c.key for c in chunks]  # input order
    _, log = swap_corpus(chunks, release(1.0), random.Random(1))
    swapped = sum(r["action"] == "swapped" for r in log)
    assert 4 < swapped < len(chunks)  # every chunk asked for, valid pairs ran out first


def test_batch_is_reproducible_with_a_seed():
    chunks = corpus()
    a, _ = swap_corpus(chunks, release(0.5), random.Random(3))
    b, _ = swap_corpus(chunks, release(0.5), random.Random(3))
    assert [c.text for c in a] == [c.text for c in b]


def test_protect_rare_gives_unpaired_rare_chunks_the_fallback():
    chunks = corpus()
    _, log = swap_corpus(chunks, release(0.0), random.Random(1), protect_rare=True)
    rare = [r for r in log if r["rare"]]
    assert rare and all(r["action"] == "generalized" and r["reason"] == "batch_unpaired" for r in rare)
    summary = summarize(log)
    assert summary["rare_protected_share"] == 1.0 and summary["actions"]["swapped"] == 0


def test_swap_corpus_command(tmp_path, capsys):
    source = tmp_path / "chunks.jsonl"
    source.write_bytes(b"".join(serde.dumps(c.to_wire()) + b"\n" for c in corpus()))
    release_file = tmp_path / "release.yaml"
    release_file.write_text("schema: release.v1\nname: plan\nswap_rate: 0.4\ncategories:\n"
                            "  Organization: {status: S}\n  Person: {status: U}\n  Event: {status: C}\n"
                            "  Product: {status: S}\n  Location: {status: S}\n  Date: {status: F}\n")
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["swap-corpus", "--input", str(source), "--release", str(release_file),
                              "--log", str(tmp_path / "log.jsonl"), "--seed", "2"])
    assert args.func(args) == 0
    out = [json.loads(line) for line in (tmp_path / "chunks.swapped.jsonl").read_text().splitlines()]
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(out) == len(log) == 30
    assert all(c["release"]["name"] == "plan" for c in out)
    summary = json.loads(capsys.readouterr().err)
    assert summary["actions"]["swapped"] == sum(r["action"] == "swapped" for r in log) > 0
