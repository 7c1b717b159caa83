from django.core.management.base import BaseCommand

from annotation.job_params import ImportScoresParams
from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here


class Command(BaseCommand):
    help = "Import scores from a CSV with the columns question_id,candidate_id,annotator,score."

    def add_arguments(self, parser):
        job_params_arguments(parser, ImportScoresParams)

    def handle(self, *args, **o):
        params = job_params_from_options(ImportScoresParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
