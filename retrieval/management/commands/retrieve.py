from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from retrieval.job_params import BuildPoolsParams


class Command(BaseCommand):
    help = (
        "Build candidate pools: for every question of a dataset, utterances related to its ground truth from a "
        "repository (BM25 + embeddings). Builds missing or stale indexes first. Resumable: finished questions are "
        "skipped."
    )

    def add_arguments(self, parser):
        job_params_arguments(parser, BuildPoolsParams)

    def handle(self, *args, **o):
        params = job_params_from_options(BuildPoolsParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
