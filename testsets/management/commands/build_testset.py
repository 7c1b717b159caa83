from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from testsets.job_params import BuildTestsetParams


class Command(BaseCommand):
    help = "Build a frozen test set: 1 ground truth + k false candidates per question (Sato et al. §3.2)."

    def add_arguments(self, parser):
        job_params_arguments(parser, BuildTestsetParams)

    def handle(self, *args, **o):
        params = job_params_from_options(BuildTestsetParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
