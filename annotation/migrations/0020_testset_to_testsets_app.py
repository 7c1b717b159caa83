# The test-set models now belong to the testsets app (testsets 0001, which runs before this one);
# their tables and rows are untouched. Deleted from this app's state only, dependents first.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0019_utterance_repository_index_dropped"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="TestSetCandidate"),
                migrations.DeleteModel(name="TestSetQuestion"),
                migrations.DeleteModel(name="TestSet"),
            ],
            database_operations=[],
        ),
    ]
