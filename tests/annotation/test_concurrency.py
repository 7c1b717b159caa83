"""Many annotators at once against a live server: no score lost, none duplicated, every unit
done by exactly K distinct annotators. On PostgreSQL with 60 concurrent sessions (the engine
relies on SELECT ... FOR UPDATE SKIP LOCKED there); on SQLite with fewer (writes serialise)."""

import random
import re
import threading

import httpx
import pytest
from django.db import connection
from django.test import Client

from annotation.models import Annotator, Assignment, AssignmentStatus, Candidate, DatasetMembership, QuestionWork, Score
from annotation.services.assignment import annotation_open
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, UserFactory, attention_check_repository

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

K = 5


@pytest.fixture
def sessions(live_server):
    n_sessions = 60 if connection.vendor == "postgresql" else 16
    n_questions = 30 if connection.vendor == "postgresql" else 8
    dataset = DatasetFactory(name="load", adaptive_stopping=False, attention_check_rate=0.2, annotators_per_item=K)
    for _ in range(n_questions):
        question = QuestionFactory(dataset=dataset)
        for i in range(3):
            CandidateFactory(question=question, text=f"reply {question.pk}.{i}")
    attention_check_repository(dataset, utterances=n_questions)
    annotation_open(dataset=dataset)
    cookies = []
    for i in range(n_sessions):
        user = UserFactory(username=f"load{i}")
        annotator = Annotator.objects.create(user=user, provider="internal", external_id=user.username)
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies["sessionid"].value)
    return live_server.url, cookies, n_questions


def annotate(base: str, session_id: str, seed: int, log: dict, lock: threading.Lock) -> None:
    """One annotator's session; a request that fails outright (a timeout) is an error too, not a
    silently stopped thread that leaves its unit one submission short."""
    try:
        annotate_until_done(base, session_id, seed, log, lock)
    except httpx.HTTPError as exc:
        with lock:
            log["errors"].append(("transport", type(exc).__name__, str(exc)[:300]))


def annotate_until_done(base: str, session_id: str, seed: int, log: dict, lock: threading.Lock) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=base, cookies={"sessionid": session_id}, timeout=60, follow_redirects=True) as http:
        while True:
            page = http.get("/annotate/")
            if page.status_code != 200:
                with lock:
                    log["errors"].append(("get", page.status_code, page.text[:300]))
                return
            if "Nothing left to score" in page.text:
                return
            keys = re.findall(r'name="score-([0-9a-f]+)" value="0"', page.text)
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
            data = {f"score-{key}": str(rng.randint(0, 5)) for key in keys} | {"csrfmiddlewaretoken": token}
            # the next unit is shown at /annotate/; its form posts to the unit's own URL
            url = str(page.url.join(re.search(r'action="([^"]+)"[^>]*id="unit-form"', page.text).group(1)))
            posts = 2 if rng.random() < 0.2 else 1  # some double clicks
            for _ in range(posts):
                answer = http.post(url, data=data, headers={"Referer": url}, follow_redirects=False)
                if answer.status_code != 302:
                    with lock:
                        log["errors"].append(("post", answer.status_code, answer.text[:300]))
                    return
            with lock:
                log["submitted"].append((url, len([k for k in keys])))


def test_sixty_concurrent_annotators_lose_and_duplicate_nothing(sessions):
    base, cookies, n_questions = sessions
    log, lock = {"submitted": [], "errors": []}, threading.Lock()
    threads = [threading.Thread(target=annotate, args=(base, cookie, i, log, lock)) for i, cookie in enumerate(cookies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not log["errors"], log["errors"][:3]
    # every unit was done by exactly K distinct annotators, and nobody got a unit twice
    assert QuestionWork.objects.count() == n_questions
    for work in QuestionWork.objects.all():
        done = Assignment.objects.filter(question_id=work.pk, status=AssignmentStatus.SUBMITTED)
        assert done.count() == K and done.values("annotator").distinct().count() == K
        assert work.slots_taken == K
    # every candidate has exactly K scores, one per annotator (no duplicates, none lost)
    for candidate in Candidate.objects.filter(question__dataset__name="load"):
        assert candidate.scores.count() == K
    assert len({url for url, _ in log["submitted"]}) == len(log["submitted"]) == n_questions * K
    candidate_items = sum(sum(1 for item in a.items if "candidate_id" in item) for a in Assignment.objects.all())
    assert Score.objects.count() == candidate_items == n_questions * 4 * K
