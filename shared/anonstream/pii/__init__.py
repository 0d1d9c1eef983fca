"""PII detection, identifier typing and operators (the pii stage's core).

Public API (see engine.py):

* ``PiiEngine.from_config(PiiConfig(...))`` — loads spaCy (``spacy_model.load_spacy``), gazetteers, policy;
  ``detect(text, entities)`` / ``detect_many`` → ``EntitySpan`` list; ``process(text, entities, pseudonyms,
  namespace)`` / ``process_many`` → ``(new_text, spans)``; ``process_document(texts, entities, pseudonyms,
  namespace)`` — the chunks of one document with one registry, masking decided per entity over the whole
  document (``process_many`` uses it when all texts share one registry); ``explain(text, entities)`` → traces.
* ``DocumentEntities`` (grouping.py) — per-document entity registry, ``to_state``/``from_state``.
* ``PseudonymStore``, ``InMemoryPseudonymStore``; ``anonstream.stores.redis_pseudonyms.RedisPseudonymStore``.
* ``KeyRing`` (keys.py) — HMAC key from ``ANONSTREAM_PSEUDONYM_KEY`` (+ ``_PREVIOUS`` for rotation).
* Recognizers (``Recognizer`` in base.py): ner.py (spaCy NER, OntoNotes → TAB mapping), patterns.py
  (validated regexes), gazetteer.py (gazetteers, titles, initials, acronyms, institutions, roles, lists);
  merge.py (span refinement, overlaps, propagation); vetting.py (bare PERSON candidates that are places, common
  words or parts of other entities); policy.py (DIRECT/QUASI/NO_MASK: rules or k-of-n voting); consistency.py
  (every whole-word occurrence of a masked PERSON surface is masked); operators.py (placeholder, indexed,
  redact, mask, hash, keep).
* CLI (cli.py): ``eval-pii`` and ``detect``; evaluation in ``anonstream.evaluation.tab``.
"""
