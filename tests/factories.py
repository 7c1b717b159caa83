import factory
from django.contrib.auth import get_user_model

from annotation.models import (
    Annotator,
    AnnotatorProvider,
    Candidate,
    CandidateSource,
    Context,
    Dataset,
    Question,
    Repository,
    Score,
    Turn,
    Utterance,
)
from core.text import text_hash


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-123")


def staff_with(*permissions: str, username: str = "staff-member"):
    """A staff account holding exactly these permissions ("app_label.codename"), no superuser."""
    from django.contrib.auth.models import Permission

    user = UserFactory(username=username, is_staff=True)
    for permission in permissions:
        app_label, codename = permission.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"dataset-{n}")
    # The deterministic rule: tests of decisions and units see exactly the scores they give; the
    # probabilistic rule's own tests set a tolerance.
    stopping_tolerance = 0.0


class ContextFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Context
        skip_postgeneration_save = True

    dataset = factory.SubFactory(DatasetFactory)
    source = "factory.jsonl"
    source_line = factory.Sequence(lambda n: n + 1)

    @factory.post_generation
    def turns(obj, create, extracted, **kwargs):
        texts = (
            extracted
            if extracted is not None
            else ["Did you book the tickets?", "Not yet, the site was down.", "Can you try again tonight?"]
        )
        for i, text in enumerate(texts):
            Turn.objects.create(context=obj, position=i, speaker="AB"[i % 2], text=text, text_hash=text_hash(text))


class QuestionFactory(factory.django.DjangoModelFactory):
    """A question whose ground truth is also a Candidate row (as imports create it)."""

    class Meta:
        model = Question
        skip_postgeneration_save = True

    dataset = factory.SubFactory(DatasetFactory)
    context = factory.SubFactory(ContextFactory, dataset=factory.SelfAttribute("..dataset"))
    ground_truth = factory.Sequence(lambda n: f"Sure, I will try again tonight ({n}).")

    @factory.post_generation
    def ground_truth_candidate(obj, create, extracted, **kwargs):
        Candidate.objects.create(
            question=obj,
            text=obj.ground_truth,
            text_hash=text_hash(obj.ground_truth),
            is_ground_truth=True,
            source=CandidateSource.IMPORTED,
        )


class CandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Candidate

    question = factory.SubFactory(QuestionFactory)
    text = factory.Sequence(lambda n: f"The train leaves at {n} o'clock.")
    text_hash = factory.LazyAttribute(lambda o: text_hash(o.text))
    source = CandidateSource.LEXICAL
    retrieval_score = 12.5
    rank = 1
    retriever_version = "bm25-test-v1"


class AnnotatorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Annotator

    provider = AnnotatorProvider.IMPORTED
    external_id = factory.Sequence(lambda n: f"annotator-{n}")


class ScoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Score

    candidate = factory.SubFactory(CandidateFactory)
    annotator = factory.SubFactory(AnnotatorFactory)
    value = 1


class RepositoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Repository
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"repo-{n}")


class UtteranceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Utterance

    repository = factory.SubFactory(RepositoryFactory)
    text = factory.Sequence(lambda n: f"Line number {n} of the film.")
    text_hash = factory.LazyAttribute(lambda o: text_hash(o.text))
    n_tokens = 6
    source = "factory.txt"
    source_line = factory.Sequence(lambda n: n + 1)


class SystemFactory(factory.django.DjangoModelFactory):
    """An external system: known by its responses only, no checkpoint needed."""

    class Meta:
        model = "evaluation.System"
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"system-{n}")
    kind = "external"


class GenerationFactory(factory.django.DjangoModelFactory):
    """Responses imported from a file (no dataset)."""

    class Meta:
        model = "evaluation.Generation"

    system = factory.SubFactory(SystemFactory)
    source_file = factory.Sequence(lambda n: f"responses-{n}.json")
    strategy = "imported"
    status = "succeeded"


class GeneratedResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "evaluation.GeneratedResponse"

    generation = factory.SubFactory(GenerationFactory)
    context_key = factory.Sequence(lambda n: f"dialogue-{n}")
    context = factory.LazyFunction(lambda: ["Did you book the tickets?", "Not yet, the site was down."])
    references = factory.LazyFunction(lambda: ["I will try again tonight."])
    text = factory.Sequence(lambda n: f"Generated reply number {n}.")


def unrelated_lines(repository, n: int, *, start: int = 0) -> None:
    """``n`` lines of the repository that answer nothing, each long enough to be an attention check."""
    for i in range(start, start + n):
        UtteranceFactory(repository=repository, text=f"The lighthouse keeper painted boat number {i} green.")


def attention_check_repository(dataset, *, utterances: int = 40, name: str | None = None) -> Repository:
    """A repository of ``utterances`` unrelated lines made the dataset's attention-check repository."""
    repository = RepositoryFactory(name=name or f"checks-for-{dataset.name}")
    unrelated_lines(repository, utterances)
    dataset.attention_check_repository = repository
    dataset.save(update_fields=["attention_check_repository"])
    return repository


class PairSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "pairs.PairSet"
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"pairs-{n}")


class PairFactory(factory.django.DjangoModelFactory):
    """An accepted contrastive pair (the whole responses as the edited spans)."""

    class Meta:
        model = "pairs.Pair"

    pair_set = factory.SubFactory(PairSetFactory)
    context = factory.LazyFunction(lambda: ["Did you book the tickets?", "Not yet, the site was down."])
    correct = factory.Sequence(lambda n: f"I will try again tonight, {n}.")
    incorrect = factory.Sequence(lambda n: f"I will eat again tonight, {n}.")
    type = "content"
    correct_start = 0
    correct_end = factory.LazyAttribute(lambda o: len(o.correct))
    incorrect_start = 0
    incorrect_end = factory.LazyAttribute(lambda o: len(o.incorrect))
    key = factory.LazyAttribute(lambda o: text_hash("\n".join([*o.context, o.correct, o.incorrect])))
    review = "accepted"
