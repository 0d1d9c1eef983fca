"""k-anonymity of quasi-identifier tuples by full-domain generalization (paper 004, §3 and §4).

``lattice``: the generalization lattice over hierarchy levels and the globally optimal search with a
suppression budget (ARX's FLASH setting); ``metrics``: records retained, C_avg, achieved k, distinct l.
"""
