from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.job_commands import format_report, job_run_here
from retrieval.services.job_handlers import build_pools


class Command(BaseCommand):
    help = (
        "Build candidate pools: for every question of a dataset, utterances related to its ground truth from a "
        "repository (BM25 + embeddings). Builds missing or stale indexes first. Resumable: finished questions are "
        "skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--repository", required=True)
        parser.add_argument("--lexical", type=int, default=5, help="candidates from BM25 (default 5)")
        parser.add_argument("--dense", type=int, default=5, help="candidates from embeddings (default 5)")
        parser.add_argument("--min-tokens", type=int, default=3, help="skip shorter utterances (default 3)")
        parser.add_argument(
            "--paraphrase-threshold",
            type=float,
            default=0.95,
            help="skip utterances at least this similar (cosine) to the ground truth",
        )
        parser.add_argument(
            "--exclude",
            action="append",
            default=[],
            dest="exclude_datasets",
            help="never take an utterance that occurs in this dataset (repeatable)",
        )

    def handle(self, *args, **o):
        params = {
            key: o[key]
            for key in (
                "dataset",
                "repository",
                "lexical",
                "dense",
                "min_tokens",
                "paraphrase_threshold",
                "exclude_datasets",
            )
        }
        job = job_run_here(kind=JobKind.BUILD_POOLS, params=params, handler=build_pools)
        self.stdout.write(format_report(job.result))
