"""The learned span detector (issue 15): spaCy NER fine-tuned on TAB's 8 mention types.

* data.py — typed mentions from TAB train, the TAB dev stop-gap (tuning / validation halves) and the Wikipedia bios;
* train.py — ``train_detector`` / ``save_detector`` / ``load_detector``;
* recognizer.py — ``LearnedSpanRecognizer``, a pii recognizer (``PiiConfig.detector``);
* metrics.py — mention recall (>= 90 % of a mention's characters detected) and character precision, per type;
* cli.py — ``anonstream train-detector``.
"""
