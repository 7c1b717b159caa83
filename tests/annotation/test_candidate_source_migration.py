"""Migration annotation 0021: the "generated" candidates of a database made before it become a
system's response or a masked-LM negative, each by where its producer put it; "perturbed" and
"manual" become "imported"; and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Candidate

BEFORE = ("annotation", "0020_testset_to_testsets_app")
SPLIT = ("annotation", "0021_candidate_source_split")
MLM_PROVENANCE = {"method": "mlm-manipulation (Park et al., NAACL 2021)", "sample": 0}


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


@pytest.fixture
def before_split(transactional_db):
    """The database as it was before 0021, and its models then; migrated forward to the latest
    state afterwards."""
    yield migrate(BEFORE)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def candidate(apps, dataset, text, *, source="generated", provenance=None):
    Context = apps.get_model("annotation", "Context")
    Question = apps.get_model("annotation", "Question")
    Candidate = apps.get_model("annotation", "Candidate")
    context = Context.objects.create(dataset=dataset, source="file", source_line=Context.objects.count() + 1)
    question = Question.objects.create(dataset=dataset, context=context, ground_truth=f"Reference of {text}")
    return Candidate.objects.create(
        question=question, text=text, text_hash=text[:32], source=source, provenance=provenance or {}
    )


@pytest.fixture
def old_rows(before_split):
    """As the code before 0021 made them: a system's responses in a rating dataset (one a
    GeneratedResponse points to, one whose generation was deleted since), masked-LM negatives
    (in a selection dataset, and one generated into the rating dataset) with their provenance, a
    "generated" candidate read from an hf file, and the two sources that no code made."""
    apps = before_split
    Dataset = apps.get_model("annotation", "Dataset")
    rating = Dataset.objects.create(name="rate", task="rate")
    selection = Dataset.objects.create(name="select")
    rows = {
        "response": candidate(apps, rating, "A system said this."),
        "orphan_response": candidate(apps, rating, "Another system said this."),
        "negative": candidate(apps, selection, "A masked LM made this.", provenance=MLM_PROVENANCE),
        "negative_in_rating": candidate(apps, rating, "A masked LM made this too.", provenance=MLM_PROVENANCE),
        "read_from_hf": candidate(apps, selection, "An hf file said generated."),
        "perturbed": candidate(apps, selection, "Perturbed.", source="perturbed"),
        "manual": candidate(apps, selection, "Written by hand.", source="manual"),
        "lexical": candidate(apps, selection, "Retrieved.", source="lexical"),
    }
    System = apps.get_model("evaluation", "System")
    Generation = apps.get_model("evaluation", "Generation")
    GeneratedResponse = apps.get_model("evaluation", "GeneratedResponse")
    generation = Generation.objects.create(
        system=System.objects.create(name="ext", kind="external"), source_file="zhao.json"
    )
    GeneratedResponse.objects.create(
        generation=generation, context_key="d1", text=rows["response"].text, candidate_id=rows["response"].pk
    )
    return {name: row.pk for name, row in rows.items()}


def sources(rows: dict[str, int]) -> dict[str, str]:
    stored = dict(Candidate.objects.values_list("pk", "source"))
    return {name: stored[pk] for name, pk in rows.items()}


def test_generated_candidates_become_a_systems_response_or_a_masked_lm_negative(old_rows):
    migrate(SPLIT)
    assert sources(old_rows) == {
        "response": "system_response",
        "orphan_response": "system_response",
        "negative": "mlm_negative",
        "negative_in_rating": "mlm_negative",
        "read_from_hf": "mlm_negative",
        "perturbed": "imported",
        "manual": "imported",
        "lexical": "lexical",
    }


def test_backwards_both_become_generated_again(old_rows):
    migrate(SPLIT)
    migrate(BEFORE)
    assert sources(old_rows) == {
        "response": "generated",
        "orphan_response": "generated",
        "negative": "generated",
        "negative_in_rating": "generated",
        "read_from_hf": "generated",
        "perturbed": "imported",
        "manual": "imported",
        "lexical": "lexical",
    }
