from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.job_commands import format_report, job_run_here
from annotation.services.job_handlers import HANDLERS


class Command(BaseCommand):
    help = "Import a released test set (TSV: context turns, ground truth, false candidates) and its human_scores.jsonl."

    def add_arguments(self, parser):
        parser.add_argument("tsv", type=Path)
        parser.add_argument("--scores", type=Path, help="human_scores.jsonl aligned with the TSV")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--context-turns", type=int, default=3)
        parser.add_argument("--encoding", default="utf-8")

    def handle(self, *args, **o):
        params = {
            "path": str(o["tsv"].resolve()),
            "scores_path": str(o["scores"].resolve()) if o["scores"] else None,
            "dataset": o["dataset"],
            "context_turns": o["context_turns"],
            "encoding": o["encoding"],
        }
        job = job_run_here(kind=JobKind.IMPORT_TESTSET, params=params, handler=HANDLERS[JobKind.IMPORT_TESTSET])
        self.stdout.write(format_report(job.result))
