from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.job_params import ImportHFTestsetParams, ImportTestsetParams
from core.commands import format_report, job_run_here

FORMATS = ("tsv", "hf")


class Command(BaseCommand):
    help = (
        "Import a released test set: TSV (context turns, ground truth, false candidates) and its "
        "human_scores.jsonl as a dataset with scores; or (--format hf) a test set folder written by "
        "export_testset --format hf as a dataset and a frozen test set."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the TSV file, or the folder with --format hf")
        parser.add_argument("--format", choices=FORMATS, default="tsv")
        parser.add_argument("--scores", type=Path, help="human_scores.jsonl aligned with the TSV")
        parser.add_argument("--dataset", help="required for tsv; for hf the test set's name by default")
        parser.add_argument("--name", help="hf: the test set's name (default: the manifest's, else the folder's)")
        parser.add_argument(
            "--context-turns", type=int, help=f"tsv (default {ImportTestsetParams.default('context_turns')})"
        )
        parser.add_argument("--encoding", help=f"tsv (default {ImportTestsetParams.default('encoding')})")

    def handle(self, *args, **o):
        if o["format"] == "hf":
            given = [
                flag
                for flag, key in (
                    ("--scores", "scores"),
                    ("--context-turns", "context_turns"),
                    ("--encoding", "encoding"),
                )
                if o[key] is not None
            ]
            if given:
                raise CommandError(f"{', '.join(given)}: for the tsv format only")
            params = ImportHFTestsetParams(path=str(o["path"].resolve()), dataset=o["dataset"], name=o["name"])
        else:
            if o["dataset"] is None:
                raise CommandError("--dataset is required for the tsv format")
            if o["name"] is not None:
                raise CommandError("--name: for the hf format only (a TSV is imported as a dataset, not a test set)")
            params = ImportTestsetParams(
                path=str(o["path"].resolve()),
                scores_path=str(o["scores"].resolve()) if o["scores"] else None,
                dataset=o["dataset"],
                context_turns=_or_default(o["context_turns"], "context_turns"),
                encoding=_or_default(o["encoding"], "encoding"),
            )
        self.stdout.write(format_report(job_run_here(params=params).result))


def _or_default(value, name: str):
    return ImportTestsetParams.default(name) if value is None else value
