from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.job_commands import format_report, job_run_here
from retrieval.services.job_handlers import import_repository
from retrieval.services.repository_import import FORMATS


class Command(BaseCommand):
    help = "Import (or add to) an utterance repository from a file, streaming, de-duplicated by normalised text."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--name", required=True, help="repository name (created if missing, else added to)")
        parser.add_argument("--format", choices=FORMATS, default="lines")
        parser.add_argument("--min-tokens", type=int, default=1)
        parser.add_argument(
            "--exclude-dataset",
            action="append",
            default=[],
            dest="exclude_datasets",
            help="leave out every utterance occurring in this dataset (repeatable)",
        )
        parser.add_argument("--encoding", default="utf-8")

    def handle(self, *args, **o):
        params = {
            "path": str(o["path"].resolve()),
            "name": o["name"],
            "format": o["format"],
            "min_tokens": o["min_tokens"],
            "exclude_datasets": o["exclude_datasets"],
            "encoding": o["encoding"],
        }
        job = job_run_here(kind=JobKind.IMPORT_REPOSITORY, params=params, handler=import_repository)
        self.stdout.write(format_report(job.result))
