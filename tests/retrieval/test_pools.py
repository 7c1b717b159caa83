import pytest

from annotation.models import Candidate, Dataset, DatasetMembership, Question, Turn, Utterance
from annotation.selectors import filter_rules_current
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.demo import DEMO_DATASET, DEMO_DIR
from annotation.services.dialogue_import import dialogues_import
from annotation.services.submission import Answer, unit_submit
from core.errors import JobCancelled, UserError
from core.text import text_hash
from retrieval.models import ExclusionReason, IndexKind, IndexStatus, PoolStatus, QuestionRetrieval, RetrievalIndex
from retrieval.selectors import NOT_RECORDED, PoolFilters, pool_question
from retrieval.services import pools as pools_module
from retrieval.services.demo import DEMO_REPOSITORY, DEMO_REPOSITORY_FILE
from retrieval.services.pools import PoolSettings, pool_sizes_check, pools_build
from retrieval.services.repository_import import repository_import
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.slow


@pytest.fixture
def demo(db):
    """The demo dialogues (40 questions) and the demo subtitle repository, kept apart."""
    dialogues_import(path=DEMO_DIR / "dialogues.jsonl", fmt="jsonl", dataset_name=DEMO_DATASET)
    repository_import(path=DEMO_REPOSITORY_FILE, name=DEMO_REPOSITORY, exclude_datasets=[DEMO_DATASET])


def build(**kwargs) -> dict:
    return pools_build(dataset_name=DEMO_DATASET, repository_name=DEMO_REPOSITORY, **kwargs)


def false_candidates():
    return Candidate.objects.filter(question__dataset__name=DEMO_DATASET, is_ground_truth=False)


def test_every_question_gets_ten_candidates_from_both_retrievers(demo):
    report = build()
    assert (report["built"], report["failed"], report["candidates_added"]) == (40, 0, 400)
    lexical_total = 0
    for question in Question.objects.filter(dataset__name=DEMO_DATASET):
        sources = list(question.candidates.filter(is_ground_truth=False).values_list("source", flat=True))
        # 5 + 5; dense fills in where BM25 ran out of usable hits (the demo repository is small)
        assert len(sources) == 10 and sources.count("lexical") <= 5
        lexical_total += sources.count("lexical")
    assert lexical_total >= 150


def test_indexes_are_built_once_and_recorded_on_candidates(demo):
    build()
    indexes = RetrievalIndex.objects.filter(repository__name=DEMO_REPOSITORY, status=IndexStatus.READY)
    assert sorted(indexes.values_list("kind", flat=True)) == [IndexKind.DENSE, IndexKind.LEXICAL]
    lexical = false_candidates().filter(source="lexical").first()
    assert lexical.retriever_version == f"tantivy:wellchosen-{DEMO_REPOSITORY}-v1"
    assert lexical.rank >= 1 and lexical.retrieval_score > 0 and lexical.utterance_id
    dense = false_candidates().filter(source="dense").first()
    assert dense.retriever_version.startswith("all-MiniLM-L6-v2@") and 0 < dense.retrieval_score < 0.95
    assert all(f["retriever"] in {"lexical", "dense"} and f["rank"] >= 1 for f in dense.retrieval)


def test_pools_never_hold_the_ground_truth_its_context_or_short_utterances(demo):
    build(settings=PoolSettings(min_tokens=4))
    for question in Question.objects.filter(dataset__name=DEMO_DATASET).prefetch_related("candidates"):
        blocked = {text_hash(question.ground_truth)} | set(
            Turn.objects.filter(context=question.context).values_list("text_hash", flat=True)
        )
        for candidate in question.candidates.all():
            if not candidate.is_ground_truth:
                assert candidate.text_hash not in blocked
                assert candidate.utterance.n_tokens >= 4


def test_running_again_adds_nothing(demo):
    build()
    report = build()
    assert (report["skipped_finished"], report["built"], report["candidates_added"]) == (40, 0, 0)
    assert false_candidates().count() == 400


def test_an_interrupted_run_resumes_where_it_stopped(demo):
    # given a run that stops after its second batch (a crash or a cancel)
    class StopAfterTwo:
        phase = ""

        def update(self, **kwargs):
            self.phase = kwargs.get("phase") or self.phase  # earlier phases build the indexes
            if self.phase == "retrieving candidates" and kwargs["done"] == 20:
                raise JobCancelled()

    with pytest.raises(JobCancelled):
        build(batch_size=10, progress=StopAfterTwo())
    assert QuestionRetrieval.objects.filter(status=PoolStatus.DONE).count() == 20
    # when it runs again
    report = build(batch_size=10)
    # then only the rest is done, and no candidate is duplicated
    assert (report["skipped_finished"], report["built"]) == (20, 20)
    assert false_candidates().count() == 400


def test_a_failing_question_is_recorded_and_the_others_are_built(demo, monkeypatch):
    broken = Question.objects.filter(dataset__name=DEMO_DATASET).order_by("id")[3]
    real_choose = pools_module.pool_choose

    def choose(ranked, **kwargs):
        if text_hash(broken.ground_truth) in kwargs["blocked"]:  # the ground truth is never a candidate
            raise RuntimeError("index returned garbage")
        return real_choose(ranked, **kwargs)

    monkeypatch.setattr(pools_module, "pool_choose", choose)
    report = build()
    assert (report["built"], report["failed"]) == (39, 1)
    failure = QuestionRetrieval.objects.get(status=PoolStatus.FAILED)
    assert failure.question_id == broken.pk and "index returned garbage" in failure.error
    # and a later run retries it
    monkeypatch.setattr(pools_module, "pool_choose", real_choose)
    assert build()["built"] == 1


def test_when_one_retriever_runs_dry_the_other_fills_the_pool(demo, write_file):
    # given a question whose ground truth has only stop words: BM25 finds nothing for it
    dialogues_import(
        path=write_file("odd.jsonl", '{"context": ["So?"], "response": "Well, what if they did?"}\n'),
        fmt="jsonl",
        dataset_name="odd",
    )
    pools_build(dataset_name="odd", repository_name=DEMO_REPOSITORY)
    sources = list(
        Candidate.objects.filter(question__dataset__name="odd", is_ground_truth=False).values_list("source", flat=True)
    )
    assert sources == ["dense"] * 10


def test_near_paraphrases_of_the_ground_truth_are_left_out(demo, write_file):
    # given a repository line that says the same as a ground truth in other words
    question = Question.objects.filter(dataset__name=DEMO_DATASET).order_by("id").first()
    paraphrase = "We have a medium left in green. Would you like to try it on?"
    repository_import(path=write_file("more.txt", paraphrase + "\n"), name=DEMO_REPOSITORY)
    # when pools are built, the paraphrase (cosine >= 0.95) is not a false candidate ...
    build(settings=PoolSettings(paraphrase_threshold=0.95))
    assert not question.candidates.filter(text=paraphrase).exists()
    # ... while without the threshold it would have been
    QuestionRetrieval.objects.all().delete()
    build(settings=PoolSettings(paraphrase_threshold=1.01))
    assert question.candidates.filter(text=paraphrase).exists()


def test_utterances_of_excluded_datasets_are_left_out(demo):
    build(exclude_datasets=["demo-dialogues"])  # excluded already at import: nothing changes
    excluded = set(Turn.objects.filter(context__dataset__name=DEMO_DATASET).values_list("text_hash", flat=True))
    assert not false_candidates().filter(text_hash__in=excluded).exists()


def test_an_import_makes_the_indexes_stale(demo, write_file):
    build()
    repository_import(path=write_file("more.txt", "A brand new line about trains.\n"), name=DEMO_REPOSITORY)
    QuestionRetrieval.objects.all().delete()
    build()
    versions = RetrievalIndex.objects.filter(kind=IndexKind.LEXICAL).values_list("version", flat=True)
    assert sorted(versions) == [1, 2]


def test_unknown_dataset_or_repository_is_an_error(demo):
    with pytest.raises(UserError, match="no repository 'nope'"):
        pools_build(dataset_name=DEMO_DATASET, repository_name="nope")
    with pytest.raises(UserError, match="no dataset 'nope'"):
        pools_build(dataset_name="nope", repository_name=DEMO_REPOSITORY)


def test_with_elasticsearch_configured_bm25_runs_there(demo, settings):
    # given an Elasticsearch (the local double, through the real client) in the settings
    from tests.retrieval.es_double import ElasticsearchDouble

    with ElasticsearchDouble() as es:
        settings.ELASTICSEARCH_URL = es.url
        # when pools are built
        report = build()
        # then the BM25 index lives there and its candidates say so
        assert report["lexical_index"] == f"elasticsearch:wellchosen-{DEMO_REPOSITORY}-v1"
        assert false_candidates().filter(retriever_version__startswith="elasticsearch:").count() >= 150
        assert es.sent("POST", "/_bulk") or es.sent("PUT", "/_bulk")
        assert not es.errors


@pytest.mark.parametrize(("lexical", "dense"), [(0, 0), (-1, 3), (3, -1)])
def test_a_pool_needs_at_least_one_candidate_and_no_negative_count(lexical, dense):
    with pytest.raises(UserError, match=f"Ask for at least one candidate per question: .* not {lexical} and {dense}"):
        pool_sizes_check(lexical=lexical, dense=dense)


def test_pools_are_not_built_with_no_candidate_asked_for(demo):
    with pytest.raises(UserError, match="Ask for at least one candidate per question"):
        build(settings=PoolSettings(lexical=0, dense=0))
    assert not false_candidates().exists()


def test_attention_checks_come_from_the_pools_repository_and_are_no_text_of_a_dataset(demo):
    build()
    dataset = Dataset.objects.select_related("attention_check_repository").get(name=DEMO_DATASET)
    assert dataset.attention_check_repository.name == DEMO_REPOSITORY
    Dataset.objects.filter(pk=dataset.pk).update(attention_check_rate=1.0)
    annotation_open(dataset=dataset)
    annotator = AnnotatorFactory()
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    shown = []
    while (assignment := unit_next(annotator=annotator)) is not None:
        shown += [item["text"] for item in assignment.items if item.get("check")]
        unit_submit(
            assignment_id=assignment.pk,
            annotator=annotator,
            answers={item["key"]: Answer(0 if item.get("check") else 3) for item in assignment.items},
        )
    forbidden = set(Candidate.objects.values_list("text_hash", flat=True)) | set(
        Turn.objects.values_list("text_hash", flat=True)
    )
    assert shown and len(set(shown)) == len(shown)
    assert [text for text in shown if text_hash(text) in forbidden] == []


def test_hits_left_out_are_recorded_with_why(demo, write_file):
    # given the first question's ground truth and context turns in the repository
    question = Question.objects.filter(dataset__name=DEMO_DATASET).order_by("id").first()
    turns = list(Turn.objects.filter(context=question.context).order_by("position").values_list("text", flat=True))
    repository_import(
        path=write_file("more.txt", "\n".join([question.ground_truth, *turns]) + "\n"), name=DEMO_REPOSITORY
    )
    # when pools are built
    build()
    # then both retrievers found the ground truth first and left it out, and its context turns too
    exclusions = QuestionRetrieval.objects.get(question=question).exclusions
    for retriever in ("lexical", "dense"):
        first = next(e for e in exclusions if e["retriever"] == retriever)
        assert (first["rank"], first["reason"], first["text"]) == (
            1,
            ExclusionReason.GROUND_TRUTH,
            question.ground_truth,
        )
        assert first["utterance_id"] == Utterance.objects.get(text=question.ground_truth).pk
    copies = {e["text"] for e in exclusions if e["reason"] == ExclusionReason.CONTEXT}
    assert copies and copies <= set(turns)
    assert not question.candidates.filter(text__in=[question.ground_truth, *turns], is_ground_truth=False).exists()


def test_short_hits_and_paraphrases_left_out_say_by_how_much(demo):
    build(settings=PoolSettings(min_tokens=5, paraphrase_threshold=0.7))
    exclusions = [e for r in QuestionRetrieval.objects.all() for e in r.exclusions]
    short = [e for e in exclusions if e["reason"] == ExclusionReason.TOO_SHORT]
    paraphrases = [e for e in exclusions if e["reason"] == ExclusionReason.PARAPHRASE]
    assert short and all(e["tokens"] < 5 and len(e["text"].split()) < 8 for e in short)
    assert paraphrases and all(0.7 <= e["similarity"] <= 1 + 1e-6 for e in paraphrases)


def test_every_rank_down_to_the_deepest_used_is_a_candidate_or_a_recorded_exclusion(demo):
    # given pools built with exclusions of every kind
    build(settings=PoolSettings(min_tokens=5, paraphrase_threshold=0.7))
    dataset = Dataset.objects.get(name=DEMO_DATASET)
    # then the review page has a reason for every rank of every retriever
    for question in Question.objects.filter(dataset=dataset):
        shown = pool_question(question=question, rules=filter_rules_current(), filters=PoolFilters())
        ranks = [hit for table in shown["pools"] for r in table["retrievers"] for hit in r["ranks"]]
        assert ranks and not [hit for hit in ranks if hit["why"] == NOT_RECORDED]


def pools_now() -> list[tuple]:
    """Every false candidate as it would be exported, without the index version names (a rebuilt
    index is a new version)."""
    return list(
        false_candidates()
        .order_by("question_id", "source", "rank")
        .values_list("question_id", "text", "source", "rank", "retrieval_score", "utterance_id")
    )


def test_the_same_data_gives_the_same_pools_on_freshly_built_indexes(demo):
    # given pools built once
    build()
    first = pools_now()
    # when the pools and both indexes are thrown away and everything is built again
    false_candidates().delete()
    QuestionRetrieval.objects.all().delete()
    RetrievalIndex.objects.update(status=IndexStatus.FAILED)
    build()
    # then new index versions gave the very same pools: texts, sources, ranks and scores
    assert RetrievalIndex.objects.filter(status=IndexStatus.READY).count() == 2
    assert pools_now() == first and len(first) == 400


def test_the_pools_do_not_depend_on_how_the_questions_were_batched(demo):
    # given pools built 128 questions at a time (all 40 in one step)
    build()
    first = pools_now()
    # when they are built again 7 questions at a time
    false_candidates().delete()
    QuestionRetrieval.objects.all().delete()
    build(batch_size=7)
    # then every pool is the same, scores included (each query's vector does not depend on its batch)
    assert pools_now() == first
