"""The pool review page: a question's dialogue beside its ground truth and candidates, their
retriever scores and ranks, why each missing rank is no candidate, the scores and the rule
decisions; paging, filters, bad values answered with 400, and a fixed number of queries."""

import re

import pytest
from django.urls import reverse

from annotation.models import CandidateSource
from retrieval.models import ExclusionReason, PoolStatus, QuestionRetrieval
from retrieval.selectors import NOT_RECORDED
from tests.factories import (
    CandidateFactory,
    DatasetFactory,
    QuestionFactory,
    RepositoryFactory,
    ScoreFactory,
    UtteranceFactory,
    staff_with,
)

pytestmark = pytest.mark.django_db

TURNS = ["Is the museum open today?", "Only until six.", "Should we take the bus?"]


@pytest.fixture
def reviewer(client):
    client.force_login(staff_with("annotation.view_question", username="reviewer"))
    return client


@pytest.fixture
def repository():
    return RepositoryFactory(name="films")


def retrieved(question, repository, text, *, source="lexical", score=0.7089802026748657, rank=1, also=None):
    """A retrieved candidate of ``question``, from an utterance of ``repository``."""
    utterance = UtteranceFactory(repository=repository, text=text)
    found = [{"retriever": source, "score": score, "rank": rank, "version": "v1"}, *(also or [])]
    return CandidateFactory(
        question=question,
        utterance=utterance,
        text=text,
        source=source,
        retrieval_score=score,
        rank=rank,
        retrieval=found,
    )


def pool(question, repository, *exclusions):
    return QuestionRetrieval.objects.create(
        question=question, repository=repository, status=PoolStatus.DONE, pool_size=2, exclusions=list(exclusions)
    )


def excluded(rank, reason, *, retriever="lexical", **detail):
    return {
        "retriever": retriever,
        "rank": rank,
        "score": 0.5,
        "utterance_id": 1,
        "text": f"excluded hit {rank}",
        "reason": reason,
        **detail,
    }


@pytest.fixture
def pools(repository):
    """Three questions of the dataset "museum": the first with a lexical candidate at ranks 1 and 3
    (rank 2 a paraphrase) and a dense one, the others with one lexical candidate each."""
    dataset = DatasetFactory(name="museum")
    questions = [
        QuestionFactory(dataset=dataset, ground_truth=f"The museum closes at six ({i}).", context__turns=TURNS)
        for i in range(3)
    ]
    first = questions[0]
    retrieved(first, repository, "The museum is closed on Mondays.", rank=1)
    retrieved(first, repository, "We took the bus to the museum.", rank=3)
    retrieved(
        first,
        repository,
        "Buses run every ten minutes.",
        source="dense",
        score=0.61234,
        rank=1,
        also=[{"retriever": "lexical", "score": 3.14159, "rank": 4, "version": "v1"}],
    )
    pool(first, repository, excluded(2, ExclusionReason.PARAPHRASE, similarity=0.9612))
    for question in questions[1:]:
        retrieved(question, repository, f"Another museum line {question.pk}.", rank=1)
        pool(question, repository)
    return questions


def page(client, name="museum", **query):
    return client.get(reverse("pool-review", args=[name]), query)


def test_the_page_shows_the_dialogue_and_the_candidates_with_three_digit_scores(reviewer, pools):
    html = page(reviewer, q=pools[0].pk).content.decode()
    for turn in TURNS:
        assert turn in html
    assert "The museum closes at six (0)." in html and "Ground truth:" in html
    assert html.count("The museum is closed on Mondays.") == 2  # its row, and its rank
    assert "0.709" in html and "0.7089802026748657" not in html
    assert "0.612" in html and "lexical #4 (3.142)" in html


def test_a_missing_rank_says_why_it_is_no_candidate(reviewer, pools):
    html = page(reviewer, q=pools[0].pk).content.decode()
    lexical = html[html.index('id="ranks-') :]
    rows = re.findall(r'<td class="num">(\d+)</td><td class="num">([^<]*)</td><td>([^<]*)</td><td>(.*?)</td>', lexical)
    first, third = (pools[0].candidates.get(source="lexical", rank=rank).pk for rank in (1, 3))
    dense = pools[0].candidates.get(source="dense").pk
    assert [(rank, why) for rank, _, _, why in rows[:4]] == [
        ("1", f'<a href="#candidate-{first}">candidate</a>'),
        ("2", "paraphrase of the ground truth (cosine 0.961)"),
        ("3", f'<a href="#candidate-{third}">candidate</a>'),
        ("4", f'<a href="#candidate-{dense}">candidate (put in the pool by dense retrieval)</a>'),
    ]


def test_a_pool_built_before_exclusions_were_recorded_says_so(reviewer, pools):
    QuestionRetrieval.objects.filter(question=pools[0]).update(exclusions=[])
    html = page(reviewer, q=pools[0].pk).content.decode()
    assert NOT_RECORDED in html


def test_before_any_score_no_decision_is_shown(reviewer, pools):
    html = page(reviewer, q=pools[0].pk).content.decode()
    assert "not scored" in html and "dropped as" not in html and "kept" not in html.split('id="candidates"')[1]


def test_after_scores_each_candidate_shows_its_scores_and_decision(reviewer, scored_question):
    dataset = DatasetFactory(name="scored")
    question = scored_question(
        dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1], [5, 4, 5, 4, 5], [0, 0, 0, 1, 1]]
    )
    html = page(reviewer, "scored", q=question.pk).content.decode()
    rows = {
        text: html[html.index(text) : html.index("</tr>", html.index(text))]
        for text in (question.ground_truth, *(f"false candidate {question.pk}-{i}" for i in range(3)))
    }
    assert ">4 5 5 5 5<" in rows[question.ground_truth] and "ground truth passed" in rows[question.ground_truth]
    assert (
        ">1 1 1 1 2<" in rows[f"false candidate {question.pk}-0"]
        and ">kept<" in rows[f"false candidate {question.pk}-0"]
    )
    assert "dropped as acceptable" in rows[f"false candidate {question.pk}-1"]
    assert "dropped as ungrammatical" in rows[f"false candidate {question.pk}-2"]


def test_without_a_question_the_first_is_shown_and_paging_links_its_neighbours(reviewer, pools):
    html = page(reviewer).content.decode()
    assert f'data-question="{pools[0].pk}"' in html and 'id="previous"' not in html
    html = page(reviewer, q=pools[1].pk).content.decode()
    assert f'id="previous" href="?q={pools[0].pk}"' in html and f'id="next" href="?q={pools[2].pk}"' in html
    assert "2 of 3" in html


def test_the_index_counts_candidates_by_source_and_decision(reviewer, pools):
    html = page(reviewer).content.decode()
    counts = html[html.index('id="source-counts"') : html.index("</table>")]
    lexical = counts[counts.index("lexical retrieval") : counts.index("</tr>", counts.index("lexical retrieval"))]
    assert re.findall(r">(\d+)<", lexical)[:2] == ["4", "0"]  # all, kept
    assert "3 questions; ground truth passed 0 · rejected 0 · undecided 3" in html


def test_the_source_filter_pages_through_questions_with_such_a_candidate_and_shows_only_those(reviewer, pools):
    response = page(reviewer, source="dense")
    html = response.content.decode()
    assert f'data-question="{pools[0].pk}"' in html and "1 question in this list" in html
    assert "Buses run every ten minutes." in html and "2 candidates hidden by the filters" in html
    assert 'id="next"' not in html


def test_the_decision_filters_keep_the_questions_with_a_candidate_or_ground_truth_so_decided(reviewer, scored_question):
    dataset = DatasetFactory(name="scored")
    kept = scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]])
    acceptable = scored_question(dataset=dataset, gt=[1, 2, 1, 5, 5], false=[[5, 4, 5, 4, 5]])
    assert f'data-question="{kept.pk}"' in page(reviewer, "scored", decision="kept").content.decode()
    html = page(reviewer, "scored", decision="acceptable").content.decode()
    assert f'data-question="{acceptable.pk}"' in html and "1 question in this list" in html
    html = page(reviewer, "scored", ground_truth="rejected").content.decode()
    assert f'data-question="{acceptable.pk}"' in html and "1 question in this list" in html
    html = page(reviewer, "scored", decision="ungrammatical").content.decode()
    assert "No question with these filters." in html and "0 questions in this list" in html


def test_a_question_outside_the_filtered_list_is_shown_and_says_so(reviewer, pools):
    html = page(reviewer, source="dense", q=pools[2].pk).content.decode()
    assert f'data-question="{pools[2].pk}"' in html and "not in this list" in html
    assert f'id="previous" href="?source=dense&amp;q={pools[0].pk}"' in html


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"source": "bm25"}, "source must be one of lexical, dense, mlm_negative, system_response, imported"),
        ({"source": "generated"}, "not &#x27;generated&#x27;"),
        (
            {"decision": "dropped"},
            "decision must be one of kept, acceptable, ungrammatical, undecided (not &#x27;dropped&#x27;)",
        ),
        ({"ground_truth": "ok"}, "ground_truth must be one of passed, rejected, undecided"),
        ({"q": "abc"}, "q must be a question id (a whole number), not &#x27;abc&#x27;"),
    ],
)
def test_a_bad_filter_value_is_a_400_with_a_clear_message(reviewer, pools, query, message):
    response = page(reviewer, **query)
    assert response.status_code == 400 and message in response.content.decode()


def test_a_question_of_another_dataset_is_not_found(reviewer, pools):
    other = QuestionFactory(dataset=DatasetFactory(name="other"))
    assert page(reviewer, q=other.pk).status_code == 404
    assert page(reviewer, "nope").status_code == 404


def test_a_rating_dataset_has_no_pools(reviewer):
    DatasetFactory(name="ratings", task="rate")
    response = page(reviewer, "ratings")
    assert response.status_code == 400 and "has no candidate pools" in response.content.decode()


def test_the_number_of_queries_does_not_grow_with_candidates(reviewer, pools, repository, django_assert_num_queries):
    page(reviewer, q=pools[0].pk)  # the session and permission caches, and the dataset's index
    with django_assert_num_queries(13):  # the index read from the cache
        page(reviewer, q=pools[1].pk)
    for i in range(20):
        retrieved(pools[0], repository, f"One more museum line {i}.", source=CandidateSource.DENSE, rank=i + 2)
    with django_assert_num_queries(15):  # new candidates: the index computed again (two queries)
        assert "One more museum line 19." in page(reviewer, q=pools[0].pk).content.decode()
    with django_assert_num_queries(13):
        page(reviewer, q=pools[0].pk)


def test_the_counts_follow_a_new_score_at_once(reviewer, pools):
    # given the page seen once (its index cached), with the first question's dense candidate unscored
    dense = pools[0].candidates.get(source=CandidateSource.DENSE)
    before = page(reviewer, q=pools[0].pk).content.decode()
    # when three annotators find that candidate acceptable
    ScoreFactory.create_batch(3, candidate=dense, value=5)
    after = page(reviewer, q=pools[0].pk).content.decode()
    # then the counts by source and the candidate's decision say so on the next page
    assert (acceptable_dense(before), acceptable_dense(after)) == (0, 1)
    assert "dropped as acceptable" not in before and "dropped as acceptable" in after


def acceptable_dense(html: str) -> int:
    """The count of the by-source table's cell for dense candidates dropped as acceptable."""
    return int(re.search(r"source=dense&amp;decision=acceptable[^>]*>(\d+)<", html).group(1))


def test_the_page_needs_the_view_question_permission(client, pools):
    client.force_login(staff_with("annotation.view_dataset", username="no-questions"))
    assert page(client).status_code == 403


def test_the_dashboard_and_the_question_admin_link_to_the_page(client, pools):
    client.force_login(staff_with("annotation.view_dataset", "annotation.view_question", username="linked"))
    url = reverse("pool-review", args=["museum"])
    assert url in client.get(reverse("dashboard-dataset", args=["museum"])).content.decode()
    admin = client.get(reverse("admin:annotation_question_change", args=[pools[0].pk])).content.decode()
    assert f"{url}?q={pools[0].pk}" in admin


def test_a_masked_lm_negative_is_labelled_and_filtered_as_its_own_source(reviewer, pools):
    CandidateFactory(question=pools[1], text="The museum opens at six.", source=CandidateSource.MLM_NEGATIVE)
    html = page(reviewer, source="mlm_negative").content.decode()
    assert f'data-question="{pools[1].pk}"' in html and "1 question in this list" in html
    row = html[html.index("The museum opens at six.") :]
    assert "masked-LM negative (Park et al.)" in row[: row.index("</tr>")]
