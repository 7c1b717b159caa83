import boto3
import pytest
from botocore.stub import Stubber

from annotation.services.assignment import annotation_open
from crowd.providers import mturk_client
from crowd.providers.mturk import MTurkProvider
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory

PUBLIC_URL = "https://wellchosen.example.org"
HIT_TYPE = "3HITTYPE0000000000000000000000"


def hit_id(n: int) -> str:
    return f"3HIT{n:026d}"


def assignment_id(n: int) -> str:
    return f"3ASG{n:026d}"


@pytest.fixture(autouse=True)
def crowd_settings(settings):
    settings.WELLCHOSEN_PUBLIC_URL = PUBLIC_URL
    settings.WELLCHOSEN_CROWD_RETRY_BASE_SECONDS = 0.0
    settings.WELLCHOSEN_CROWD_RETRIES = 3
    settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS = ["https://workersandbox.mturk.com", "https://www.mturk.com"]
    return settings


@pytest.fixture
def mturk(monkeypatch):
    """A real boto3 mturk client (sandbox endpoint, fake credentials) behind botocore's Stubber:
    every call must be expected, with its exact parameters, and is validated against the service
    model. The fixture checks at the end that every expected call was made."""
    client = boto3.client(
        "mturk",
        region_name="us-east-1",
        endpoint_url=mturk_client.SANDBOX_ENDPOINT,
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret-for-tests",
    )
    stubber = Stubber(client)
    # What the tests cannot hand a client to (admin pages, jobs, the dashboard) gets this one too.
    monkeypatch.setattr(mturk_client, "client_create", lambda *, production: client)
    with stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def mturk_provider(mturk) -> MTurkProvider:
    """The MTurk provider on the Stubber's client, which the tests hand to the services."""
    return MTurkProvider(client=mturk.client, sleep=lambda s: None)


@pytest.fixture
def dataset(db):
    dataset = DatasetFactory(name="crowd", annotators_per_item=3, adaptive_stopping=False, attention_check_rate=0)
    for i in range(2):
        question = QuestionFactory(dataset=dataset)
        CandidateFactory(question=question, text=f"The train leaves at {i}.")
    annotation_open(dataset=dataset)
    return dataset


@pytest.fixture
def mturk_batch(dataset):
    return crowd_batch_create(
        dataset=dataset,
        provider="mturk",
        name="pilot",
        settings={
            "reward": "0.25",
            "soft_block_qualification_type_id": "3QUALTYPE000000000000000000000",
            "locales": ["US", "GB"],
        },
    )


@pytest.fixture
def published_tasks(mturk_batch):
    """The batch's tasks as if MTurk had accepted them (HITs 1 and 2)."""
    from annotation.models import QuestionWork
    from crowd.models import CrowdTask

    tasks = []
    for n, work in enumerate(QuestionWork.objects.filter(dataset=mturk_batch.dataset).order_by("question_id"), 1):
        tasks.append(
            CrowdTask.objects.create(
                batch=mturk_batch,
                question_id=work.question_id,
                provider="mturk",
                max_assignments=3,
                external_id=hit_id(n),
                status="published",
            )
        )
    mturk_batch.status = "published"
    mturk_batch.external_id = HIT_TYPE
    mturk_batch.save()
    return tasks


@pytest.fixture
def link_batch(dataset):
    batch = crowd_batch_create(dataset=dataset, provider="link", name="link", settings={"units_per_worker": 2})
    crowd_batch_publish(batch=batch)
    batch.refresh_from_db()
    return batch


@pytest.fixture
def prolific():
    """A local double of Prolific's API (prolific_double.py); it must have refused no request."""
    from .prolific_double import ProlificDouble

    with ProlificDouble(page_size=2) as double:
        yield double
        assert not double.errors, f"the double refused requests: {double.errors}"
