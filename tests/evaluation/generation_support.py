"""What the generation tests share: plugin systems (referred to by dotted path), the contexts, a runner."""

from core.models import Job
from core.services import jobs
from core.services.jobs import job_execute
from evaluation.models import GeneratedResponse
from evaluation.services.generations import generation_start
from tests.tiny_models import TEXTS

PLUGINS = "tests.evaluation.generation_support"
# contexts of 1 to 3 turns, so that the batches mix lengths
CONTEXTS = [TEXTS[i : i + 1 + i % 3] for i in range(6)]


class EchoPlugin:
    """Answers "echo <last turn>"; records its calls; can fail or cancel the running job on a call."""

    calls: list[dict] = []
    fail_on_call: int | None = None
    cancel_on_call: int | None = None

    def __init__(self, system=None) -> None:
        self.system = system

    def losses(self, contexts, candidates):
        return [[0.0] * len(c) for c in candidates]

    def generate(self, contexts, seeds=None):
        cls = type(self)
        cls.calls.append({"contexts": contexts, "seeds": seeds})
        if cls.fail_on_call == len(cls.calls):
            raise RuntimeError("scripted failure")
        if cls.cancel_on_call == len(cls.calls):
            jobs.job_cancel(job_id=Job.objects.filter(kind="generate").latest("id").pk)
        return [f"  echo {context[-1]} " for context in contexts]

    @classmethod
    def reset(cls) -> None:
        cls.calls, cls.fail_on_call, cls.cancel_on_call = [], None, None


class NulPlugin:
    """Says something with a NUL byte in it, as a sampled byte-level token can decode to."""

    def losses(self, contexts, candidates):
        return [[0.0] * len(c) for c in candidates]

    def generate(self, contexts):
        return ["fine\x00 thanks" for _ in contexts]


class ScoreOnlyPlugin:
    def losses(self, contexts, candidates):
        return [[0.0] * len(c) for c in candidates]


def run(system_name="gpt", dataset_name="chat", **options):
    generation, job = generation_start(system_name=system_name, dataset_name=dataset_name, enqueue=False, **options)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    generation.refresh_from_db()
    return generation, job


def texts(generation) -> dict[str, str]:
    return dict(GeneratedResponse.objects.filter(generation=generation).values_list("context_key", "text"))
