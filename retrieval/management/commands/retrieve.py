from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from retrieval.job_params import BuildPoolsParams


class Command(BaseCommand):
    help = (
        "Build candidate pools: for every question of a dataset, utterances related to its ground truth from a "
        "repository (BM25 + embeddings). Builds missing or stale indexes first. Resumable: finished questions are "
        "skipped."
    )

    def add_arguments(self, parser):
        default = BuildPoolsParams.default
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--repository", required=True)
        parser.add_argument(
            "--lexical",
            type=int,
            default=default("lexical"),
            help=f"candidates from BM25 (default {default('lexical')})",
        )
        parser.add_argument(
            "--dense",
            type=int,
            default=default("dense"),
            help=f"candidates from embeddings (default {default('dense')})",
        )
        parser.add_argument(
            "--min-tokens",
            type=int,
            default=default("min_tokens"),
            help=f"skip shorter utterances (default {default('min_tokens')})",
        )
        parser.add_argument(
            "--paraphrase-threshold",
            type=float,
            default=default("paraphrase_threshold"),
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
        params = BuildPoolsParams(
            dataset=o["dataset"],
            repository=o["repository"],
            lexical=o["lexical"],
            dense=o["dense"],
            min_tokens=o["min_tokens"],
            paraphrase_threshold=o["paraphrase_threshold"],
            exclude_datasets=o["exclude_datasets"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
