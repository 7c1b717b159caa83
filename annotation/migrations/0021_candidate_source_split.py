"""CandidateSource: "generated" split into "system_response" and "mlm_negative"; "perturbed" and
"manual", which no code made, removed.

Which of the two a "generated" row is follows from where its producers put it, in annotation's
own tables: evaluation's rating_dataset_create makes a system's responses the candidates of a
rating dataset (Dataset.task "rate"), without provenance; negatives' generator records its
method in Candidate.provenance and runs on datasets scored for selection. So a "generated"
candidate of a rating dataset without a provenance method is a system response (every candidate
a GeneratedResponse points to is one, and so is one whose generation was deleted since); every
other one is a masked-LM negative (a test set, and so a release read back by the HF import, is
built from a selection dataset only). A "perturbed" or "manual" row can only have come from an
imported file: it becomes "imported".

Backwards, both new values become "generated" again; rows that were "perturbed" or "manual" stay
"imported". Every update is one statement over the table.
"""

from django.db import migrations, models

OLD_CHOICES = [
    ("lexical", "lexical retrieval"),
    ("dense", "embedding retrieval"),
    ("generated", "generated (by a system, or a masked-LM negative)"),
    ("perturbed", "perturbed ground truth"),
    ("imported", "imported"),
    ("manual", "written by hand"),
    ("contrastive", "contrastive pair (a minimal edit of the ground truth)"),
]
NEW_CHOICES = [
    ("lexical", "lexical retrieval"),
    ("dense", "embedding retrieval"),
    ("mlm_negative", "masked-LM negative (Park et al.)"),
    ("system_response", "a system's generated response"),
    ("imported", "imported"),
    ("contrastive", "contrastive pair (a minimal edit of the ground truth)"),
]
# While the rows move, the field accepts every old and new value.
BOTH_CHOICES = OLD_CHOICES + NEW_CHOICES[2:4]


def split_generated(apps, schema_editor):
    Candidate = apps.get_model("annotation", "Candidate")
    generated = Candidate.objects.filter(source="generated")
    generated.filter(question__dataset__task="rate").exclude(provenance__has_key="method").update(
        source="system_response"
    )
    generated.update(source="mlm_negative")
    Candidate.objects.filter(source__in=["perturbed", "manual"]).update(source="imported")


def join_generated(apps, schema_editor):
    Candidate = apps.get_model("annotation", "Candidate")
    Candidate.objects.filter(source__in=["system_response", "mlm_negative"]).update(source="generated")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0020_testset_to_testsets_app"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="candidate",
            name="candidate_source_valid",
        ),
        migrations.AlterField(
            model_name="candidate",
            name="source",
            field=models.CharField(choices=BOTH_CHOICES, max_length=16),
        ),
        migrations.RunPython(split_generated, join_generated),
        migrations.AlterField(
            model_name="candidate",
            name="source",
            field=models.CharField(choices=NEW_CHOICES, max_length=16),
        ),
        migrations.AddConstraint(
            model_name="candidate",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("source__in", ["lexical", "dense", "mlm_negative", "system_response", "imported", "contrastive"])
                ),
                name="candidate_source_valid",
            ),
        ),
    ]
