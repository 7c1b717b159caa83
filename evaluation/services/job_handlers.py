"""What the evaluation app's job kinds run: unpack the Job's params and call the service."""

from annotation.models import Job
from annotation.services.jobs import JobProgress

from .campaigns import campaign_run
from .evaluations import evaluation_run
from .generations import generation_run


def evaluate(job: Job, progress: JobProgress) -> dict:
    return evaluation_run(
        evaluation_id=job.params["evaluation_id"],
        batch_questions=job.params.get("batch_questions", 256),
        device=job.params.get("device"),
        progress=progress,
    )


def generate(job: Job, progress: JobProgress) -> dict:
    return generation_run(
        generation_id=job.params["generation_id"],
        batch_size=job.params.get("batch_size", 32),
        device=job.params.get("device"),
        progress=progress,
    )


def campaign(job: Job, progress: JobProgress) -> dict:
    return campaign_run(
        campaign_id=job.params["campaign_id"],
        evaluate=job.params.get("evaluate", True),
        device=job.params.get("device"),
        progress=progress,
    )
