# Job now belongs to the core app (core 0001), Repository to annotation (annotation 0010): the
# foreign keys of this app follow them, in Django's state only (tables and constraints are
# unchanged). They move before the old owners drop the models from their state (run_before).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0010_repository_utterance_from_retrieval"),
        ("core", "0001_initial"),
        ("evaluation", "0003_system_compile_model"),
    ]
    run_before = [
        ("annotation", "0011_job_to_core"),
        ("retrieval", "0003_repository_to_annotation_job_to_core"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="campaign",
                    name="job",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="core.job"),
                ),
                migrations.AlterField(
                    model_name="campaign",
                    name="repository",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="campaigns", to="annotation.repository"),
                ),
                migrations.AlterField(
                    model_name="evaluation",
                    name="job",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="core.job"),
                ),
                migrations.AlterField(
                    model_name="generation",
                    name="job",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="core.job"),
                ),
            ],
            database_operations=[],
        ),
    ]
