"""Utterance repositories: the texts false candidates are drawn from (e.g. movie subtitles).

They sit here, beside datasets and candidates, because a candidate keeps the utterance it came
from and a frozen test set's export names it; retrieval (indexes, pools) and evaluation (RANDOM
draws) read them from above. The tables keep the names they were created with
(``retrieval_repository``, ``retrieval_utterance``): the models moved without touching the data.
"""

from django.db import models
from django.db.models import Q


class Repository(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # Bumped by every import that adds utterances: a search index built at another content
    # version is stale.
    content_version = models.PositiveIntegerField(default=0)
    # The style normaliser its imports applied (core.normalisers), the same for all of them: texts of
    # two styles in one repository are what the shortcut audit catches.
    text_normaliser = models.CharField(max_length=40, default="none")
    text_normaliser_version = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "retrieval_repository"
        ordering = ["name"]
        verbose_name_plural = "repositories"

    def __str__(self) -> str:
        return self.name


class Utterance(models.Model):
    # No index of its own: the two (repository, …) indexes below lead with it (one index fewer to
    # maintain for every imported row).
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="utterances", db_index=False)
    text = models.TextField()
    # The text as the file had it, when a normaliser changed it ("" when ``text`` is that text).
    original_text = models.TextField(blank=True, default="", db_default="")
    # On PostgreSQL in the "C" collation (annotation 0019): an AlterField of it must keep that.
    text_hash = models.CharField(max_length=32, help_text="Hash of the normalised text (core.text).")
    n_tokens = models.PositiveSmallIntegerField()
    source = models.CharField(max_length=255, blank=True, help_text="File the utterance came from.")
    source_line = models.PositiveIntegerField(help_text="1-based line of its first occurrence.")
    source_ref = models.CharField(max_length=64, blank=True, help_text="Id in the source (e.g. Cornell line id).")

    class Meta:
        db_table = "retrieval_utterance"
        ordering = ["id"]
        # Id bounds of a repository and a walk from a random id within it (attention checks):
        # index probes, where the repository_id index alone would read every row of it.
        indexes = [models.Index(fields=["repository", "id"], name="utterance_repository_id")]
        constraints = [
            models.UniqueConstraint(fields=["repository", "text_hash"], name="utterance_unique_text_per_repository"),
            models.CheckConstraint(condition=Q(source_line__gte=1), name="utterance_source_line_ge_1"),
        ]

    def __str__(self) -> str:
        return self.text[:80]
