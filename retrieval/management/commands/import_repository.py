from pathlib import Path

from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from retrieval.job_params import ImportRepositoryParams
from retrieval.services.repository_import import FORMATS


class Command(BaseCommand):
    help = "Import (or add to) an utterance repository from a file, streaming, de-duplicated by normalised text."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--name", required=True, help="repository name (created if missing, else added to)")
        parser.add_argument("--format", choices=FORMATS, default=ImportRepositoryParams.default("format"))
        parser.add_argument("--min-tokens", type=int, default=ImportRepositoryParams.default("min_tokens"))
        parser.add_argument(
            "--exclude-dataset",
            action="append",
            default=[],
            dest="exclude_datasets",
            help="leave out every utterance occurring in this dataset (repeatable)",
        )
        parser.add_argument("--encoding", default=ImportRepositoryParams.default("encoding"))

    def handle(self, *args, **o):
        params = ImportRepositoryParams(
            path=str(o["path"].resolve()),
            name=o["name"],
            format=o["format"],
            min_tokens=o["min_tokens"],
            exclude_datasets=o["exclude_datasets"],
            encoding=o["encoding"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
