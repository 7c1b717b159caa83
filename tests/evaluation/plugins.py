"""Plugin systems used by the tests (referred to by dotted path)."""


class ShortestWinsPlugin:
    """The loss is the candidate's length in characters: the shortest candidate is selected."""

    def __init__(self, system=None) -> None:
        self.system = system

    def losses(self, contexts, candidates):
        return [[float(len(c)) for c in cands] for cands in candidates]


class BrokenPlugin:
    def losses(self, contexts, candidates):
        return [[0.0] for _ in candidates]  # one loss per question instead of one per candidate
