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


class ScriptedPlugin:
    """Losses by text: "dense ..." candidates beat the ground truth, the others do not.

    ``calls`` records the questions of each call; ``fail_on_call`` / ``cancel_on_call`` make a
    call fail or ask for the running evaluation job to be cancelled (to test resuming).
    """

    calls: list[list[tuple]] = []
    fail_on_call: int | None = None
    cancel_on_call: int | None = None

    def losses(self, contexts, candidates):
        cls = type(self)
        cls.calls.append([tuple(sorted(c)) for c in candidates])
        if cls.fail_on_call == len(cls.calls):
            raise RuntimeError("scripted failure")
        if cls.cancel_on_call == len(cls.calls):
            from core.models import Job
            from core.services.jobs import job_cancel

            job_cancel(job_id=Job.objects.filter(kind="evaluate").latest("id").pk)
        return [[_loss(text) for text in cands] for cands in candidates]

    @classmethod
    def reset(cls) -> None:
        cls.calls, cls.fail_on_call, cls.cancel_on_call = [], None, None


def _loss(text: str) -> float:
    if text.startswith("dense"):
        return 0.5
    if text.startswith("Sure"):  # the factories' ground truths
        return 1.0
    return 2.0


class LongestWinsPlugin:
    """The loss is minus the candidate's length: the longest candidate is selected.

    Each candidate's loss depends on that candidate alone (``losses_are_independent``), so RANDOM
    trials may score its ground truths once; ``scored`` counts the candidates of every call.
    """

    losses_are_independent = True
    scored: list[int] = []
    cancel_on_call: int | None = None  # ask the latest campaign job to stop at this call

    def losses(self, contexts, candidates):
        cls = type(self)
        cls.scored.append(sum(len(c) for c in candidates))
        if cls.cancel_on_call == len(cls.scored):
            from core.models import Job
            from core.services.jobs import job_cancel

            job_cancel(job_id=Job.objects.filter(kind="campaign").latest("id").pk)
        return [[-float(len(c)) for c in cands] for cands in candidates]

    @classmethod
    def reset(cls) -> None:
        cls.scored, cls.cancel_on_call = [], None


class LongestReplyPlugin(LongestWinsPlugin):
    """Selects the longest candidate (LongestWinsPlugin) and answers every context with a short reply
    that names its last turn: a plugin system that both scores and generates."""

    def generate(self, contexts):
        return [f"I see what you mean about {context[-1].rstrip('.?!').lower()}." for context in contexts]


class PairLengthPlugin:
    """The loss is the text's length in characters: of a pair, the shorter response wins (equal
    lengths tie). ``calls`` records the candidates of each call; ``fail_on_call`` /
    ``cancel_on_call`` make a call fail or cancel the latest pair evaluation job."""

    calls: list[list[list[str]]] = []
    fail_on_call: int | None = None
    cancel_on_call: int | None = None

    def losses(self, contexts, candidates):
        cls = type(self)
        cls.calls.append([list(c) for c in candidates])
        if cls.fail_on_call == len(cls.calls):
            raise RuntimeError("scripted failure")
        if cls.cancel_on_call == len(cls.calls):
            from core.models import Job
            from core.services.jobs import job_cancel

            job_cancel(job_id=Job.objects.filter(kind="evaluate_pairs").latest("id").pk)
        return [[float(len(c)) for c in cands] for cands in candidates]

    @classmethod
    def reset(cls) -> None:
        cls.calls, cls.fail_on_call, cls.cancel_on_call = [], None, None


class NoLossesPlugin:
    """Allowed (a class of this module) but no plugin: it has no losses()."""

    def generate(self, contexts):
        return ["" for _ in contexts]
