"""Index versions whose build was interrupted: a killed worker leaves a version "building"; the next
build of the same job, or after its job ended, marks it failed and deletes its files."""

import pytest

from core.models import JobStatus
from core.services.jobs import job_create
from retrieval.job_params import BuildIndexesParams
from retrieval.models import IndexKind, IndexStatus, RetrievalIndex
from retrieval.selectors import lexical_backend_for
from retrieval.services.indexing import lexical_index_build
from tests.factories import RepositoryFactory, UtteranceFactory


@pytest.fixture
def repository(db):
    repository = RepositoryFactory(name="subtitles")
    UtteranceFactory.create_batch(3, repository=repository)
    return repository


@pytest.fixture
def job(db):
    return job_create(params=BuildIndexesParams(repository="subtitles", kinds=["lexical"]), enqueue=False)


def killed_build(repository, job):
    """What a worker killed mid-build leaves: a version still "building", with part of its files."""
    index = RetrievalIndex.objects.create(
        repository=repository,
        kind=IndexKind.LEXICAL,
        version=1,
        backend="tantivy",
        name="wellchosen-subtitles-v1",
        content_version=repository.content_version,
        job=job,
    )
    backend = lexical_backend_for(index)
    backend.path.mkdir(parents=True)
    (backend.path / "partial-segment").write_bytes(b"half")
    return index, backend.path


def test_the_attempt_that_takes_a_job_over_fails_the_version_its_dead_attempt_was_building(repository, job):
    # given the job's first attempt killed while it built version 1
    killed, files = killed_build(repository, job)
    # when the attempt that took the job over builds the index
    built = lexical_index_build(repository=repository, job_id=job.pk)
    # then version 2 is ready, and version 1 says it failed and its files are gone
    killed.refresh_from_db()
    assert (built.version, built.status, built.job_id) == (2, IndexStatus.READY, job.pk)
    assert killed.status == IndexStatus.FAILED and "interrupted" in killed.error
    assert not files.exists()


@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.CANCELLED, JobStatus.SUCCEEDED])
def test_a_version_whose_job_has_ended_is_failed_by_the_next_build(repository, job, status):
    # given a version left "building" by a job that has ended since
    killed, _ = killed_build(repository, job)
    job.status = status
    job.save()
    # when any later build of that index starts (here one without a job, from the shell)
    lexical_index_build(repository=repository)
    # then that version is failed
    killed.refresh_from_db()
    assert killed.status == IndexStatus.FAILED


def test_a_version_another_running_job_is_building_is_left_alone(repository, job):
    # given a version that another job, still running, is building
    job.status = JobStatus.RUNNING
    job.save()
    building, files = killed_build(repository, job)
    # when a build without a job (or of another job) starts beside it
    lexical_index_build(repository=repository)
    # then the running build keeps its version and its files
    building.refresh_from_db()
    assert building.status == IndexStatus.BUILDING and files.exists()


def test_a_repository_named_with_capitals_gets_a_lowercase_elasticsearch_index_of_its_own(db, settings):
    # given an Elasticsearch (the local double, which refuses names with capitals as a cluster does),
    # and two repositories whose names differ only in case
    from tests.retrieval.es_double import ElasticsearchDouble

    upper, lower = RepositoryFactory(name="Subs"), RepositoryFactory(name="subs")
    for repository in (upper, lower):
        UtteranceFactory.create_batch(3, repository=repository)
    with ElasticsearchDouble() as es:
        settings.ELASTICSEARCH_URL = es.url
        # when each one's BM25 index is built there
        built = [lexical_index_build(repository=r) for r in (upper, lower)]
        # then both are ready under distinct lowercase names, and the cluster refused nothing
        assert [(i.status, i.name) for i in built] == [
            (IndexStatus.READY, f"wellchosen-subs.{upper.pk}-v1"),
            (IndexStatus.READY, "wellchosen-subs-v1"),
        ]
        assert not es.errors
