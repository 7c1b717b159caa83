from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from retrieval.job_params import INDEX_KINDS, BuildIndexesParams


class Command(BaseCommand):
    help = "Build a new version of a repository's BM25 index and/or embeddings (tantivy or Elasticsearch; FAISS)."

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True)
        parser.add_argument("--only", choices=INDEX_KINDS, help="build just one kind")

    def handle(self, *args, **o):
        params = BuildIndexesParams(repository=o["repository"], **({"kinds": [o["only"]]} if o["only"] else {}))
        self.stdout.write(format_report(job_run_here(params=params).result))
