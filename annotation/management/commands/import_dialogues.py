from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.job_params import ImportDialoguesParams
from annotation.services.dialogue_import import FORMATS
from core.commands import format_report, job_run_here


class Command(BaseCommand):
    help = "Import dialogues as questions: context turns + the next turn as ground truth."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=FORMATS, required=True)
        parser.add_argument("--dataset", required=True, help="dataset name (created if missing)")
        parser.add_argument("--context-turns", type=int, default=ImportDialoguesParams.default("context_turns"))
        parser.add_argument("--encoding", default=ImportDialoguesParams.default("encoding"))

    def handle(self, *args, **o):
        params = ImportDialoguesParams(
            path=str(o["path"].resolve()),
            format=o["format"],
            dataset=o["dataset"],
            context_turns=o["context_turns"],
            encoding=o["encoding"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
