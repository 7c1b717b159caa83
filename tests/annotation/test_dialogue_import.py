import json

import pytest

from annotation.models import Candidate, Context, Dataset, Question, Turn
from annotation.services.dialogue_import import dialogues_import
from core.errors import ImportFileError, UserError

DAILYDIALOG = (
    "Hello , how are you ? __eou__ Fine , thanks . __eou__ Going to the gym ? __eou__ "
    "Yes , later . __eou__ Good . __eou__\n"
    "Short one . __eou__ Really ? __eou__\n"
    "Is it raining ? __eou__ A little . __eou__ Take an umbrella . __eou__ I will . __eou__\n"
)


def test_dailydialog_takes_three_context_turns_and_the_fourth_as_ground_truth(db, write_file):
    # given two dialogues of at least 4 turns and one of 2 turns
    path = write_file("dialogues_test.txt", DAILYDIALOG)
    # when they are imported
    report = dialogues_import(path=path, fmt="dailydialog", dataset_name="dd")
    # then each long dialogue is one question and the short one is skipped
    assert (report["questions"], report["skipped_short"]) == (2, 1)
    question = Question.objects.order_by("id").first()
    assert list(question.context.turns.values_list("text", flat=True)) == [
        "Hello , how are you ?",
        "Fine , thanks .",
        "Going to the gym ?",
    ]
    assert question.ground_truth == "Yes , later ."
    assert question.context.source == "dialogues_test.txt" and question.context.source_line == 1
    assert list(question.context.turns.values_list("speaker", flat=True)) == ["A", "B", "A"]


def test_max_dialogues_imports_the_first_n_that_make_a_question(db, write_file):
    # given a file whose last line is broken, and a short dialogue between the first two long ones
    path = write_file("d.txt", DAILYDIALOG + "no end of utterance marker\n")
    # when only the first one that makes a question is asked for
    report = dialogues_import(path=path, fmt="dailydialog", dataset_name="dd", max_dialogues=1)
    # then one question comes from line 1 and the file is read no further (the broken line is not reached)
    assert report["questions"] == 1 and report["stopped_at_max_dialogues"] == 1
    assert list(Context.objects.values_list("source_line", flat=True)) == [1]
    report = dialogues_import(
        path=write_file("e.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="de", max_dialogues=2
    )
    assert report["questions"] == 2 and report["skipped_short"] == 1


@pytest.mark.parametrize("bad", [0, -3])
def test_max_dialogues_below_one_is_refused(db, write_file, bad):
    with pytest.raises(UserError, match="--max-dialogues must be at least 1"):
        dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", max_dialogues=bad)
    assert not Dataset.objects.exists()


def test_the_command_and_the_admin_form_take_max_dialogues(db, write_file):
    from django.core.management import call_command

    from annotation.forms import DialogueImportForm

    call_command(
        "import_dialogues",
        str(write_file("d.txt", DAILYDIALOG)),
        "--format",
        "dailydialog",
        "--dataset",
        "dd",
        "--max-dialogues",
        "1",
    )
    assert Question.objects.count() == 1
    form = DialogueImportForm(
        data={"format": "dailydialog", "dataset": "x", "context_turns": "3", "max_dialogues": "0"}
    )
    assert not form.is_valid() and "max_dialogues" in form.errors


def test_ground_truth_is_also_a_candidate_to_be_scored(db, write_file):
    dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd")
    assert Candidate.objects.filter(is_ground_truth=True).count() == 2
    assert set(Candidate.objects.values_list("source", flat=True)) == {"imported"}


def test_context_turns_option_changes_the_split(db, write_file):
    dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="dd", context_turns=2)
    assert Question.objects.order_by("id").first().ground_truth == "Going to the gym ?"
    assert Dataset.objects.get(name="dd").context_turns == 2


def test_dailydialog_line_cut_off_at_the_end_of_the_file_is_skipped(db, write_file):
    # given a file whose last line lost its final __eou__ and newline (a cut download)
    path = write_file("d.txt", DAILYDIALOG + "One . __eou__ Two . __eou__ Three . __eou__ Fo")
    report = dialogues_import(path=path, fmt="dailydialog", dataset_name="dd")
    assert report["skipped_truncated_last_line"] == 1
    assert report["questions"] == 2


def test_text_after_the_last_eou_in_the_middle_of_a_file_is_an_error(db, write_file):
    path = write_file("d.txt", "a __eou__ b __eou__ c __eou__ d\n" + DAILYDIALOG)
    with pytest.raises(ImportFileError, match=r"line 1, field turn 4: text after the last __eou__"):
        dialogues_import(path=path, fmt="dailydialog", dataset_name="dd")


def test_undecodable_bytes_are_reported_with_line_and_turn_and_nothing_is_imported(db, write_file):
    # given a valid first dialogue and a Latin-1 byte in turn 2 of the second
    path = write_file(
        "d.txt", DAILYDIALOG.encode() + "A __eou__ caf\xe9 ? __eou__ C __eou__ D __eou__\n".encode("latin-1")
    )
    # when it is imported
    with pytest.raises(ImportFileError) as error:
        dialogues_import(path=path, fmt="dailydialog", dataset_name="dd")
    # then the error names the line and turn, and the transaction left nothing behind
    assert "line 4, field turn 2" in str(error.value)
    assert not Dataset.objects.exists() and not Question.objects.exists() and not Turn.objects.exists()


def test_importing_the_same_file_twice_into_a_dataset_is_refused(db, write_file):
    path = write_file("d.txt", DAILYDIALOG)
    dialogues_import(path=path, fmt="dailydialog", dataset_name="dd")
    with pytest.raises(UserError, match="already contains questions imported from 'd.txt'"):
        dialogues_import(path=path, fmt="dailydialog", dataset_name="dd")
    assert Question.objects.count() == 2


def test_jsonl_context_and_response(db, write_file):
    lines = [
        {"context": ["Hi.", "Hello!", "Lunch?"], "response": "Sure, where?", "speakers": ["Ann", "Bob", "Ann"]},
        {"context": ["Too", "many", "turns", "here"], "response": "ok"},
    ]
    path = write_file("d.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    dialogues_import(path=path, fmt="jsonl", dataset_name="js")
    first, second = Question.objects.order_by("id")
    assert list(first.context.turns.values_list("speaker", "text")) == [
        ("Ann", "Hi."),
        ("Bob", "Hello!"),
        ("Ann", "Lunch?"),
    ]
    # the turns nearest the response are kept when a context is longer than --context-turns
    assert list(second.context.turns.values_list("text", flat=True)) == ["many", "turns", "here"]


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"context": [], "response": "x"}', "field context", "non-empty list"),
        ('{"context": ["a", ""], "response": "x"}', "field context[1]", "is empty"),
        ('{"context": ["a", 3], "response": "x"}', "field context[1]", "must be a string"),
        ('{"context": ["a"], "response": "  "}', "field response", "is empty"),
        ('{"context": ["a"]}', "field response", "must be a string"),
        ('["a", "b"]', "line 2", "expected a JSON object"),
        ('{"context": ["a"], "response": "x"', "field (JSON, column", "invalid JSON"),
    ],
)
def test_bad_jsonl_lines_are_rejected_with_file_line_and_field(db, write_file, line, field, message):
    path = write_file("bad.jsonl", '{"context": ["ok"], "response": "fine"}\n' + line + "\n")
    with pytest.raises(ImportFileError) as error:
        dialogues_import(path=path, fmt="jsonl", dataset_name="js")
    assert "bad.jsonl, line 2" in str(error.value)
    assert field in str(error.value) and message in str(error.value)
    assert not Question.objects.exists()


def test_over_long_turn_is_rejected(db, write_file, settings):
    settings.WELLCHOSEN_MAX_UTTERANCE_CHARS = 50
    path = write_file("d.jsonl", json.dumps({"context": ["a" * 51], "response": "x"}) + "\n")
    with pytest.raises(ImportFileError, match=r"context\[0\]: is 51 characters long; the limit is 50"):
        dialogues_import(path=path, fmt="jsonl", dataset_name="js")


def test_html_like_text_is_stored_verbatim(db, write_file):
    # given a response with markup
    path = write_file("d.jsonl", json.dumps({"context": ["<i>Hi</i>"], "response": "<script>x()</script>"}) + "\n")
    dialogues_import(path=path, fmt="jsonl", dataset_name="js")
    # then dialogue text is kept as written (it is escaped when shown, never interpreted)
    assert Question.objects.get().ground_truth == "<script>x()</script>"
    assert Turn.objects.get().text == "<i>Hi</i>"


def test_a_file_without_usable_dialogues_is_an_error(db, write_file):
    with pytest.raises(UserError, match="no dialogue had 4 or more turns"):
        dialogues_import(path=write_file("d.txt", "a __eou__ b __eou__\n"), fmt="dailydialog", dataset_name="dd")
    assert not Dataset.objects.exists()


def test_dataset_name_must_be_a_slug(db, write_file):
    with pytest.raises(UserError, match="must be a slug"):
        dialogues_import(path=write_file("d.txt", DAILYDIALOG), fmt="dailydialog", dataset_name="My Dataset")


@pytest.mark.shared_data
def test_dailydialog_test_split_gives_one_question_per_dialogue_of_four_or_more_turns(db, shared_data):
    # given the real DailyDialog test split (1,000 dialogues)
    path = shared_data / "dailydialog" / "test" / "dialogues_test.txt"
    expected = sum(1 for line in path.open(encoding="utf-8") if line.count("__eou__") >= 4)
    # when it is imported
    report = dialogues_import(path=path, fmt="dailydialog", dataset_name="dd-test")
    # then every dialogue with >= 4 turns is a question with a 3-turn context
    assert report["lines"] == 1000
    assert report["questions"] == expected == Question.objects.count()
    assert report["questions"] + report["skipped_short"] == 1000
    assert Context.objects.filter(turns__position=2).count() == expected
    assert not Turn.objects.filter(position__gt=2).exists()


def test_a_lone_surrogate_in_jsonl_names_file_line_and_field(db, write_file):
    content = (
        json.dumps({"context": ["Hi."], "response": "Yes."}) + "\n" + '{"context": ["\\ud800"], "response": "No."}\n'
    )
    with pytest.raises(ImportFileError, match=r"d.jsonl, line 2, field context\[0\]: holds a lone surrogate"):
        dialogues_import(path=write_file("d.jsonl", content), fmt="jsonl", dataset_name="dd", context_turns=1)
    assert not Question.objects.exists()


def test_a_deeply_nested_jsonl_line_names_file_and_line(db, write_file):
    content = json.dumps({"context": ["Hi."], "response": "Yes."}) + "\n" + "[" * 200_000 + "\n"
    with pytest.raises(ImportFileError, match=r"d.jsonl, line 2: is nested too deeply"):
        dialogues_import(path=write_file("d.jsonl", content), fmt="jsonl", dataset_name="dd", context_turns=1)
    assert not Dataset.objects.exists()


def test_a_nul_in_a_cut_last_line_is_still_an_error(db, write_file):
    # a last line without its newline is skipped only when it does not parse (cut mid-object)
    content = (
        json.dumps({"context": ["Hi."], "response": "Yes."}) + "\n" + '{"context": ["Hi."], "response": "\\u0000"}'
    )
    with pytest.raises(ImportFileError, match=r"d.jsonl, line 2, field response: holds a NUL character"):
        dialogues_import(path=write_file("d.jsonl", content), fmt="jsonl", dataset_name="dd", context_turns=1)


def test_an_import_job_counts_lines_and_says_what_it_imported(db, write_file):
    from annotation.job_params import ImportDialoguesParams
    from core.commands import job_run_here
    from core.selectors import job_outcome

    path = write_file("dialogues_test.txt", DAILYDIALOG)
    job = job_run_here(params=ImportDialoguesParams(path=str(path), format="dailydialog", dataset="dd"))
    assert [(p["name"], p["unit"], p["done"], p["total"], p["estimated"]) for p in job.phases] == [
        ("reading the file", "lines", 3, 3, False)
    ]
    assert job_outcome(job=job)["summary"] == (
        "Imported 2 questions into dataset dd from dialogues_test.txt (3 lines); 1 line skipped (1 too short)."
    )
