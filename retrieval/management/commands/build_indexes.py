from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.job_commands import format_report, job_run_here
from retrieval.services.job_handlers import build_indexes


class Command(BaseCommand):
    help = "Build a new version of a repository's BM25 index and/or embeddings (tantivy or Elasticsearch; FAISS)."

    def add_arguments(self, parser):
        parser.add_argument("--repository", required=True)
        parser.add_argument("--only", choices=["lexical", "dense"], help="build just one kind")

    def handle(self, *args, **o):
        params = {"repository": o["repository"], "kinds": [o["only"]] if o["only"] else ["lexical", "dense"]}
        job = job_run_here(kind=JobKind.BUILD_INDEXES, params=params, handler=build_indexes)
        self.stdout.write(format_report(job.result))
