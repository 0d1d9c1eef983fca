"""Partially synthetic categorical metadata beside released text (paper 003): a sequential chain of
L1-penalized multinomial logits on bag-of-words features (``model``), the pMSE ratio and the λ-path
calibration (``pmse``, ``calibrate``), and the rule that keeps synthetic fields consistent with the text
(``consistency``)."""
