from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from negatives.job_params import GenerateNegativesParams


class Command(BaseCommand):
    help = (
        "Generate false candidates by manipulating each question's ground truth with a masked LM (Park et al., "
        "NAACL 2021): words that the context makes likely are replaced by what the MLM predicts without the "
        "context. The negatives join the questions' pools. Resumable: finished questions are skipped."
    )

    def add_arguments(self, parser):
        default = GenerateNegativesParams.default
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--mlm",
            default="",
            metavar="NAME",
            help="masked LM: a local directory or a Hugging Face model id, optionally @revision "
            "(default: WELLCHOSEN_MLM_MODEL, else the demo's toy masked LM)",
        )
        parser.add_argument(
            "--per-question",
            type=int,
            default=default("per_question"),
            help="negatives per ground truth: the argmax one, then seeded top-k samples (default 1)",
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=default("threshold"),
            help="replace words whose log P with context minus log P without exceeds this (default 0.5)",
        )
        parser.add_argument("--seed", type=int, default=default("seed"))
        parser.add_argument(
            "--min-words", type=int, default=default("min_words"), help="skip shorter ground truths (default 3)"
        )
        parser.add_argument(
            "--max-mask-share",
            type=float,
            default=default("max_mask_share"),
            help="replace at most this share of a response's words, the highest-scoring first (default 1)",
        )
        parser.add_argument(
            "--replace-with-context",
            action="store_true",
            help="let the replacement see the context (an ablation; the paper replaces without it)",
        )
        parser.add_argument(
            "--top-k", type=int, default=default("top_k"), help="samples after the first come from the top k"
        )

    def handle(self, *args, **o):
        params = GenerateNegativesParams(
            dataset=o["dataset"],
            mlm=o["mlm"],
            per_question=o["per_question"],
            threshold=o["threshold"],
            seed=o["seed"],
            min_words=o["min_words"],
            max_mask_share=o["max_mask_share"],
            replace_with_context=o["replace_with_context"],
            top_k=o["top_k"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
