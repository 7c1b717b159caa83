"""Candidates made from the ground truth itself: masked-LM manipulation (Park et al., NAACL 2021)."""
