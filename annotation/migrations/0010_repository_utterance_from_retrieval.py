# Repository and Utterance move here from the retrieval app, beside the candidates that cite
# them. Their tables (retrieval_repository, retrieval_utterance) and rows stay as they are: this
# migration only tells Django's state that annotation owns them (retrieval 0003 removes them from
# retrieval's state), and renames their content types so that permissions stay attached.

import django.db.models.deletion
from django.db import migrations, models

from core.content_types import content_type_move


class Migration(migrations.Migration):

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("annotation", "0009_dataset_task_job_kinds"),
        # the tables were created, and last changed, by the retrieval app's migrations
        ("retrieval", "0002_repository_content_version_questionretrieval_and_more"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Repository",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.SlugField(max_length=100, unique=True)),
                        ("description", models.TextField(blank=True)),
                        ("content_version", models.PositiveIntegerField(default=0)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "verbose_name_plural": "repositories",
                        "db_table": "retrieval_repository",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="Utterance",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("text", models.TextField()),
                        ("text_hash", models.CharField(help_text="Hash of the normalised text (core.text).", max_length=32)),
                        ("n_tokens", models.PositiveSmallIntegerField()),
                        ("source", models.CharField(blank=True, help_text="File the utterance came from.", max_length=255)),
                        ("source_line", models.PositiveIntegerField(help_text="1-based line of its first occurrence.")),
                        ("source_ref", models.CharField(blank=True, help_text="Id in the source (e.g. Cornell line id).", max_length=64)),
                        ("repository", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="utterances", to="annotation.repository")),
                    ],
                    options={
                        "db_table": "retrieval_utterance",
                        "ordering": ["id"],
                        "constraints": [
                            models.UniqueConstraint(fields=("repository", "text_hash"), name="utterance_unique_text_per_repository"),
                            models.CheckConstraint(condition=models.Q(("source_line__gte", 1)), name="utterance_source_line_ge_1"),
                        ],
                    },
                ),
                migrations.AlterField(
                    model_name="candidate",
                    name="utterance",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="candidates", to="annotation.utterance"),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(*content_type_move(old_app="retrieval", new_app="annotation", model="repository")),
        migrations.RunPython(*content_type_move(old_app="retrieval", new_app="annotation", model="utterance")),
    ]
