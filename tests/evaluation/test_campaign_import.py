"""Importing the Zhao et al. ratings into the database: systems, generations, responses, ratings, campaign."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from core.errors import UserError
from evaluation.models import Campaign, GeneratedResponse, Generation, ResponseRating, System, SystemKind
from evaluation.services.human_import import external_system_name, zhao_ratings_import
from evaluation.services.systems import system_register
from tests.evaluation.campaign_helpers import write_zhao, zhao_item

MODELS = ["ground-truth", "negative-sample", "S2S greedy_temp1.0_k0_p0.0"]


@pytest.fixture
def small_file(write_file):
    """3 systems (ground truth, negative sample, one generation system) x 2 contexts, 4 annotators."""
    items = []
    for context in range(2):
        for m, model in enumerate(MODELS):
            items.append(zhao_item(3 * context + m, model, appropriateness=(1 + m, 2 + m, 3, 1 + context)))
    return write_zhao(write_file, items)


def counts() -> tuple[int, ...]:
    return (
        System.objects.count(),
        Generation.objects.count(),
        GeneratedResponse.objects.count(),
        ResponseRating.objects.count(),
        Campaign.objects.count(),
    )


def test_import_creates_an_external_system_and_generation_per_model(db, small_file):
    # when the file is imported
    report = zhao_ratings_import(path=small_file)
    # then each model is an external system named by a slug, its model string in the description
    systems = {s.description: s for s in System.objects.all()}
    assert set(systems) == set(MODELS)
    assert all(s.kind == SystemKind.EXTERNAL for s in systems.values())
    assert systems[MODELS[2]].name == external_system_name(MODELS[2])
    # with one imported generation each, from this file
    generation = Generation.objects.get(system=systems[MODELS[2]])
    assert (generation.dataset, generation.strategy, generation.source_file) == (None, "imported", str(small_file))
    # and one response per item with its context turns and references
    response = GeneratedResponse.objects.get(generation=generation, context_key="dailydialog-zhao_00002")
    assert response.context == ["hello .", "hi , how are you ?", "fine ."]
    assert (response.text, response.references) == ("good to hear , 2 .", ["glad to hear it ."])
    assert report["items"] == 6 and report["systems"] == 3


def test_every_aspect_is_rated_by_every_annotator_position(db, small_file):
    zhao_ratings_import(path=small_file)
    response = GeneratedResponse.objects.get(context_key="dailydialog-zhao_00005")  # context 1, S2S
    ratings = {(r.aspect, r.annotator_key): r.value for r in response.ratings.all()}
    assert ratings == {
        **{("appropriateness", str(i)): v for i, v in enumerate([3, 4, 3, 2])},
        **{("grammar", str(i)): v for i, v in enumerate([5, 5, 4, 5])},
    }
    assert ResponseRating.objects.count() == 6 * 2 * 4


def test_importing_the_same_file_twice_changes_nothing(db, small_file):
    zhao_ratings_import(path=small_file, campaign_name="zhao")
    before = counts()
    ids = sorted(ResponseRating.objects.values_list("id", "value"))
    # when imported again
    report = zhao_ratings_import(path=small_file, campaign_name="zhao")
    # then nothing was created or changed
    assert counts() == before
    assert sorted(ResponseRating.objects.values_list("id", "value")) == ids
    assert (report["responses_created"], report["ratings_created"], report["systems_created"]) == (0, 0, 0)


def test_campaign_holds_the_generation_systems_only(db, small_file):
    zhao_ratings_import(path=small_file, campaign_name="zhao")
    campaign = Campaign.objects.get(name="zhao")
    assert [g.system.description for g in campaign.generations.all()] == [MODELS[2]]
    assert [s.description for s in campaign.systems.all()] == [MODELS[2]]
    assert campaign.human_aspect == "appropriateness"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"annotations": {"appropriateness": [5, "x", 4, 3]}}, "annotations.appropriateness"),
        ({"annotations": {"appropriateness": [5, 5, 4, 3], "grammar": [6, 5, 5, 5]}}, "annotations.grammar"),
        ({"reference": []}, "reference"),
        ({"response": None}, "response"),
    ],
)
def test_a_bad_field_names_file_item_and_field_and_imports_nothing(db, write_file, change, field):
    # given a file whose fifth item is broken
    items = [zhao_item(i, MODELS[i % 3]) for i in range(6)]
    items[4].update(change)
    path = write_zhao(write_file, items)
    # when it is imported
    with pytest.raises(UserError) as error:
        zhao_ratings_import(path=path, campaign_name="zhao")
    # then the error says where, and the four good items before it were rolled back
    message = str(error.value)
    assert str(path) in message and "item 4" in message and f"'{field}'" in message
    assert counts() == (0, 0, 0, 0, 0)


def test_a_file_that_disagrees_with_an_earlier_import_is_refused(db, write_file, small_file):
    zhao_ratings_import(path=small_file)
    before = counts()
    # given the same file with one rating changed
    items = json.loads(small_file.read_text())
    items[1]["annotations"]["appropriateness"][2] = 5
    small_file.write_text(json.dumps(items))
    # then the import is refused: ratings are never overwritten
    with pytest.raises(UserError, match=r"item 1 .*'annotations.appropriateness'.*annotator 2"):
        zhao_ratings_import(path=small_file)
    assert counts() == before


def test_a_model_repeating_a_dialogue_id_is_an_error(db, write_file):
    path = write_zhao(write_file, [zhao_item(0, "A"), zhao_item(0, "A")])
    with pytest.raises(UserError, match=r"item 1 .*'dialogue_id' repeats"):
        zhao_ratings_import(path=path)
    assert counts() == (0, 0, 0, 0, 0)


def test_system_names_are_stable_slugs_that_keep_similar_strings_apart():
    a, b = external_system_name("S2S top_p0.5"), external_system_name("s2s top_p05")
    assert a != b
    assert a == external_system_name("S2S top_p0.5")
    assert a.startswith("s2s-top_p0-5-")


def test_a_local_system_with_the_same_name_is_not_taken_over(db, small_file):
    system_register(
        name=external_system_name(MODELS[2]), kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin"
    )
    with pytest.raises(UserError, match="a plugin system has that name"):
        zhao_ratings_import(path=small_file)


def test_command_imports_and_reports_counts(db, small_file):
    out = StringIO()
    call_command("import_human_ratings", "--format", "zhao", str(small_file), "--campaign", "zhao", stdout=out)
    report = json.loads(out.getvalue())
    assert (report["items"], report["ratings_created"], report["campaign"]) == (6, 48, "zhao")


def test_command_turns_a_bad_file_into_a_clean_error(db, write_file):
    path = write_zhao(write_file, [zhao_item(0, "A", dialogue_id=7)])
    with pytest.raises(CommandError, match=r"item 0 .*field 'dialogue_id' should be str"):
        call_command("import_human_ratings", "--format", "zhao", str(path))
    assert counts() == (0, 0, 0, 0, 0)


def test_items_are_written_in_batches_not_row_by_row(db, write_file):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(n: int, name: str) -> int:
        path = write_zhao(write_file, [zhao_item(i, MODELS[i % 3]) for i in range(n)], name=name)
        with CaptureQueriesContext(connection) as captured:
            zhao_ratings_import(path=path)
        return len(captured)

    # given a first import that creates the three systems
    queries(6, "first.json")
    # then 300 items (2,400 ratings) take a few dozen queries: per batch, not per row (SQLite splits
    # a bulk insert into statements of a few hundred rows, so the count grows a little)
    small, large = queries(30, "small.json"), queries(300, "large.json")
    assert large < 300 / 5
    assert large - small < 20
