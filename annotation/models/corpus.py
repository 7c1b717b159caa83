"""Datasets of questions: a dialogue context, its ground-truth response and candidates."""

from django.db import models
from django.db.models import Q


class DatasetTask(models.TextChoices):
    # Sato et al.: score the ground truth and retrieved candidates 0-5, to build a test set.
    SELECT = "select", "score candidates 0-5 (build a test set)"
    # Human ranking of systems: rate each system's generated response 1-5 (Zhao et al. 2020).
    RATE = "rate", "rate generated responses 1-5 (rank systems)"


class Dataset(models.Model):
    name = models.SlugField(max_length=100, unique=True, allow_unicode=False)
    description = models.TextField(blank=True)
    # Sato et al. collect five judgements per response; the filter rules and the
    # adaptive-stopping logic both need to know how many were planned.
    annotators_per_item = models.PositiveSmallIntegerField(default=5)
    context_turns = models.PositiveSmallIntegerField(default=3)
    # Annotation settings (the annotator page, the assignment engine, quality control).
    adaptive_stopping = models.BooleanField(
        default=True, help_text="Stop scoring a response once its filter decision can no longer change"
    )
    # Probabilistic stopping (annotation.stopping): a response also stops when the chance that all K
    # scores decide otherwise is below this; 0 keeps the deterministic rule only. 0.02 saved 44 % of
    # Sato et al.'s scores at 0.5 % expected changes (bench/stopping.py, docs/annotation.md).
    stopping_tolerance = models.FloatField(
        default=0.02,
        help_text="Stop a response when the chance that all K scores change its decision is below this (0: only "
        "when it can no longer change)",
    )
    spot_check_rate = models.FloatField(
        default=0.05, help_text="Share of responses that get all K scores even when the model would stop them"
    )
    lease_minutes = models.PositiveSmallIntegerField(default=30)
    attention_check_rate = models.FloatField(
        default=0.1, help_text="Share of units that carry an unrelated response as an attention check"
    )
    # Attention checks are utterances of this repository that are no text of any dataset: drawn
    # from inside the dataset, a check would show an annotator another unit's ground truth.
    attention_check_repository = models.ForeignKey(
        "annotation.Repository",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Where attention checks come from (set by building candidate pools, when empty). "
        "Without one, units carry no attention check.",
    )
    error_labels = models.JSONField(default=list, blank=True, help_text="Optional reasons for scores <= 2")
    task = models.CharField(max_length=16, choices=DatasetTask.choices, default=DatasetTask.SELECT)
    # The style normaliser its imports applied (core.normalisers), the same for all of them: texts of
    # two styles in one dataset are what the shortcut audit catches.
    text_normaliser = models.CharField(max_length=40, default="none")
    text_normaliser_version = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(task__in=[t.value for t in DatasetTask]), name="dataset_task_valid"),
            models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="dataset_annotators_ge_1"),
            models.CheckConstraint(condition=Q(context_turns__gte=1), name="dataset_context_turns_ge_1"),
            models.CheckConstraint(
                condition=Q(attention_check_rate__gte=0) & Q(attention_check_rate__lte=1), name="dataset_check_rate_0_1"
            ),
            models.CheckConstraint(
                condition=Q(stopping_tolerance__gte=0) & Q(stopping_tolerance__lt=1),
                name="dataset_stopping_tolerance_0_1",
            ),
            models.CheckConstraint(
                condition=Q(spot_check_rate__gte=0) & Q(spot_check_rate__lte=1), name="dataset_spot_check_rate_0_1"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_rating(self) -> bool:
        return self.task == DatasetTask.RATE

    @property
    def stops_adaptively(self) -> bool:
        """Whether adaptive stopping applies. It closes a response once its Sato et al. filter
        decision is final; those rules mean nothing for rated generated responses, each of which
        needs all its ratings, so a rating dataset never stops early whatever the flag says."""
        return self.adaptive_stopping and not self.is_rating

    @property
    def min_score(self) -> int:
        """Lowest score on this dataset's scale: 0 ("ungrammatical") when selecting, 1 when rating."""
        return 1 if self.is_rating else 0


class Context(models.Model):
    """The dialogue turns shown before the response; several questions may share one."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="contexts")
    source = models.CharField(max_length=255, help_text="File (or system) the context was imported from.")
    source_line = models.PositiveIntegerField(help_text="1-based line number in the source file.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # Importing the same file twice into one dataset is refused, not duplicated.
            models.UniqueConstraint(fields=["dataset", "source", "source_line"], name="context_unique_source_line"),
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.source_line}"


class Turn(models.Model):
    # turn_unique_position (context, position) serves the context's lookups.
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="turns", db_index=False)
    position = models.PositiveSmallIntegerField(help_text="0-based order within the context.")
    speaker = models.CharField(max_length=100, blank=True)
    text = models.TextField()
    # The text as the file had it, when a normaliser changed it ("" when ``text`` is that text).
    original_text = models.TextField(blank=True, default="", db_default="")
    text_hash = models.CharField(max_length=32)

    class Meta:
        ordering = ["context_id", "position"]
        # A plain index: db_index on a CharField adds a second, pattern-matching one on PostgreSQL,
        # which no query of a hash uses.
        indexes = [models.Index(fields=["text_hash"], name="turn_text_hash")]
        constraints = [
            models.UniqueConstraint(fields=["context", "position"], name="turn_unique_position"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Question(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="questions")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="questions")
    ground_truth = models.TextField()
    # Sato et al. §3.2: with enough surviving false candidates, an acceptable candidate of
    # another question becomes the ground truth of an extra question on the same context.
    # Indexed by question_unique_derivation (derived_from, derived_ground_truth), only where set.
    derived_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="derived_questions", db_index=False
    )
    derived_ground_truth = models.ForeignKey(
        "Candidate",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,  # question_derived_ground_truth: partial, as most questions are not derived
        help_text="For a derived question: the candidate of the original question used as ground truth.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["derived_ground_truth"],
                condition=Q(derived_ground_truth__isnull=False),
                name="question_derived_ground_truth",
            )
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(derived_from__isnull=True, derived_ground_truth__isnull=True)
                | Q(derived_from__isnull=False, derived_ground_truth__isnull=False),
                name="question_derived_fields_together",
            ),
            models.UniqueConstraint(
                fields=["derived_from", "derived_ground_truth"],
                condition=Q(derived_from__isnull=False),
                name="question_unique_derivation",
            ),
        ]

    @property
    def is_derived(self) -> bool:
        return self.derived_from_id is not None

    def __str__(self) -> str:
        return f"Q{self.pk}: {self.ground_truth[:60]}"


class CandidateSource(models.TextChoices):
    """Where a candidate came from. Each value is one method: exports publish it (releases built
    before "generated" was split keep saying "generated"; see docs/formats.md)."""

    LEXICAL = "lexical", "lexical retrieval"
    DENSE = "dense", "embedding retrieval"
    MLM_NEGATIVE = "mlm_negative", "masked-LM negative (Park et al.)"
    SYSTEM_RESPONSE = "system_response", "a system's generated response"
    IMPORTED = "imported", "imported"
    CONTRASTIVE = "contrastive", "contrastive pair (a minimal edit of the ground truth)"


class Candidate(models.Model):
    """A response to be scored for a question: the ground truth itself or a false candidate."""

    # candidate_unique_text_per_question (question, text_hash) serves the question's lookups.
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="candidates", db_index=False)
    utterance = models.ForeignKey(
        "annotation.Utterance",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="candidates",
        db_index=False,  # candidate_utterance: partial, as imported candidates have none
    )
    text = models.TextField()
    # The text as the file had it, when a normaliser changed it ("" when ``text`` is that text).
    original_text = models.TextField(blank=True, default="", db_default="")
    text_hash = models.CharField(max_length=32)
    is_ground_truth = models.BooleanField(default=False)
    source = models.CharField(max_length=16, choices=CandidateSource.choices)
    retrieval_score = models.FloatField(null=True, blank=True)
    rank = models.PositiveIntegerField(null=True, blank=True, help_text="1-based rank in its retriever's list.")
    retriever_version = models.CharField(max_length=200, blank=True, help_text="Index or model version.")
    # Every retriever that found it: [{"retriever", "score", "rank", "version"}, ...]; the
    # fields above describe the one that put it into the pool.
    retrieval = models.JSONField(default=list, blank=True)
    # How a generated candidate was made: method, model and version, settings, seed and the edit
    # (for a masked-LM negative: the selected words with their scores and their replacements).
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question_id", "id"]
        # "Is this text a candidate anywhere?": an attention check must not be one.
        indexes = [
            models.Index(fields=["text_hash"], name="candidate_text_hash"),
            models.Index(fields=["utterance"], condition=Q(utterance__isnull=False), name="candidate_utterance"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["question", "text_hash"], name="candidate_unique_text_per_question"),
            models.UniqueConstraint(
                fields=["question"], condition=Q(is_ground_truth=True), name="candidate_one_ground_truth"
            ),
            models.CheckConstraint(
                condition=Q(source__in=[c.value for c in CandidateSource]), name="candidate_source_valid"
            ),
            models.CheckConstraint(condition=Q(rank__isnull=True) | Q(rank__gte=1), name="candidate_rank_ge_1"),
        ]

    def __str__(self) -> str:
        return self.text[:80]
