from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from pairs.edits import Criterion, PairType
from pairs.job_params import BuildPairsParams


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


class Command(BaseCommand):
    help = (
        "Build contrastive response pairs (Okano et al.) from a dataset's questions: each ground truth and a "
        "minimal edit of it (a substituted content word, a switched sentence type, a substituted function word). "
        "The pairs wait for review. Resumable: run again with the same settings to finish an interrupted build."
    )

    def add_arguments(self, parser):
        default = BuildPairsParams.default
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--name", required=True, help="the pair set")
        parser.add_argument("--types", default=",".join(PairType.ALL), help="comma-separated pair types")
        parser.add_argument(
            "--criterion",
            default=",".join(Criterion.ALL),
            help="substituted content words: el (equally likely), ml (most likely), or both",
        )
        parser.add_argument("--per-question", type=int, default=default("per_question"))
        parser.add_argument("--seed", type=int, default=default("seed"))
        parser.add_argument(
            "--repository", default="", help="bigram model and noun vocabulary (default: the only repository)"
        )

    def handle(self, *args, **o):
        params = BuildPairsParams(
            dataset=o["dataset"],
            name=o["name"],
            types=_names(o["types"]),
            criteria=_names(o["criterion"]),
            per_question=o["per_question"],
            seed=o["seed"],
            repository=o["repository"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
