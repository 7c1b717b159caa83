# Repository and Utterance now belong to the annotation app (annotation 0010), Job to core
# (core 0001): the foreign keys of this app follow them, in Django's state only (the tables and
# their constraints are unchanged). Evaluation 0004 moves its key to Repository before this one
# removes the model from this app's state.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0010_repository_utterance_from_retrieval"),
        ("core", "0001_initial"),
        ("retrieval", "0002_repository_content_version_questionretrieval_and_more"),
    ]
    run_before = [("annotation", "0011_job_to_core")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="retrievalindex",
                    name="repository",
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="indexes", to="annotation.repository"),
                ),
                migrations.AlterField(
                    model_name="questionretrieval",
                    name="repository",
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="question_retrievals", to="annotation.repository"),
                ),
                migrations.AlterField(
                    model_name="questionretrieval",
                    name="job",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="core.job"),
                ),
                migrations.DeleteModel(name="Utterance"),
                migrations.DeleteModel(name="Repository"),
            ],
            database_operations=[],
        ),
    ]
