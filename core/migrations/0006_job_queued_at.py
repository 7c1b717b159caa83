# Job.queued_at: when the job's message was last sent (created, or retried). Rows made before
# it was queued when they were created.

import django.utils.timezone
from django.db import migrations, models


def queued_when_created(apps, schema_editor):
    Job = apps.get_model("core", "Job")
    Job.objects.update(queued_at=models.F("created_at"))


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0005_job_shard_stage"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="queued_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(queued_when_created, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="job",
            name="queued_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
    ]
