"""What the evaluation job kind runs: unpack the Job's params and call the service."""

from annotation.models import Job
from annotation.services.jobs import JobProgress

from .evaluations import evaluation_run


def evaluate(job: Job, progress: JobProgress) -> dict:
    return evaluation_run(
        evaluation_id=job.params["evaluation_id"],
        batch_questions=job.params.get("batch_questions", 256),
        device=job.params.get("device"),
        progress=progress,
    )
