"""A module whose import is visible: the plugin allow-list must refuse it before importing it."""

IMPORTED = True


class ProbePlugin:
    def losses(self, contexts, candidates):
        return [[0.0] * len(c) for c in candidates]
