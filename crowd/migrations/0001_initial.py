# The crowd models move here from the annotation app. Their tables (annotation_crowdbatch,
# annotation_crowdtask, annotation_crowdassignment, annotation_crowdbonus) and rows stay as they
# are: this migration only tells Django's state that crowd owns them (annotation 0012 removes them
# from annotation's state, and runs after this one), and renames their content types so that
# permissions and the admin's history stay attached.

import django.db.models.deletion
from django.db import migrations, models

import crowd.models
from core.content_types import content_type_move

PROVIDERS = [("internal", "internal accounts"), ("mturk", "Amazon Mechanical Turk"), ("prolific", "Prolific"), ("link", "signed link (any platform)")]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        # the tables were created (0006) and last changed (0007) by the annotation app's migrations
        ("annotation", "0011_job_to_core"),
    ]
    # annotation 0012 deletes the models from annotation's state once this has created them here;
    # run_before, so that no dependency points from the annotation app up to this one
    run_before = [("annotation", "0012_crowd_to_crowd_app")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="CrowdBatch",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=100)),
                        ("provider", models.CharField(choices=PROVIDERS, max_length=16)),
                        ("status", models.CharField(choices=[("draft", "draft"), ("published", "published"), ("expired", "expired (no new workers)"), ("closed", "closed")], default="draft", max_length=16)),
                        ("settings", models.JSONField(blank=True, default=dict, help_text="Provider settings (see the README)")),
                        ("max_units", models.PositiveIntegerField(blank=True, help_text="Publish at most this many units", null=True)),
                        ("production", models.BooleanField(default=False, help_text="Real money: the production endpoint instead of the sandbox (MTurk)")),
                        ("external_id", models.CharField(blank=True, help_text="HIT type id / study id on the provider", max_length=255)),
                        ("token", models.CharField(default=crowd.models._new_token, editable=False, max_length=32, unique=True)),
                        ("completion_code", models.CharField(blank=True, help_text="Shown to link/Prolific workers at the end", max_length=32)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("published_at", models.DateTimeField(blank=True, null=True)),
                        ("synced_at", models.DateTimeField(blank=True, null=True)),
                        ("dataset", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="crowd_batches", to="annotation.dataset")),
                    ],
                    options={
                        "db_table": "annotation_crowdbatch",
                        "ordering": ["-created_at"],
                        "verbose_name_plural": "crowd batches",
                        "constraints": [
                            models.UniqueConstraint(fields=("dataset", "name"), name="crowdbatch_unique_name"),
                            models.CheckConstraint(condition=models.Q(("provider__in", ["internal", "mturk", "prolific", "link"])), name="crowdbatch_provider_valid"),
                            models.CheckConstraint(condition=models.Q(("status__in", ["draft", "published", "expired", "closed"])), name="crowdbatch_status_valid"),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="CrowdTask",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("provider", models.CharField(choices=PROVIDERS, max_length=16)),
                        ("external_id", models.CharField(blank=True, help_text="HIT id", max_length=255)),
                        ("token", models.CharField(default=crowd.models._new_token, editable=False, max_length=32, unique=True)),
                        ("status", models.CharField(choices=[("pending", "not yet published"), ("published", "published"), ("expired", "expired"), ("deleted", "deleted on the provider")], default="pending", max_length=16)),
                        ("max_assignments", models.PositiveSmallIntegerField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("published_at", models.DateTimeField(blank=True, null=True)),
                        ("expires_at", models.DateTimeField(blank=True, null=True)),
                        ("batch", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="tasks", to="crowd.crowdbatch")),
                        ("question", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="crowd_tasks", to="annotation.question")),
                    ],
                    options={
                        "db_table": "annotation_crowdtask",
                        "ordering": ["id"],
                        "indexes": [models.Index(fields=["batch", "status"], name="crowdtask_batch_status")],
                        "constraints": [
                            models.UniqueConstraint(fields=("batch", "question"), name="crowdtask_once_per_batch"),
                            models.UniqueConstraint(condition=models.Q(("external_id", ""), _negated=True), fields=("provider", "external_id"), name="crowdtask_unique_external_id"),
                            models.CheckConstraint(condition=models.Q(("max_assignments__gte", 1)), name="crowdtask_max_assignments_ge_1"),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="CrowdAssignment",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("provider", models.CharField(choices=PROVIDERS, max_length=16)),
                        ("external_id", models.CharField(max_length=255)),
                        ("status", models.CharField(choices=[("accepted", "accepted (working)"), ("submitted", "submitted"), ("approved", "approved"), ("rejected", "rejected"), ("returned", "returned / abandoned")], default="accepted", max_length=16)),
                        ("external_status", models.CharField(blank=True, help_text="Status as the provider last said", max_length=32)),
                        ("submit_to", models.URLField(blank=True, help_text="MTurk turkSubmitTo (validated against the allow-list)")),
                        ("answer", models.JSONField(blank=True, default=dict, help_text="What the provider returned with the submission")),
                        ("imported_at", models.DateTimeField(blank=True, help_text="When sync first saw it submitted", null=True)),
                        ("submitted_at", models.DateTimeField(blank=True, null=True)),
                        ("auto_approval_at", models.DateTimeField(blank=True, null=True)),
                        ("reviewed_at", models.DateTimeField(blank=True, null=True)),
                        ("feedback", models.CharField(blank=True, max_length=1024)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("assignment", models.OneToOneField(blank=True, help_text="Our unit (and its scores)", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="crowd", to="annotation.assignment")),
                        ("batch", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="assignments", to="crowd.crowdbatch")),
                        ("task", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="assignments", to="crowd.crowdtask")),
                        ("worker", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="crowd_assignments", to="annotation.annotator")),
                    ],
                    options={
                        "db_table": "annotation_crowdassignment",
                        "ordering": ["id"],
                        "indexes": [models.Index(fields=["batch", "status"], name="crowdassignment_batch_status")],
                        "constraints": [
                            models.UniqueConstraint(fields=("provider", "external_id"), name="crowdassignment_unique_external_id"),
                            models.CheckConstraint(condition=models.Q(("status__in", ["accepted", "submitted", "approved", "rejected", "returned"])), name="crowdassignment_status_valid"),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="CrowdBonus",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("purpose", models.SlugField(default="bonus", help_text="One bonus per assignment and purpose", max_length=40)),
                        ("amount", models.DecimalField(decimal_places=2, max_digits=8)),
                        ("reason", models.CharField(max_length=1024)),
                        ("token", models.CharField(max_length=64, unique=True)),
                        ("external_ref", models.CharField(blank=True, max_length=64)),
                        ("status", models.CharField(choices=[("pending", "pending"), ("paid", "paid")], default="pending", max_length=16)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("paid_at", models.DateTimeField(blank=True, null=True)),
                        ("crowd_assignment", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="bonuses", to="crowd.crowdassignment")),
                    ],
                    options={
                        "db_table": "annotation_crowdbonus",
                        "ordering": ["id"],
                        "verbose_name_plural": "crowd bonuses",
                        "constraints": [
                            models.UniqueConstraint(fields=("crowd_assignment", "purpose"), name="crowdbonus_once_per_purpose"),
                            models.CheckConstraint(condition=models.Q(("amount__gt", 0)), name="crowdbonus_amount_positive"),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        *[
            migrations.RunPython(*content_type_move(old_app="annotation", new_app="crowd", model=model))
            for model in ("crowdbatch", "crowdtask", "crowdassignment", "crowdbonus")
        ],
    ]
