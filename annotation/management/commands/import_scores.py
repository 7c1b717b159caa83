from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.job_commands import format_report, job_run_here
from annotation.services.job_handlers import HANDLERS


class Command(BaseCommand):
    help = "Import scores from a CSV with the columns question_id,candidate_id,annotator,score."

    def add_arguments(self, parser):
        parser.add_argument("csv", type=Path)
        parser.add_argument("--encoding", default="utf-8")

    def handle(self, *args, **o):
        params = {"path": str(o["csv"].resolve()), "encoding": o["encoding"]}
        job = job_run_here(kind=JobKind.IMPORT_SCORES, params=params, handler=HANDLERS[JobKind.IMPORT_SCORES])
        self.stdout.write(format_report(job.result))
