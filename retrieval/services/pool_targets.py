"""What a pool build works on: a dataset, a repository and its two search indexes, prepared once
per build (retrieval.services.pools.pools_prepare) and found again by each of the job's shards."""

from dataclasses import dataclass

from annotation.models import Dataset, Question, Repository
from annotation.selectors import testset_dataset_get
from core.errors import UserError
from retrieval.models import IndexStatus, RetrievalIndex


@dataclass(frozen=True)
class PoolTarget:
    """What a pool build works on: the dataset, the repository and the two indexes searched."""

    dataset: Dataset
    repository: Repository
    lexical_index: RetrievalIndex
    dense_index: RetrievalIndex


def pools_target_get(
    *, dataset_name: str, repository_name: str, lexical_index_id: int, dense_index_id: int
) -> PoolTarget:
    """The target a pool job prepared, found again by a shard on any worker: the same indexes,
    which must still be ready."""
    dataset = testset_dataset_get(name=dataset_name, adds="retrieved candidates")
    repository = Repository.objects.filter(name=repository_name).first()
    if repository is None:
        raise UserError(f"no repository {repository_name!r}")
    indexes = RetrievalIndex.objects.in_bulk([lexical_index_id, dense_index_id])
    for index_id in (lexical_index_id, dense_index_id):
        index = indexes.get(index_id)
        if index is None or index.status != IndexStatus.READY or index.repository_id != repository.pk:
            raise UserError(
                f"search index #{index_id} of repository {repository.name} is no longer ready: start the pool job again"
            )
    return PoolTarget(dataset, repository, indexes[lexical_index_id], indexes[dense_index_id])


def pool_questions(*, target: PoolTarget, first_id: int | None = None, last_id: int | None = None):
    """The dataset's original questions (derived ones share their pools), optionally those with
    ids from ``first_id`` to ``last_id``."""
    questions = Question.objects.filter(dataset=target.dataset, derived_from__isnull=True)
    if first_id is not None:
        questions = questions.filter(id__gte=first_id)
    if last_id is not None:
        questions = questions.filter(id__lte=last_id)
    return questions
