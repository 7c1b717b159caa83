"""The evaluation job kind, registered with the shared Job machinery when the app loads.

Job.kind is a free CharField; registering here (instead of a new annotation.JobKind choice)
keeps the evaluation app self-contained.
"""

EVALUATE = "evaluate"
TASK = "evaluation.tasks.evaluate_job"


def register_job_kinds() -> None:
    from annotation.services.jobs import JOB_TASKS

    JOB_TASKS.setdefault(EVALUATE, (TASK, "gpu"))  # routed to settings.WELLCHOSEN_GPU_QUEUE
