"""spaCy's English language data, read from the installed spaCy package's files without importing spaCy.

Importing ``spacy`` imports thinc, which imports torch: ~600 MiB for a process that only needs a word list or
the tokenizer's rules. The English stop words, the tokenizer's prefix, suffix and infix rules, its URL pattern
and its special cases are plain Python data in ``spacy/lang/``; this module executes those files (and only
those) under a private package name, with two small stand-ins for what they import from spaCy's compiled core
(``symbols.ORTH``/``NORM``) and from ``spacy.util`` (``update_exc``, re-stated here as spaCy 3.8 defines it).
The result equals what ``spacy.blank("en")`` builds from the same files (``tests/unit/test_sentences.py``
compares them with the installed spaCy); a spaCy release that moves these files makes the loader fail loudly.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

_PACKAGE = "_anonstream_spacy_files"  # the private name the files run under (removed from sys.modules after)
ORTH, NORM = "ORTH", "NORM"  # stand-ins for spacy.symbols: the files use them as dict keys only


def spacy_dir() -> Path:
    """The installed spaCy package's directory, found without importing it."""
    spec = importlib.util.find_spec("spacy")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("spaCy is not installed: its English language files are needed")
    return Path(list(spec.submodule_search_locations)[0])


def _update_exc(base_exceptions: dict[str, list[dict]], *addition_dicts: dict[str, list[dict]]) -> dict:
    """``spacy.util.update_exc``: merge and check exceptions, then add the typographic-apostrophe variants."""
    exc = dict(base_exceptions)
    for additions in addition_dicts:
        for orth, token_attrs in additions.items():
            if "".join(attr[ORTH] for attr in token_attrs) != orth:
                raise ValueError(f"tokenizer exception {orth!r}: its pieces do not spell it")
        exc.update(additions)
    expanded = dict(exc)
    for key, tokens in exc.items():
        if "'" in key:
            expanded[key.replace("'", "’")] = [{**t, ORTH: t[ORTH].replace("'", "’")} for t in tokens]
    return expanded


def _load(*modules: str) -> list[types.ModuleType]:
    """Execute ``spacy/<module>.py`` files under the private package (relative imports between them resolve
    there; ``symbols`` and ``util`` are the stand-ins) and return the modules; nothing stays in sys.modules."""
    root = spacy_dir()
    stubs = {
        _PACKAGE: types.ModuleType(_PACKAGE),
        f"{_PACKAGE}.symbols": types.ModuleType(f"{_PACKAGE}.symbols"),
        f"{_PACKAGE}.util": types.ModuleType(f"{_PACKAGE}.util"),
        f"{_PACKAGE}.lang": types.ModuleType(f"{_PACKAGE}.lang"),
        f"{_PACKAGE}.lang.en": types.ModuleType(f"{_PACKAGE}.lang.en"),
    }
    stubs[_PACKAGE].__path__ = []  # nothing else of spaCy's top level can be found under this name
    stubs[f"{_PACKAGE}.lang"].__path__ = [str(root / "lang")]  # its __init__ is not run (it is empty anyway)
    stubs[f"{_PACKAGE}.lang.en"].__path__ = [str(root / "lang" / "en")]  # its __init__ (thinc, Language) is not
    stubs[f"{_PACKAGE}.symbols"].ORTH, stubs[f"{_PACKAGE}.symbols"].NORM = ORTH, NORM
    stubs[f"{_PACKAGE}.util"].update_exc = _update_exc
    before = set(sys.modules)
    sys.modules.update(stubs)
    try:
        return [importlib.import_module(f"{_PACKAGE}.{m}") for m in modules]
    finally:
        for name in set(sys.modules) - before:
            if name == _PACKAGE or name.startswith(_PACKAGE + "."):
                del sys.modules[name]


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """``spacy.lang.en.stop_words.STOP_WORDS`` (326 words and contractions in spaCy 3.8)."""
    (module,) = _load("lang.en.stop_words")
    return frozenset(module.STOP_WORDS)


@dataclass(frozen=True)
class TokenizerRules:
    """What ``spacy.blank("en")``'s tokenizer is built from (``spacy.language.create_tokenizer``)."""

    prefix_search: Callable[[str], Any]
    suffix_search: Callable[[str], Any]
    infix_finditer: Callable[[str], Any]
    url_match: Callable[[str], Any]
    special_cases: dict[str, tuple[str, ...]]  # string -> the ORTH of each of its tokens


@lru_cache(maxsize=1)
def english_tokenizer_rules() -> TokenizerRules:
    punctuation, en_punctuation, base_exceptions, en_exceptions = _load(
        "lang.punctuation", "lang.en.punctuation", "lang.tokenizer_exceptions", "lang.en.tokenizer_exceptions")
    # spacy.util.compile_prefix_regex / compile_suffix_regex / compile_infix_regex
    prefixes = "|".join("^" + p for p in punctuation.TOKENIZER_PREFIXES if p.strip())
    suffixes = "|".join(p + "$" for p in punctuation.TOKENIZER_SUFFIXES if p.strip())
    infixes = "|".join(p for p in en_punctuation.TOKENIZER_INFIXES if p.strip())
    return TokenizerRules(
        prefix_search=re.compile(prefixes).search,
        suffix_search=re.compile(suffixes).search,
        infix_finditer=re.compile(infixes).finditer,
        url_match=base_exceptions.URL_MATCH,
        special_cases={k: tuple(t[ORTH] for t in v) for k, v in en_exceptions.TOKENIZER_EXCEPTIONS.items()},
    )
