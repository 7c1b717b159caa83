"""What each crowd job kind runs: its typed parameters handed to the service."""

from core.models import Job
from core.services.jobs import JobProgress
from crowd.job_params import CrowdPublishParams, CrowdSyncParams
from crowd.models import CrowdBatch
from crowd.services.batches import crowd_batch_publish, crowd_batch_sync


def publish_crowd_batch(params: CrowdPublishParams, job: Job, progress: JobProgress) -> dict:
    batch = CrowdBatch.objects.select_related("dataset").get(pk=params.batch_id)
    published = crowd_batch_publish(batch=batch, confirm_production=params.confirm_production)
    return {"batch": batch.name, "published_tasks": published}


def sync_crowd_batch(params: CrowdSyncParams, job: Job, progress: JobProgress) -> dict:
    batch = CrowdBatch.objects.select_related("dataset").get(pk=params.batch_id)
    report = crowd_batch_sync(batch=batch)
    return {"batch": batch.name, **report.as_dict()}


HANDLERS = {
    CrowdPublishParams: publish_crowd_batch,
    CrowdSyncParams: sync_crowd_batch,
}
