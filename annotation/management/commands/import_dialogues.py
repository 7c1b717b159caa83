from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.dialogue_import import FORMATS
from annotation.services.job_commands import format_report, job_run_here
from annotation.services.job_handlers import HANDLERS


class Command(BaseCommand):
    help = "Import dialogues as questions: context turns + the next turn as ground truth."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=FORMATS, required=True)
        parser.add_argument("--dataset", required=True, help="dataset name (created if missing)")
        parser.add_argument("--context-turns", type=int, default=3)
        parser.add_argument("--encoding", default="utf-8")

    def handle(self, *args, **o):
        params = {
            "path": str(o["path"].resolve()),
            "format": o["format"],
            "dataset": o["dataset"],
            "context_turns": o["context_turns"],
            "encoding": o["encoding"],
        }
        job = job_run_here(kind=JobKind.IMPORT_DIALOGUES, params=params, handler=HANDLERS[JobKind.IMPORT_DIALOGUES])
        self.stdout.write(format_report(job.result))
