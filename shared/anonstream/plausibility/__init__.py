"""t-plausible generalization of terms up a hypernym hierarchy (paper 002, Anandan et al., "t-Plausibility:
Generalizing Words to Desensitize Text"; digest ``../shared/papers/002-t-plausibility.digest.md``).

* ``graph``: a hypernym DAG (node volumes, the path of a node to the root);
* ``wordnet``: the WordNet 3.0 noun hypernym graph read from the Debian ``wordnet-base`` files;
* ``cost``: the uniform t-PAT cost (eq. 1-4, Lemma 1-2), O(m), never enumerating the plausible texts;
* ``search``: LUB search with the top-down greedy refinement (Alg. 4 + 6) and the exact solver (Alg. 3) used as
  the test oracle;
* ``senses``: which sense of a term to generalize (embeddings, or Alg. 2's common hypernym of several senses);
* ``generalizer``: terms to synsets for a requested t in bits per term, and the release ``wordnet`` generalizer.
"""
