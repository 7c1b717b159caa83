"""What retrieval builds over an utterance repository: search indexes and candidate pools.

The repositories themselves (annotation.Repository, annotation.Utterance) live in the annotation
app, beside the candidates that cite them (docs/architecture.md).
"""

from django.db import models


class IndexKind(models.TextChoices):
    LEXICAL = "lexical", "lexical (BM25)"
    DENSE = "dense", "embeddings"


class IndexStatus(models.TextChoices):
    BUILDING = "building", "building"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class RetrievalIndex(models.Model):
    """One built search index of a repository: a tantivy or Elasticsearch index, or an
    embedding store with its FAISS index. Versions are never rebuilt in place."""

    repository = models.ForeignKey("annotation.Repository", on_delete=models.CASCADE, related_name="indexes")
    kind = models.CharField(max_length=16, choices=IndexKind.choices)
    version = models.PositiveIntegerField()
    backend = models.CharField(max_length=32, help_text="tantivy, elasticsearch, or the embedding model and backend")
    name = models.CharField(max_length=255, help_text="Index name or folder, recorded on every candidate")
    status = models.CharField(max_length=16, choices=IndexStatus.choices, default=IndexStatus.BUILDING)
    content_version = models.PositiveIntegerField(help_text="Repository content version it was built from")
    utterance_count = models.PositiveBigIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # The job building it: a build whose job was taken over or has ended is known to be dead.
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    built_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["repository_id", "kind", "-version"]
        verbose_name_plural = "retrieval indexes"
        constraints = [
            models.UniqueConstraint(fields=["repository", "kind", "version"], name="retrievalindex_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.repository.name} {self.kind} v{self.version} ({self.status})"


class PoolStatus(models.TextChoices):
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ExclusionReason(models.TextChoices):
    """Why a retrieved hit is no candidate of the pool (recorded per hit on QuestionRetrieval)."""

    GROUND_TRUTH = "ground_truth", "same text as the ground truth"
    CONTEXT = "context", "copy of a context turn"
    EXCLUDED_DATASET = "excluded_dataset", "text of an excluded dataset"
    TOO_SHORT = "too_short", "too short"
    PARAPHRASE = "paraphrase", "paraphrase of the ground truth"
    DUPLICATE = "duplicate", "same text as a higher-ranked hit"
    NEAR_DUPLICATE = "near_duplicate", "near-duplicate of a candidate already in the pool"
    MISSING = "missing", "no longer in the repository"
    SURFACE_MISMATCH = "surface_mismatch", "passed over: unlike the ground truth in length or style"


class QuestionRetrieval(models.Model):
    """A question's candidate pool from one repository: what makes pool building resumable
    (finished questions are skipped) and where a failing question's error is kept."""

    question = models.ForeignKey("annotation.Question", on_delete=models.CASCADE, related_name="retrievals")
    repository = models.ForeignKey(
        "annotation.Repository", on_delete=models.CASCADE, related_name="question_retrievals"
    )
    status = models.CharField(max_length=16, choices=PoolStatus.choices)
    candidates_added = models.PositiveSmallIntegerField(default=0)
    pool_size = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    # The hits each retriever returned that are no candidate, down to the deepest rank the pool
    # used (every hit of a retriever that ran dry): what explains the gaps in the candidates'
    # ranks. [{"retriever", "rank", "score", "utterance_id", "text", "reason", ...}] where reason
    # is an ExclusionReason (a paraphrase adds its "similarity", a short hit its "tokens").
    exclusions = models.JSONField(default=list, blank=True)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["question_id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "repository"], name="questionretrieval_unique"),
        ]
