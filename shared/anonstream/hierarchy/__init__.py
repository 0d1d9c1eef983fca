"""Value generalization hierarchies learned from embeddings (ClustEm4Ano, paper 004).

``model``: a hierarchy (leaf -> generalizations per level) and ARX's CSV format; ``builder``: the Ward
dendrogram / iterated-KMeans construction with readable labels; ``registry``: versioned storage;
``generalizer``: the swap stage's ``hierarchy`` generalizer; ``adult``: the UCI Adult regression harness.
"""
