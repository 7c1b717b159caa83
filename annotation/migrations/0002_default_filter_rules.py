from django.db import migrations


def create_defaults(apps, schema_editor):
    FilterRules = apps.get_model("annotation", "FilterRules")
    if not FilterRules.objects.exists():
        FilterRules.objects.create(version=1, note="Sato et al. (ACL 2020) §3.1 defaults")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]
    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]
