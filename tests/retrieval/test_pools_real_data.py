"""Pool quality on real data: DailyDialog test questions, a repository of DailyDialog train
utterances and Cornell movie lines (without the test dialogues).

The repository is a slice of both corpora (about 18,000 utterances) so that encoding it fits
in the test budget on two CPU cores; bench/retrieval.py measures the full scale.
"""

import re
from itertools import islice

import numpy as np
import pytest
from django.db import connection

from annotation.models import Candidate, Question, Turn, Utterance
from annotation.services.dialogue_import import dialogues_import
from core.text import text_hash
from retrieval.dense.encoder import get_encoder
from retrieval.services.pools import pools_build
from retrieval.services.repository_import import repository_import

pytestmark = [pytest.mark.shared_data, pytest.mark.slow, pytest.mark.heavy, pytest.mark.django_db]

# An independent notion of "content word" (not the retriever's stop list): words of three or
# more letters that are not function words or conversational fillers, compared after
# stripping a common suffix.
FUNCTION_WORDS = set(
    """
the and you for are but not all any can had her was our out his has him how its may she too who did let that with
have this will your from they them their there then than these those what when where which while would could should
been were into over such very just also only does doing done here yes yeah okay sure really thank thanks please hello
bye sorry well mrs
""".split()
)
_SUFFIXES = ("ing", "edly", "ed", "ies", "es", "s", "ly")


def content_words(text: str) -> set[str]:
    words = set()
    for word in re.findall(r"[a-z]+", text.lower()):
        if len(word) < 3 or word in FUNCTION_WORDS:
            continue
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        words.add(word[:5])
    return words


def head(src, dst, n: int):
    with open(src, encoding="utf-8", newline="") as fin, open(dst, "w", encoding="utf-8", newline="") as fout:
        fout.writelines(islice(fin, n))
    return dst


@pytest.fixture(scope="module")
def pools(django_db_setup, django_db_blocker, shared_data, tmp_path_factory):
    """Build everything once for the module (committed; removed again at the end)."""
    tmp = tmp_path_factory.mktemp("real")
    with django_db_blocker.unblock():
        assert "test" in str(connection.settings_dict["NAME"]), "refusing to write outside the test database"
        dialogues_import(
            path=shared_data / "dailydialog/test/dialogues_test.txt", fmt="dailydialog", dataset_name="dd-test"
        )
        repository_import(
            path=head(shared_data / "dailydialog/train/dialogues_train.txt", tmp / "train.txt", 1500),
            name="real",
            fmt="dailydialog",
            exclude_datasets=["dd-test"],
        )
        cornell = next((shared_data / "cornell_PARTIAL").glob("movie_lines*.txt"))
        repository_import(
            path=head(cornell, tmp / "movie_lines.txt", 8000), name="real", fmt="cornell", exclude_datasets=["dd-test"]
        )
        report = pools_build(dataset_name="dd-test", repository_name="real", exclude_datasets=["dd-test"])
        yield report
        from annotation.models import Dataset, Repository

        Dataset.objects.filter(name="dd-test").delete()
        Repository.objects.filter(name="real").delete()


@pytest.fixture
def real(pools):
    return pools


def test_every_test_question_gets_a_full_pool(real):
    assert (real["questions"], real["built"], real["failed"]) == (918, 918, 0)
    assert real["short_pools"] == 0


def test_lexical_candidates_share_a_content_word_with_the_ground_truth(real):
    rows = Candidate.objects.filter(question__dataset__name="dd-test", source="lexical").values_list(
        "text", "question__ground_truth"
    )
    shared = [bool(content_words(text) & content_words(gt)) for text, gt in rows]
    assert len(shared) > 3000
    print(f"\nlexical candidates sharing a content word: {sum(shared) / len(shared):.3f} of {len(shared)}")
    assert sum(shared) / len(shared) >= 0.9, sum(shared) / len(shared)


def test_dense_candidates_are_closer_to_the_ground_truth_than_random_utterances(real):
    rows = list(
        Candidate.objects.filter(question__dataset__name="dd-test", source="dense").values_list(
            "text", "question__ground_truth"
        )[:2000]
    )
    rng = np.random.default_rng(0)
    utterances = list(Utterance.objects.filter(repository__name="real").values_list("text", flat=True))
    random_texts = [utterances[i] for i in rng.integers(0, len(utterances), size=len(rows))]
    encoder = get_encoder()
    gts = encoder.encode([gt for _, gt in rows])
    dense_cos = (gts * encoder.encode([t for t, _ in rows])).sum(axis=1)
    random_cos = (gts * encoder.encode(random_texts)).sum(axis=1)
    print(f"\nmean cosine to the ground truth: dense {dense_cos.mean():.3f}, random {random_cos.mean():.3f}")
    assert dense_cos.mean() > random_cos.mean() + 0.25, (dense_cos.mean(), random_cos.mean())


def test_no_pool_holds_its_ground_truth_or_an_utterance_of_its_context(real):
    for question in Question.objects.filter(dataset__name="dd-test").prefetch_related("candidates"):
        forbidden = {text_hash(question.ground_truth)} | set(
            Turn.objects.filter(context_id=question.context_id).values_list("text_hash", flat=True)
        )
        for candidate in question.candidates.all():
            if not candidate.is_ground_truth:
                assert candidate.text_hash not in forbidden, (question.pk, candidate.text)
                assert text_hash(candidate.text) == candidate.text_hash
