"""Starting a job from an admin form in a test, as a researcher does."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.models import Job


def upload(name: str, content: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode("utf-8"))


def post_and_run(client, url, data, capture) -> Job:
    """Submit an admin form that starts a job; run the job as the worker would after commit."""
    with capture(execute=True):
        response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    job = Job.objects.latest("id")
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    return job
