# The Job model moves here from the annotation app. Its table (annotation_job) and rows stay as
# they are: this migration only tells Django's state that core owns it (annotation 0011 removes it
# from annotation's state), and renames its content type so that permissions stay attached.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.content_types import content_type_move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        # the table was created, and last changed, by the annotation app's migrations
        ("annotation", "0009_dataset_task_job_kinds"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Job",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(max_length=40)),
                        ("status", models.CharField(choices=[("pending", "pending"), ("running", "running"), ("succeeded", "succeeded"), ("failed", "failed"), ("cancelled", "cancelled")], default="pending", max_length=16)),
                        ("params", models.JSONField(blank=True, default=dict)),
                        ("progress", models.PositiveSmallIntegerField(default=0)),
                        ("total_count", models.PositiveBigIntegerField(default=0)),
                        ("done_count", models.PositiveBigIntegerField(default=0)),
                        ("failed_count", models.PositiveBigIntegerField(default=0)),
                        ("result", models.JSONField(blank=True, default=dict)),
                        ("error", models.TextField(blank=True)),
                        ("attempts", models.PositiveSmallIntegerField(default=0)),
                        ("cancel_requested", models.BooleanField(default=False)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "annotation_job",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [models.Index(fields=["status", "kind"], name="job_status_kind")],
                        "constraints": [
                            models.CheckConstraint(condition=models.Q(("progress__lte", 100)), name="job_progress_0_100"),
                            models.CheckConstraint(condition=models.Q(("status__in", ["pending", "running", "succeeded", "failed", "cancelled"])), name="job_status_valid"),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(*content_type_move(old_app="annotation", new_app="core", model="job")),
    ]
