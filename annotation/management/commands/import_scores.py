from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.job_params import ImportScoresParams
from core.commands import format_report, job_run_here


class Command(BaseCommand):
    help = "Import scores from a CSV with the columns question_id,candidate_id,annotator,score."

    def add_arguments(self, parser):
        parser.add_argument("csv", type=Path)
        parser.add_argument("--encoding", default=ImportScoresParams.default("encoding"))

    def handle(self, *args, **o):
        params = ImportScoresParams(path=str(o["csv"].resolve()), encoding=o["encoding"])
        self.stdout.write(format_report(job_run_here(params=params).result))
