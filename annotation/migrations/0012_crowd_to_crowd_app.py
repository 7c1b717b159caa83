# The crowd models now belong to the crowd app (crowd 0001, which runs before this one); their
# tables and rows are untouched. Deleted from this app's state only, dependents first.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0011_job_to_core"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="CrowdBonus"),
                migrations.DeleteModel(name="CrowdAssignment"),
                migrations.DeleteModel(name="CrowdTask"),
                migrations.DeleteModel(name="CrowdBatch"),
            ],
            database_operations=[],
        ),
    ]
