"""The shortcut audit: can the ground truth be told apart from the false candidates without the
context? Context-free baselines (baselines.py) pick a reply per question from the candidates alone;
audit.py reports each one's accuracy with a 95 % interval beside chance.

A test set measures context understanding only if these stay at chance (hypothesis-only baselines
in NLI: Poliak et al. 2018, Gururangan et al. 2018)."""
