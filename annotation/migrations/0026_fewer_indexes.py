"""Single-column indexes that another index already serves, or that index mostly NULLs, dropped or
made partial: every index costs each row an import writes (2 M scores for 100,000 questions).

The indexes are dropped by name rather than by AlterField's database operation, which on
PostgreSQL also drops every other single-column index on the field, the partial unique index of
candidate_one_ground_truth included. The names are Django's own for these fields, the same on
every database; "_like" is PostgreSQL's pattern-matching twin of a CharField's index.
"""

import django.db.models.deletion
from django.db import migrations, models

DROPPED = [
    ("annotation_candidate", "question_id", "annotation_candidate_question_id_5cbf6ffb"),
    ("annotation_candidate", "utterance_id", "annotation_candidate_utterance_id_ef96ce95"),
    ("annotation_question", "derived_from_id", "annotation_question_derived_from_id_cc8337c6"),
    ("annotation_question", "derived_ground_truth_id", "annotation_question_derived_ground_truth_id_48564819"),
    ("annotation_score", "annotator_id", "annotation_score_annotator_id_b50b264f"),
    ("annotation_score", "assignment_id", "annotation_score_assignment_id_880b3edb"),
    ("annotation_score", "candidate_id", "annotation_score_candidate_id_7472b2ce"),
    ("annotation_turn", "context_id", "annotation_turn_context_id_4028cf20"),
    ("annotation_turn", "text_hash", "annotation_turn_text_hash_d3a0a515"),
]


def drop_indexes(apps, schema_editor):
    for _table, _column, name in DROPPED:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')
    schema_editor.execute('DROP INDEX IF EXISTS "annotation_turn_text_hash_d3a0a515_like"')


def create_indexes(apps, schema_editor):
    for table, column, name in DROPPED:
        schema_editor.execute(f'CREATE INDEX "{name}" ON "{table}" ("{column}")')


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0025_stopping_tolerance"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
            state_operations=[
                migrations.AlterField(
                    model_name="candidate",
                    name="question",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="candidates",
                        to="annotation.question",
                    ),
                ),
                migrations.AlterField(
                    model_name="candidate",
                    name="utterance",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="candidates",
                        to="annotation.utterance",
                    ),
                ),
                migrations.AlterField(
                    model_name="question",
                    name="derived_from",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="derived_questions",
                        to="annotation.question",
                    ),
                ),
                migrations.AlterField(
                    model_name="question",
                    name="derived_ground_truth",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        help_text=(
                            "For a derived question: the candidate of the original question used as ground truth."
                        ),
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotation.candidate",
                    ),
                ),
                migrations.AlterField(
                    model_name="score",
                    name="annotator",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="scores",
                        to="annotation.annotator",
                    ),
                ),
                migrations.AlterField(
                    model_name="score",
                    name="assignment",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="scores",
                        to="annotation.assignment",
                    ),
                ),
                migrations.AlterField(
                    model_name="score",
                    name="candidate",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="scores",
                        to="annotation.candidate",
                    ),
                ),
                migrations.AlterField(
                    model_name="turn",
                    name="context",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="turns",
                        to="annotation.context",
                    ),
                ),
                migrations.AlterField(
                    model_name="turn",
                    name="text_hash",
                    field=models.CharField(max_length=32),
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="candidate",
            index=models.Index(
                condition=models.Q(("utterance__isnull", False)), fields=["utterance"], name="candidate_utterance"
            ),
        ),
        migrations.AddIndex(
            model_name="question",
            index=models.Index(
                condition=models.Q(("derived_ground_truth__isnull", False)),
                fields=["derived_ground_truth"],
                name="question_derived_ground_truth",
            ),
        ),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                condition=models.Q(("assignment__isnull", False)), fields=["assignment"], name="score_assignment"
            ),
        ),
        migrations.AddIndex(
            model_name="turn",
            index=models.Index(fields=["text_hash"], name="turn_text_hash"),
        ),
    ]
