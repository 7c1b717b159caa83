# TestSet, TestSetQuestion and TestSetCandidate now belong to the testsets app (testsets 0001): the
# foreign keys of this app follow them, in Django's state only (the tables and their constraints
# are unchanged). They move before annotation 0020 removes the models from annotation's state.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("evaluation", "0009_system_toy_model"),
        ("testsets", "0001_initial"),
    ]
    run_before = [("annotation", "0020_testset_to_testsets_app")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="evaluation",
                    name="testset",
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="evaluations", to="testsets.testset"),
                ),
                migrations.AlterField(
                    model_name="questionresult",
                    name="item",
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="testsets.testsetquestion"),
                ),
                migrations.AlterField(
                    model_name="candidateresult",
                    name="candidate",
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="testsets.testsetcandidate"),
                ),
                migrations.AlterField(
                    model_name="campaign",
                    name="testset",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="campaigns", to="testsets.testset"),
                ),
            ],
            database_operations=[],
        ),
    ]
