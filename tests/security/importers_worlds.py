"""The importers the malformed-file corpus attacks: how to run each one on a file, the database rows
it needs first, and the rows an import may change rather than add (compared after a refused file)."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.apps import apps

from annotation.models import Annotator, AnnotatorProvider, Score
from annotation.services.assignment import annotation_open
from annotation.services.dialogue_import import dialogues_import
from annotation.services.score_import import scores_import
from config.apps import PROJECT_APPS
from crowd.models import CrowdAssignment
from crowd.services.batches import crowd_batch_create, crowd_batch_publish
from crowd.services.review import link_approvals_import
from evaluation.services.human_import import zhao_ratings_import
from pairs.services.transfer import pairs_import
from retrieval.services.repository_import import repository_import
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory
from testsets.services.import_hf import testset_hf_import
from testsets.services.import_tsv import testset_import

DAILYDIALOG = [
    "Hello , how are you ? __eou__ Fine , thanks . __eou__ Going out ? __eou__ Yes , later . __eou__",
    "Is it raining ? __eou__ A little . __eou__ Take an umbrella . __eou__ I will . __eou__",
    "Ready ? __eou__ Almost . __eou__ Hurry up . __eou__ Coming ! __eou__",
]
JSONL = [
    {"context": ["Hi.", "Hello there.", "Coffee?"], "response": "Yes, please."},
    {"context": ["Ready?", "Almost.", "Hurry up."], "response": "Coming!"},
    {"context": ["Is it far?", "Ten minutes.", "On foot?"], "response": "By bus."},
]
TSV = [
    ["Hi.", "Hello.", "Coffee?", "Yes, please.", "The bus is late.", "I never drink tea."],
    ["Ready?", "Almost.", "Hurry up.", "Coming!", "The shop was closed.", "He went home."],
    ["Is it far?", "Ten minutes.", "On foot?", "By bus.", "It rained all day.", "Blue is nice."],
]
TESTSET_SCORES = [[[5, 5, 4, 5, 5], [1, 1, 2, 1, 1], [0, 1, 1, 1, 1]] for _ in TSV]
# A Hugging Face test set folder's data file: two original questions and one derived from the
# first, which shares a choice with it (the same text, the same scores).
TESTSET_HF = [
    {
        "question_id": "corpus-0001",
        "context": ["Hi.", "Hello.", "Coffee?"],
        "choices": ["The bus is late.", "Yes, please.", "I never drink tea."],
        "label": 1,
        "sources": ["lexical", "ground_truth", "dense"],
        "derived_from": None,
        "scores": [[1, 1, 2], [5, 5, 4], [0, 1, 1]],
    },
    {
        "question_id": "corpus-0002",
        "context": ["Ready?", "Almost.", "Hurry up."],
        "choices": ["He went home.", "The shop was closed.", "Coming!"],
        "label": 2,
        "sources": ["lexical", "dense", "ground_truth"],
        "derived_from": None,
        "scores": [[1, 2, 1], [1, 1, 1], [4, 5, 5]],
    },
    {
        "question_id": "corpus-0003",
        "context": ["Hi.", "Hello.", "Coffee?"],
        "choices": ["Sure, thanks.", "Blue is nice.", "The bus is late."],
        "label": 0,
        "sources": ["lexical", "generated", "lexical"],
        "derived_from": "corpus-0001",
        "scores": [[4, 4, 3], [0, 0, 1], [1, 1, 2]],
    },
]
REPOSITORY = ["Where were you last night?", "I was at home.", "See you tomorrow."]
CORNELL_SEP = " +++$+++ "
CORNELL = [CORNELL_SEP.join([f"L{n}", "u0", "m0", "BIANCA", text]) for n, text in enumerate(REPOSITORY, 1)]
APPROVALS = ["worker_id,status,feedback", "P1,APPROVED,", "P2,REJECTED,too fast"]


PAIRS = [
    {
        "context": ["Is it far?", "Ten minutes.", "On foot?"],
        "correct": "I walk to the bus.",
        "incorrect": "I walk from the bus.",
        "type": "function",
    },
    {"context": ["Ready?", "Almost."], "correct": "You are late.", "incorrect": "Are you late?", "type": "sentence"},
    {
        "context": ["Hi."],
        "correct": "The tea is cold.",
        "incorrect": "The lamp is cold.",
        "type": "content",
        "criterion": "el",
    },
]


def zhao_item(i: int) -> dict:
    return {
        "dialogue_id": f"dailydialog-zhao_{i:05d}",
        "model": "S2S greedy",
        "context": "hello .\nhi , how are you ?\nfine .",
        "response": f"good to hear ({i}) .",
        "reference": ["glad to hear it ."],
        "annotations": {"appropriateness": [5, 4, 4, 3], "grammar": [5, 5, 5, 5]},
    }


ZHAO = [zhao_item(i) for i in range(3)]


def text_lines(lines: list[str], eol: str = "\n") -> bytes:
    return "".join(line + eol for line in lines).encode("utf-8")


def jsonl_lines(objects: list) -> list[str]:
    return [json.dumps(obj) for obj in objects]


def tsv_lines(rows: list[list[str]]) -> list[str]:
    return ["\t".join(row) for row in rows]


@dataclass(frozen=True)
class Importer:
    """One importer under attack: ``run`` imports a file and returns its report."""

    name: str
    filename: str
    base: Callable[[dict], list[str]]  # the valid file's lines, built from the world
    run: Callable[[Path, dict], dict]
    setup: Callable[[Path], dict] = lambda tmp: {}
    changed_rows: Callable[[dict], object] = lambda world: None
    position: str = "line"  # errors locate a line ("line 3"), or an item of a JSON list ("item 3")
    quoted_fields: bool = False  # field names appear as field 'name'

    def where(self, line: int) -> str:
        return f"{self.position} {line}"

    def field(self, name: str) -> str:
        return f"field {name!r}" if self.quoted_fields else f"field {name}"


def _scores_world(tmp: Path) -> dict:
    first = QuestionFactory()
    second = QuestionFactory(dataset=first.dataset)
    rows = [
        (first.pk, first.candidates.get().pk),
        (first.pk, CandidateFactory(question=first).pk),
        (second.pk, second.candidates.get().pk),
    ]
    return {"rows": rows}


def _scores_base(world: dict) -> list[str]:
    values = [4, 1, 2]
    return ["question_id,candidate_id,annotator,score"] + [
        f"{q},{c},r1,{v}" for (q, c), v in zip(world["rows"], values, strict=True)
    ]


def _testset_scores_world(tmp: Path) -> dict:
    tsv = tmp / "testset.tsv"
    tsv.write_bytes(text_lines(tsv_lines(TSV)))
    return {"tsv": tsv}


def _testset_hf_world(tmp: Path) -> dict:
    (tmp / "release" / "data").mkdir(parents=True)
    return {}


def _approvals_world(tmp: Path) -> dict:
    dataset = DatasetFactory(name="crowd", annotators_per_item=3, adaptive_stopping=False, attention_check_rate=0)
    QuestionFactory(dataset=dataset)
    annotation_open(dataset=dataset)
    batch = crowd_batch_create(dataset=dataset, provider="link", name="link", settings={"units_per_worker": 1})
    crowd_batch_publish(batch=batch)
    batch.refresh_from_db()
    for worker in ("P1", "P2"):
        annotator = Annotator.objects.create(provider=AnnotatorProvider.LINK, external_id=worker)
        CrowdAssignment.objects.create(
            provider="link", external_id=f"link-{worker}", batch=batch, worker=annotator, status="submitted"
        )
    return {"batch": batch}


def _approvals_rows(world: dict) -> object:
    return (
        list(CrowdAssignment.objects.order_by("pk").values_list("pk", "status", "feedback", "reviewed_at")),
        list(Score.objects.order_by("pk").values_list("pk", "counted")),
    )


IMPORTERS = {
    importer.name: importer
    for importer in [
        Importer(
            name="dialogues-dailydialog",
            filename="dialogues.txt",
            base=lambda world: list(DAILYDIALOG),
            run=lambda path, world: dialogues_import(path=path, fmt="dailydialog", dataset_name="corpus"),
        ),
        Importer(
            name="dialogues-jsonl",
            filename="dialogues.jsonl",
            base=lambda world: jsonl_lines(JSONL),
            run=lambda path, world: dialogues_import(path=path, fmt="jsonl", dataset_name="corpus"),
        ),
        Importer(
            name="testset-tsv",
            filename="testset.tsv",
            base=lambda world: tsv_lines(TSV),
            run=lambda path, world: testset_import(tsv_path=path, dataset_name="corpus"),
        ),
        Importer(
            name="testset-scores",
            filename="human_scores.jsonl",
            base=lambda world: jsonl_lines(TESTSET_SCORES),
            setup=_testset_scores_world,
            run=lambda path, world: testset_import(tsv_path=world["tsv"], scores_path=path, dataset_name="corpus"),
        ),
        Importer(
            name="testset-hf",
            filename="release/data/test.jsonl",  # the data file of the folder "release"
            base=lambda world: jsonl_lines(TESTSET_HF),
            setup=_testset_hf_world,
            run=lambda path, world: testset_hf_import(folder=path.parents[1], dataset_name="corpus", name="corpus"),
        ),
        Importer(
            name="scores-csv",
            filename="scores.csv",
            base=_scores_base,
            setup=_scores_world,
            run=lambda path, world: scores_import(path=path),
        ),
        Importer(
            name="repository-lines",
            filename="subtitles.txt",
            base=lambda world: list(REPOSITORY),
            run=lambda path, world: repository_import(path=path, name="corpus"),
        ),
        Importer(
            name="repository-cornell",
            filename="movie_lines.txt",
            base=lambda world: list(CORNELL),
            run=lambda path, world: repository_import(path=path, name="corpus", fmt="cornell"),
        ),
        Importer(
            name="repository-dailydialog",
            filename="dialogues_text.txt",
            base=lambda world: list(DAILYDIALOG),
            run=lambda path, world: repository_import(path=path, name="corpus", fmt="dailydialog"),
        ),
        Importer(
            name="approvals-csv",
            filename="approvals.csv",
            base=lambda world: list(APPROVALS),
            setup=_approvals_world,
            run=lambda path, world: link_approvals_import(batch=world["batch"], path=path),
            changed_rows=_approvals_rows,
        ),
        Importer(
            name="pairs-jsonl",
            filename="pairs.jsonl",
            base=lambda world: jsonl_lines(PAIRS),
            run=lambda path, world: pairs_import(set_name="corpus", path=path),
        ),
        Importer(
            name="human-ratings",
            filename="ratings.json",
            # one item per line, so that a case can change an item as a line
            base=lambda world: ["["] + [json.dumps(item) + "," for item in ZHAO[:-1]] + [json.dumps(ZHAO[-1]), "]"],
            run=lambda path, world: zhao_ratings_import(path=path),
            position="item",
            quoted_fields=True,
        ),
    ]
}


def database_rows(importer: Importer, world: dict) -> tuple:
    """Row counts of every table of the project, and the rows the importer may update in place."""
    counts = {
        model._meta.label: model.objects.count()
        for label in PROJECT_APPS
        for model in apps.get_app_config(label).get_models()
    }
    return counts, importer.changed_rows(world)
