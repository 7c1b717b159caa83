"""Utterance repositories: the pool false candidates are retrieved from (e.g. subtitles)."""

from django.db import models
from django.db.models import Q


class Repository(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # Bumped by every import that adds utterances: a search index built at another content
    # version is stale.
    content_version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "repositories"

    def __str__(self) -> str:
        return self.name


class Utterance(models.Model):
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="utterances")
    text = models.TextField()
    text_hash = models.CharField(max_length=32, help_text="Hash of the normalised text (annotation.text).")
    n_tokens = models.PositiveSmallIntegerField()
    source = models.CharField(max_length=255, blank=True, help_text="File the utterance came from.")
    source_line = models.PositiveIntegerField(help_text="1-based line of its first occurrence.")
    source_ref = models.CharField(max_length=64, blank=True, help_text="Id in the source (e.g. Cornell line id).")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["repository", "text_hash"], name="utterance_unique_text_per_repository"),
            models.CheckConstraint(condition=Q(source_line__gte=1), name="utterance_source_line_ge_1"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


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

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="indexes")
    kind = models.CharField(max_length=16, choices=IndexKind.choices)
    version = models.PositiveIntegerField()
    backend = models.CharField(max_length=32, help_text="tantivy, elasticsearch, or the embedding model and backend")
    name = models.CharField(max_length=255, help_text="Index name or folder, recorded on every candidate")
    status = models.CharField(max_length=16, choices=IndexStatus.choices, default=IndexStatus.BUILDING)
    content_version = models.PositiveIntegerField(help_text="Repository content version it was built from")
    utterance_count = models.PositiveBigIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
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


class QuestionRetrieval(models.Model):
    """A question's candidate pool from one repository: what makes pool building resumable
    (finished questions are skipped) and where a failing question's error is kept."""

    question = models.ForeignKey("annotation.Question", on_delete=models.CASCADE, related_name="retrievals")
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="question_retrievals")
    status = models.CharField(max_length=16, choices=PoolStatus.choices)
    candidates_added = models.PositiveSmallIntegerField(default=0)
    pool_size = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    job = models.ForeignKey("annotation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["question_id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "repository"], name="questionretrieval_unique"),
        ]
