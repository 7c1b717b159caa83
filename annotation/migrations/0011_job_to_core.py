# The Job model now belongs to the core app (core 0001); its table and rows are untouched. The
# apps whose foreign keys point at it (retrieval 0003, evaluation 0004) move those keys first:
# they declare run_before this migration, so no dependency points from here up to them.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0010_repository_utterance_from_retrieval"),
        ("core", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="Job")], database_operations=[]),
    ]
