import dataclasses
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report, job_run_here
from testsets.formats.registry import FORMATS, readable_formats
from testsets.job_params import ImportTestsetParams

# option -> the field of a format's import job that takes it
OPTION_FIELDS = {
    "scores": "scores_path",
    "dataset": "dataset",
    "name": "name",
    "context_turns": "context_turns",
    "encoding": "encoding",
}


class Command(BaseCommand):
    help = (
        "Import a released test set: TSV (context turns, ground truth, false candidates) and its "
        "human_scores.jsonl as a dataset with scores; or (--format hf) a test set folder written by "
        "export_testset --format hf as a dataset and a frozen test set."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the TSV file, or the folder with --format hf")
        parser.add_argument("--format", choices=readable_formats(), default="tsv")
        parser.add_argument("--scores", type=Path, help="human_scores.jsonl aligned with the TSV")
        parser.add_argument("--dataset", help="required for tsv; for hf the test set's name by default")
        parser.add_argument("--name", help="hf: the test set's name (default: the manifest's, else the folder's)")
        parser.add_argument(
            "--context-turns", type=int, help=f"tsv (default {ImportTestsetParams.default('context_turns')})"
        )
        parser.add_argument("--encoding", help=f"tsv (default {ImportTestsetParams.default('encoding')})")

    def handle(self, *args, **o):
        params_class = FORMATS[o["format"]].import_params
        fields = {f.name: f for f in dataclasses.fields(params_class)}
        given = {option: o[option] for option in OPTION_FIELDS if o[option] is not None}
        foreign = [option for option in given if OPTION_FIELDS[option] not in fields]
        if foreign:
            others = [n for n in readable_formats() if OPTION_FIELDS[foreign[0]] in _field_names(n)]
            raise CommandError(f"{', '.join(_flag(f) for f in foreign)}: for the {' and '.join(others)} format only")
        values = {OPTION_FIELDS[option]: value for option, value in given.items()}
        for name, field in fields.items():
            if name != "path" and name not in values and _required(field):
                option = next(opt for opt, f in OPTION_FIELDS.items() if f == name)
                raise CommandError(f"{_flag(option)} is required for the {o['format']} format")
        values = {key: str(value.resolve()) if isinstance(value, Path) else value for key, value in values.items()}
        params = params_class(path=str(o["path"].resolve()), **values)
        self.stdout.write(format_report(job_run_here(params=params).result))


def _field_names(format_name: str) -> set[str]:
    return {f.name for f in dataclasses.fields(FORMATS[format_name].import_params)}


def _required(field: dataclasses.Field) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")
