"""The world the authorization matrix runs in: one real object of every kind a URL can point at,
the accounts of every role, and secret marker strings that must only reach the roles allowed to
read them (tests/security/test_authz_matrix.py)."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction

from annotation.models import Annotator, Candidate, DatasetMembership, FilterRules
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.invitations import invitation_create
from core.models import Job
from crowd.models import CrowdBonus, CrowdTask
from crowd.providers.link import link_token
from crowd.selectors import unit_token
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from crowd.services.work import link_unit_next, link_worker_ensure
from evaluation.models import Campaign, Evaluation, PairEvaluation, RandomTrialResult
from negatives.models import QuestionGeneration
from pairs.models import Pair, PairSet, QuestionBuild
from retrieval.models import QuestionRetrieval, RetrievalIndex
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    GeneratedResponseFactory,
    GenerationFactory,
    PairFactory,
    PairSetFactory,
    QuestionFactory,
    RepositoryFactory,
    ScoreFactory,
    SystemFactory,
    UserFactory,
    UtteranceFactory,
)
from testsets.models import TestSet
from testsets.services.build import testset_build

# Every role the matrix signs in as; "anonymous" has no account.
ROLES = ("anonymous", "annotator_a", "annotator_b", "user", "staff", "viewer", "researcher")

# The secret markers: ground truths of each dataset, and a context turn of dataset A. Each must
# only reach the roles (and pages) that tests/security/authz_expectations.SECRET_READERS allows.
GT_A = "GT-SECRET-A"  # dataset A: annotator A's work
GT_B = "GT-SECRET-B"  # dataset B: annotator B's work
GT_RELEASE = "GT-SECRET-R"  # the dataset the test set is built from (no annotator works on it)
GT_CROWD = "GT-SECRET-C"  # the crowd batches' dataset (the signed tokens are the capability)
CONTEXT_A = "CTX-SECRET-A"
PHRASE = " is where I would rather be tonight."
HIT_ID = "3AUTHZHIT00000000000000000001"


@dataclass
class World:
    users: dict = field(default_factory=dict)  # role -> User
    objects: dict = field(default_factory=dict)  # "app_label.model" -> an instance
    values: dict = field(default_factory=dict)  # what the URL kwargs and query strings are filled with


def _scored_question(dataset, marker: str, n: int, raters: list[Annotator]):
    """A question with its ground truth (carrying the marker) and three false candidates, each scored
    by five imported raters so that a test set can be built from it."""
    question = QuestionFactory(dataset=dataset, ground_truth=f"{marker}-{n}{PHRASE}")
    truth = question.candidates.get(is_ground_truth=True)
    for rater in raters:
        ScoreFactory(candidate=truth, annotator=rater, value=5)
    for i in range(3):
        false = CandidateFactory(question=question, text=f"The ferry to island {n}-{i} is late again.")
        for rater in raters:
            ScoreFactory(candidate=false, annotator=rater, value=1)
    return question


def _open_dataset(name: str, marker: str, *, questions: int = 2):
    dataset = DatasetFactory(name=name, annotators_per_item=3, adaptive_stopping=False, attention_check_rate=0)
    for n in range(questions):
        question = QuestionFactory(
            dataset=dataset,
            ground_truth=f"{marker}-{n}{PHRASE}",
            context__turns=[f"{CONTEXT_A if marker == GT_A else 'Shall we'} go out {n}?", "Maybe later."],
        )
        CandidateFactory(question=question, text=f"The museum closes at {n} on Sundays.")
    annotation_open(dataset=dataset)
    return dataset


def _internal_annotator(username: str, dataset) -> Annotator:
    user = UserFactory(username=username)
    annotator = Annotator.objects.create(user=user, provider="internal", external_id=username, display_name=username)
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    return annotator


def _accounts(world: World, dataset_a, dataset_b) -> None:
    annotator_a = _internal_annotator("authz-annotator-a", dataset_a)
    annotator_b = _internal_annotator("authz-annotator-b", dataset_b)
    viewer = UserFactory(username="authz-viewer", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    world.users = {
        "annotator_a": annotator_a.user,
        "annotator_b": annotator_b.user,
        "user": UserFactory(username="authz-user"),
        "staff": UserFactory(username="authz-staff", is_staff=True),
        "viewer": viewer,
        # What the demo (annotation.services.demo) makes a researcher: staff and superuser.
        "researcher": UserFactory(username="authz-researcher", is_staff=True, is_superuser=True),
    }
    world.objects["annotation.annotator"] = annotator_a
    world.values["annotator_id"] = annotator_a.pk
    world.values["assignment_id"] = unit_next(annotator=annotator_a).pk
    unit_next(annotator=annotator_b)  # B holds a unit of their own dataset, with its ground truth


def _release(world: World) -> None:
    raters = AnnotatorFactory.create_batch(5)
    dataset = DatasetFactory(name="authz-release")
    questions = [_scored_question(dataset, GT_RELEASE, n, raters) for n in range(3)]
    testset = testset_build(dataset_name=dataset.name, name="authz-release-1", seed=0)
    repository = RepositoryFactory(name="authz-films")
    utterance = UtteranceFactory(repository=repository, text="The lighthouse keeper sings at dawn.")
    index = RetrievalIndex.objects.create(
        repository=repository, kind="lexical", version=1, backend="tantivy", name="authz-index", content_version=1
    )
    pool = QuestionRetrieval.objects.create(question=questions[0], repository=repository, status="done", pool_size=4)
    generation_outcome = QuestionGeneration.objects.create(question=questions[0], setup="authz", outcome="generated")
    pair_set = PairSet.objects.create(name="authz-pairs", dataset=dataset)
    pair = Pair.objects.create(
        pair_set=pair_set,
        question=questions[0],
        context=["Is the museum open?"],
        correct="It opens at nine.",
        incorrect="It closes at nine.",
        type="content",
        correct_start=3,
        correct_end=8,
        incorrect_start=3,
        incorrect_end=9,
        key="authz",
    )
    build = QuestionBuild.objects.create(pair_set=pair_set, question=questions[0], outcomes={"content": "generated"})
    system = SystemFactory(name="authz-system")
    evaluation = Evaluation.objects.create(testset=testset, system=system, status="succeeded")
    generation = GenerationFactory(system=system)
    response = GeneratedResponseFactory(generation=generation)
    pair_set = PairSetFactory(name="authz-pairs")
    PairFactory(pair_set=pair_set)
    pair_evaluation = PairEvaluation.objects.create(pair_set=pair_set, system=system, status="succeeded")
    campaign = Campaign.objects.create(name="authz-campaign", testset=testset, repository=repository, pair_set=pair_set)
    campaign.systems.add(system)
    trial = RandomTrialResult.objects.create(campaign=campaign, system=system, trial=0, questions=3, correct=1)
    job = Job.objects.create(kind="build_testset", params={"dataset_id": dataset.pk}, created_by=None)
    score = questions[0].candidates.get(is_ground_truth=True).scores.first()
    world.objects.update(
        {
            "annotation.dataset": dataset,
            "annotation.context": questions[0].context,
            "annotation.question": questions[0],
            "annotation.candidate": questions[0].candidates.get(is_ground_truth=True),
            "annotation.score": score,
            "annotation.filterrules": FilterRules.objects.order_by("-version").first(),
            "testsets.testset": testset,
            "annotation.repository": repository,
            "annotation.utterance": utterance,
            "retrieval.retrievalindex": index,
            "retrieval.questionretrieval": pool,
            "negatives.questiongeneration": generation_outcome,
            "pairs.pairset": pair_set,
            "pairs.pair": pair,
            "pairs.questionbuild": build,
            "evaluation.system": system,
            "evaluation.evaluation": evaluation,
            "evaluation.pairevaluation": pair_evaluation,
            "evaluation.generation": generation,
            "evaluation.generatedresponse": response,
            "evaluation.campaign": campaign,
            "evaluation.randomtrialresult": trial,
            "core.job": job,
        }
    )
    world.values.update(
        {
            "job_id": job.pk,
            "campaign": campaign.name,
            "testset_id": testset.pk,
            "pair_set": pair_set.name,
            "pair_id": pair.pk,
        }
    )


def _crowd(world: World) -> None:
    dataset = _open_dataset("authz-crowd", GT_CROWD)
    link_batch = crowd_batch_create(dataset=dataset, provider="link", name="authz-link")
    crowd_batch_publish(batch=link_batch)
    link_batch.refresh_from_db()
    worker = link_worker_ensure(batch=link_batch, worker_id="AUTHZWORKER1")
    crowd_assignment = link_unit_next(batch=link_batch, worker=worker)
    other_batch = crowd_batch_create(dataset=dataset, provider="link", name="authz-link-other")
    crowd_batch_publish(batch=other_batch)
    other_batch.refresh_from_db()
    mturk_batch = crowd_batch_create(dataset=dataset, provider="mturk", name="authz-mturk", settings={"reward": "0.25"})
    question = dataset.questions.order_by("pk").first()
    CrowdTask.objects.create(
        batch=mturk_batch,
        question=question,
        provider="mturk",
        max_assignments=3,
        external_id=HIT_ID,
        status="published",
    )
    mturk_batch.status = "published"
    mturk_batch.save(update_fields=["status"])
    bonus = CrowdBonus.objects.create(
        crowd_assignment=crowd_assignment, amount=Decimal("0.10"), reason="authz", token="authz-bonus-token"
    )
    world.objects.update(
        {
            "crowd.crowdbatch": link_batch,
            "crowd.crowdtask": crowd_assignment.task,
            "crowd.crowdassignment": crowd_assignment,
            "crowd.crowdbonus": bonus,
        }
    )
    world.values.update(
        {
            "unit_token": unit_token(crowd_assignment=crowd_assignment),
            "link_token": link_token(batch=link_batch),
            "other_link_token": link_token(batch=other_batch),
            "link_worker": worker,
        }
    )


def _logins(world: World) -> None:
    """One row of each of django-axes' login records (a failed login, a login, a failure log)."""
    seen = {"user_agent": "authz", "ip_address": "192.0.2.1", "http_accept": "*/*", "path_info": "/accounts/login/"}
    world.objects.update(
        {
            "axes.accessattempt": AccessAttempt.objects.create(
                username="authz-someone", get_data="", post_data="", failures_since_start=1, **seen
            ),
            "axes.accesslog": AccessLog.objects.create(username="annotator_a", **seen),
            "axes.accessfailurelog": AccessFailureLog.objects.create(username="authz-someone", **seen),
        }
    )


def world_build() -> World:
    """Build the world; called once per test module inside a transaction that is rolled back."""
    world = World()
    dataset_a = _open_dataset("authz-a", GT_A)
    dataset_b = _open_dataset("authz-b", GT_B)
    _accounts(world, dataset_a, dataset_b)
    world.values.update(
        {
            "dataset_a": dataset_a,
            "invite_token": invitation_create(dataset=dataset_a)[1],
            # another link, for the researcher to withdraw (the one above stays usable)
            "invitation_id": invitation_create(dataset=dataset_a)[0].pk,
        }
    )
    _release(world)
    _crowd(world)
    _logins(world)
    world.objects.update(
        {
            "auth.user": world.users["annotator_a"],
            "auth.group": Group.objects.create(name="authz-group"),
        }
    )
    world.values["content_type_id"] = ContentType.objects.get_for_model(TestSet).pk
    world.values["candidate_ids"] = set(Candidate.objects.values_list("pk", flat=True))
    return world


@contextmanager
def world_kept(django_db_blocker) -> Iterator[World]:
    """The world for a whole test module (its module-scoped fixture), in a transaction rolled back
    at its end: every test's own transaction nests inside it."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield world_build()
        transaction.set_rollback(True)
