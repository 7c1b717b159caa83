import json

import pytest

from evaluation.human import (
    HumanRatingsError,
    generation_systems,
    ratings_by_system,
    read_zhao,
    system_human_scores,
)


def item(i=0, model="S2S greedy", appropriateness=(5, 4, 4, 3), **overrides):
    data = {
        "dialogue_id": f"dailydialog-zhao_{i:05d}",
        "model": model,
        "context": "hello .\nhi , how are you ?\nfine .",
        "response": "good to hear .",
        "reference": ["glad to hear it ."],
        "annotations": {"appropriateness": list(appropriateness), "grammar": [5, 5, 5, 5]},
    }
    data.update(overrides)
    return data


def write_items(write_file, items, name="ratings.json"):
    return write_file(name, json.dumps(items, indent=4))


def test_reads_every_field_of_a_rated_response(write_file):
    path = write_items(write_file, [item()])
    [response] = list(read_zhao(path))
    assert response.dialogue_id == "dailydialog-zhao_00000"
    assert response.system == "S2S greedy"
    assert response.context == ("hello .", "hi , how are you ?", "fine .")
    assert response.response == "good to hear ."
    assert response.references == ("glad to hear it .",)
    assert response.ratings == (5, 4, 4, 3)
    assert response.mean_rating == pytest.approx(4.0)


def test_reads_another_aspect_on_request(write_file):
    path = write_items(write_file, [item()])
    assert next(read_zhao(path, aspect="grammar")).ratings == (5, 5, 5, 5)


def test_reads_a_file_larger_than_one_read_chunk(write_file):
    # given 400 items, several times the reader's 64 KiB chunk
    items = [item(i, response="word " * 40) for i in range(400)]
    path = write_items(write_file, items)
    assert path.stat().st_size > 3 * 65536
    responses = list(read_zhao(path))
    assert [r.dialogue_id for r in responses] == [x["dialogue_id"] for x in items]


def test_yields_the_good_items_before_the_error(write_file):
    # given a file cut in its third item: the reader streams, so two items come before the error
    text = json.dumps([item(0), item(1), item(2)], indent=4)
    path = write_file("cut.json", text[: text.rindex('"annotations"')])
    reader = read_zhao(path)
    assert next(reader).dialogue_id.endswith("00000")
    assert next(reader).dialogue_id.endswith("00001")
    with pytest.raises(HumanRatingsError, match=r"cut\.json: item 2 is not valid JSON"):
        next(reader)


def test_a_missing_field_names_the_file_the_item_and_the_field(write_file):
    bad = item(1)
    del bad["response"]
    path = write_items(write_file, [item(0), bad])
    with pytest.raises(
        HumanRatingsError, match=r"ratings\.json: item 1 \(dialogue_id 'dailydialog-zhao_00001'\).*'response'"
    ):
        list(read_zhao(path))


def test_a_missing_aspect_names_the_annotations_field(write_file):
    path = write_items(write_file, [item()])
    with pytest.raises(HumanRatingsError, match="annotations.relevance"):
        list(read_zhao(path, aspect="relevance"))


def test_non_numeric_ratings_are_refused(write_file):
    path = write_items(write_file, [item(appropriateness=("5", 4, 4, 3))])
    with pytest.raises(HumanRatingsError, match="list of numbers"):
        list(read_zhao(path))


def test_a_changing_number_of_annotators_is_refused(write_file):
    path = write_items(write_file, [item(0), item(1, appropriateness=(5, 4, 4))])
    with pytest.raises(HumanRatingsError, match="has 3 ratings, earlier items have 4"):
        list(read_zhao(path))


def test_a_file_that_is_not_a_list_is_refused(write_file):
    path = write_file("obj.json", json.dumps(item()))
    with pytest.raises(HumanRatingsError, match="expected a JSON list"):
        list(read_zhao(path))


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(HumanRatingsError, match="no such file"):
        list(read_zhao(tmp_path / "nope.json"))


def test_generation_systems_leave_out_ground_truth_and_negative_sample(write_file):
    path = write_items(write_file, [item(0, "ground-truth"), item(1, "negative-sample"), item(2, "GPT2")])
    assert [r.system for r in generation_systems(read_zhao(path))] == ["GPT2"]


def test_system_human_score_is_the_mean_over_responses_of_the_annotator_mean(write_file):
    path = write_items(
        write_file,
        [item(0, "A", (5, 5, 4, 4)), item(1, "A", (1, 1, 1, 1)), item(2, "B", (3, 3, 3, 2))],
    )
    scores = system_human_scores(ratings_by_system(read_zhao(path)))
    assert scores == {"A": pytest.approx((4.5 + 1.0) / 2), "B": pytest.approx(2.75)}


def test_a_wrongly_typed_reference_names_the_field_and_the_types_wanted(write_file):
    path = write_items(write_file, [item(reference=42)])
    with pytest.raises(HumanRatingsError, match="field 'reference' should be list or str, found int"):
        list(read_zhao(path))


def test_a_single_string_reference_is_accepted(write_file):
    path = write_items(write_file, [item(reference="glad to hear it .")])
    assert next(read_zhao(path)).references == ("glad to hear it .",)


def test_a_lone_surrogate_names_the_file_the_item_and_the_field(write_file):
    text = json.dumps([item(0), item(1, model="S2S \ud800")])
    path = write_file("ratings.json", text)
    with pytest.raises(
        HumanRatingsError, match=r"ratings.json: item 1: field 'model' holds a lone surrogate \(U\+D800\)"
    ):
        list(read_zhao(path))


def test_a_nul_in_a_reference_names_the_field(write_file):
    path = write_items(write_file, [item(0, reference=["glad\x00to hear it ."])])
    with pytest.raises(HumanRatingsError, match=r"item 0: field 'reference\[0\]' holds a NUL character"):
        list(read_zhao(path))


def test_an_item_nested_200k_deep_is_a_clear_error(write_file):
    path = write_file("ratings.json", "[" + json.dumps(item(0)) + ", " + "[" * 200_000)
    with pytest.raises(HumanRatingsError, match="ratings.json: item 1 is nested too deeply"):
        list(read_zhao(path))


def test_undecodable_bytes_name_the_line(write_file):
    path = write_file("ratings.json", json.dumps([item(0), item(1)], indent=1).encode().replace(b"good", b"g\xe9od", 1))
    with pytest.raises(HumanRatingsError, match=r"ratings.json: not UTF-8 text at line \d+ \(undecodable bytes"):
        list(read_zhao(path))


def test_a_utf8_bom_is_accepted(write_file):
    path = write_file("ratings.json", b"\xef\xbb\xbf" + json.dumps([item(0)]).encode())
    assert len(list(read_zhao(path))) == 1
