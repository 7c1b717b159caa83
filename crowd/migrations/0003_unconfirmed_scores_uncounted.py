"""Crowd scores count only once their platform has confirmed the assignment: scores saved before
this rule from assignments no platform has confirmed stop counting until a sync (or, for a link
batch, the researcher's approvals file) confirms them. The rule as the providers stated it when
this migration was written (crowd.providers.*.confirmed)."""

from django.db import migrations
from django.db.models import Q

CONFIRMED_BY_SYNC = Q(imported_at__isnull=False, status__in=["submitted", "approved"])
CONFIRMED = {
    "internal": Q(pk__isnull=False),
    "link": Q(status="approved"),
    "mturk": CONFIRMED_BY_SYNC,
    "prolific": CONFIRMED_BY_SYNC,
}


def uncount_unconfirmed(apps, schema_editor):
    CrowdAssignment = apps.get_model("crowd", "CrowdAssignment")
    Score = apps.get_model("annotation", "Score")
    for provider, confirmed in CONFIRMED.items():
        unconfirmed = CrowdAssignment.objects.filter(provider=provider, assignment__isnull=False).exclude(confirmed)
        Score.objects.filter(assignment__crowd__in=unconfirmed).update(counted=False)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_score_counted"),
        ("crowd", "0002_assignment_discarded"),
    ]

    operations = [migrations.RunPython(uncount_unconfirmed, migrations.RunPython.noop)]
