"""README as a landing page, docs/ for users, and `make demo` installing the runtime only."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
USER_DOCS = [README, *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# development history belongs in commit messages and BENCHMARKS.md, not in user docs
HISTORY = re.compile(r"\bissues? \d+|\bitems? \d+|\bsession\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}\b",
                     re.IGNORECASE)


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to '-', '-N' on repeats."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    in_fence = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def local_links(path: Path) -> list[tuple[Path, str]]:
    """(target file, anchor or '') of every relative link in a markdown file."""
    links = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+://", target):
            continue
        file_part, _, anchor = target.partition("#")
        links.append(((path.parent / file_part).resolve() if file_part else path, anchor))
    return links


def test_readme_is_a_landing_page_of_at_most_150_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_readme_links_every_user_doc_and_each_exists():
    linked = {target for target, _ in local_links(README)}
    assert DOCS, "docs/ holds no user documentation"
    for target in linked:
        if target.parent == ROOT / "docs":
            assert target.is_file(), f"README links {target.name}, which does not exist"
    assert set(DOCS) <= linked, f"not linked from README: {sorted(p.name for p in set(DOCS) - linked)}"


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_links_and_anchors_resolve(path):
    for target, anchor in local_links(path):
        assert target.exists(), f"{path.name} links {target}, which does not exist"
        if anchor and target.suffix == ".md":
            assert anchor in github_anchors(target.read_text(encoding="utf-8")), f"{path.name}: #{anchor} not in {target.name}"


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_user_docs_carry_no_development_history(path):
    found = HISTORY.findall(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: {found}"


def test_github_anchors_follow_githubs_rules():
    assert github_anchors("# Security settings (Kafka TLS + SASL/SCRAM)\n## Risk\n## Risk\n```\n# not a heading\n```") \
        == {"security-settings-kafka-tls--saslscram", "risk", "risk-1"}


def dry_run(target: str, venv: Path) -> str:
    """The commands `make TARGET` would run on a machine without the venv (make -n executes nothing)."""
    return subprocess.run(["make", "-n", "-C", str(ROOT), target, f"VENV={venv}"], check=True,
                          capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
def test_make_demo_installs_the_runtime_only_and_make_test_everything(tmp_path):
    demo, test = dry_run("demo", tmp_path / "venv"), dry_run("test", tmp_path / "venv")
    assert "pip install --quiet -e ." in demo and "deploy/system-deps.sh" in demo
    assert "[test]" not in demo and "--test" not in demo
    assert "pip install --quiet -e '.[test]'" in test and "deploy/system-deps.sh --test" in test
