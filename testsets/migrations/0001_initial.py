# The test-set models move here from the annotation app. Their tables (annotation_testset,
# annotation_testsetquestion, annotation_testsetcandidate) and rows stay as they are: this migration
# only tells Django's state that testsets owns them (annotation 0020 removes them from annotation's
# state, and runs after this one), and renames their content types so that permissions and the
# admin's history stay attached.

import django.db.models.deletion
from django.db import migrations, models

from core.content_types import content_type_move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        # the tables were created (0001) and last changed (0017) by the annotation app's migrations
        ("annotation", "0019_utterance_repository_index_dropped"),
    ]
    # annotation 0020 deletes the models from annotation's state once this has created them here;
    # run_before, so that no dependency points from the annotation app up to this one
    run_before = [("annotation", "0020_testset_to_testsets_app")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="TestSet",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.SlugField(max_length=100, unique=True)),
                        ("seed", models.BigIntegerField()),
                        ("false_per_question", models.PositiveSmallIntegerField(default=3)),
                        ("license", models.CharField(default="unknown", help_text="SPDX identifier (e.g. cc-by-4.0) or 'other'; 'unknown' until the texts' owners say", max_length=100)),
                        ("manifest", models.JSONField(default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("dataset", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="testsets", to="annotation.dataset")),
                        ("rules", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="testsets", to="annotation.filterrules")),
                    ],
                    options={
                        "db_table": "annotation_testset",
                        "ordering": ["-created_at"],
                        "constraints": [
                            models.CheckConstraint(condition=models.Q(("false_per_question__gte", 1)), name="testset_false_ge_1"),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="TestSetQuestion",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("position", models.PositiveIntegerField()),
                        ("question", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="annotation.question")),
                        ("testset", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="items", to="testsets.testset")),
                    ],
                    options={
                        "db_table": "annotation_testsetquestion",
                        "ordering": ["testset_id", "position"],
                        "constraints": [
                            models.UniqueConstraint(fields=("testset", "position"), name="testsetquestion_unique_position"),
                            models.UniqueConstraint(fields=("testset", "question"), name="testsetquestion_unique_question"),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="TestSetCandidate",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("position", models.PositiveSmallIntegerField(help_text="0-based, shuffled with the release seed.")),
                        ("is_ground_truth", models.BooleanField(default=False)),
                        ("scores", models.JSONField(default=list)),
                        ("candidate", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="annotation.candidate")),
                        ("item", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="candidates", to="testsets.testsetquestion")),
                    ],
                    options={
                        "db_table": "annotation_testsetcandidate",
                        "ordering": ["item_id", "position"],
                        "constraints": [
                            models.UniqueConstraint(fields=("item", "position"), name="testsetcandidate_unique_position"),
                            models.UniqueConstraint(fields=("item", "candidate"), name="testsetcandidate_unique_candidate"),
                            models.UniqueConstraint(condition=models.Q(("is_ground_truth", True)), fields=("item",), name="testsetcandidate_one_ground_truth"),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        *[
            migrations.RunPython(*content_type_move(old_app="annotation", new_app="testsets", model=model))
            for model in ("testset", "testsetquestion", "testsetcandidate")
        ],
    ]
