from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from retrieval.job_params import BuildIndexesParams


class Command(BaseCommand):
    help = "Build a new version of a repository's BM25 index and/or embeddings (tantivy or Elasticsearch; FAISS)."

    def add_arguments(self, parser):
        job_params_arguments(parser, BuildIndexesParams)

    def handle(self, *args, **o):
        params = job_params_from_options(BuildIndexesParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
