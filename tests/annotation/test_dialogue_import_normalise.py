import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Candidate, Dataset, Question, Turn
from annotation.services.dialogue_import import dialogues_import
from core.errors import ImportFileError, UserError
from core.text import text_hash
from tests.admin_jobs import upload

DAILYDIALOG = (
    "Hello , how are you ? __eou__ Fine , thanks . __eou__ Going to the gym ? __eou__ "
    "Yes , I ’ m late . __eou__ Good . __eou__\n"
    "Is it raining ? __eou__ A little . __eou__ Take an umbrella . __eou__ OK __eou__\n"
)


def test_detokenize_rewrites_turns_and_ground_truths_and_keeps_the_originals(db, write_file):
    dialogues_import(
        path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    question = Question.objects.order_by("id").first()
    turns = list(question.context.turns.values_list("text", "original_text"))
    assert turns == [
        ("Hello, how are you?", "Hello , how are you ?"),
        ("Fine, thanks.", "Fine , thanks ."),
        ("Going to the gym?", "Going to the gym ?"),
    ]
    ground_truth = question.candidates.get(is_ground_truth=True)
    assert (question.ground_truth, ground_truth.text, ground_truth.original_text) == (
        "Yes, I'm late.",
        "Yes, I'm late.",
        "Yes , I ’ m late .",
    )
    assert ground_truth.text_hash == text_hash("Yes , I ’ m late .")


def test_an_unchanged_text_keeps_no_original(db, write_file):
    dialogues_import(
        path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    assert Candidate.objects.get(text="OK").original_text == ""


def test_the_report_counts_the_texts_the_normaliser_changed(db, write_file):
    report = dialogues_import(
        path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    # 2 questions of 4 texts; every text but "OK" had a space before its punctuation
    assert (report["normaliser"], report["normaliser_version"]) == ("detokenize", 1)
    assert (report["texts_seen"], report["texts_changed"]) == (8, 7)


def test_without_a_normaliser_texts_are_stored_as_read_and_the_report_says_none(db, write_file):
    report = dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd")
    assert report["normaliser"] == "none" and "texts_changed" not in report
    assert not Turn.objects.exclude(original_text="").exists()
    assert Turn.objects.filter(text="Hello , how are you ?").exists()


def test_the_dataset_records_its_normaliser(db, write_file):
    dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="standard")
    dataset = Dataset.objects.get(name="dd")
    assert (dataset.text_normaliser, dataset.text_normaliser_version) == ("standard", 1)


def test_a_second_import_with_another_normaliser_is_refused(db, write_file):
    dialogues_import(
        path=write_file("a.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    with pytest.raises(UserError, match="dataset 'dd' holds texts imported with normaliser detokenize v1"):
        dialogues_import(path=write_file("b.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd")
    assert Question.objects.count() == 2


def test_a_second_import_with_the_same_normaliser_adds_to_the_dataset(db, write_file):
    dialogues_import(
        path=write_file("a.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    dialogues_import(
        path=write_file("b.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    assert Question.objects.count() == 4


def test_a_turn_the_normaliser_empties_is_an_error_naming_it(db, write_file):
    line = json.dumps({"context": ["Hi.", "[LAUGHS]", "Lunch?"], "response": "Sure."}) + "\n"
    with pytest.raises(ImportFileError, match=r"line 1, field context turn 2: is empty after the subtitles normaliser"):
        dialogues_import(path=write_file("d.jsonl", line), fmt="jsonl", dataset_name="dd", normaliser="subtitles")
    assert not Dataset.objects.filter(name="dd").exists()


def test_an_unknown_normaliser_is_refused_before_anything_is_read(db, write_file):
    with pytest.raises(UserError, match="unknown normaliser 'penn'"):
        dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="penn")


def test_the_command_takes_normalise(db, write_file):
    out = StringIO()
    call_command(
        "import_dialogues",
        str(write_file("d.txt", DAILYDIALOG)),
        "--format",
        "dailydialog",
        "--dataset",
        "dd",
        "--normalise",
        "detokenize",
        stdout=out,
    )
    assert Dataset.objects.get(name="dd").text_normaliser == "detokenize"
    assert "texts_changed" in out.getvalue()


def test_the_command_refuses_an_unknown_normaliser(db, write_file):
    with pytest.raises(CommandError, match="invalid choice: 'penn'"):
        call_command(
            "import_dialogues",
            str(write_file("d.txt", DAILYDIALOG)),
            "--format",
            "dailydialog",
            "--dataset",
            "dd",
            "--normalise",
            "penn",
        )


def test_the_upload_form_refuses_mixing_before_the_job(admin_client, write_file):
    dialogues_import(
        path=write_file("a.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    response = admin_client.post(
        reverse("admin:annotation_dataset_import_dialogues"),
        {"file": upload("b.txt", DAILYDIALOG), "format": "dailydialog", "dataset": "dd", "context_turns": 3},
    )
    assert response.status_code == 200
    assert "holds texts imported with normaliser detokenize v1" in response.content.decode()
    assert Question.objects.count() == 2


def test_the_workspace_names_the_normaliser(admin_client, write_file):
    dialogues_import(
        path=write_file("a.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", normaliser="detokenize"
    )
    page = admin_client.get(reverse("dashboard-dataset", args=["dd"])).content.decode()
    assert "Texts normalised at import: detokenize v1." in page
