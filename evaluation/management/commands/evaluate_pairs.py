from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report, job_execute_here, job_params_arguments
from core.errors import UserError
from evaluation.job_params import EvaluatePairsParams
from evaluation.metrics.accuracy import MIN_PAIRS_TO_RANK, ML_PAIRS_NOTE, PAIR_CHANCE
from evaluation.services.pair_evaluations import pair_evaluation_start

PARTS = (("per_type", "type"), ("per_subtype", "type/subtype"), ("per_criterion", "criterion"))


class Command(BaseCommand):
    help = (
        "Correctness of a system on a set of contrastive pairs: the correct response must get the lower loss. "
        "Only pairs a reviewer accepted (and the annotators did not drop) count. Runs here; --background sends "
        "it to the gpu queue."
    )

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="pair_set", required=True, help="pair set name")
        parser.add_argument("--system", required=True, help="system name (see register_system)")
        parser.add_argument("--background", action="store_true", help="enqueue the job for a worker instead")
        job_params_arguments(parser, EvaluatePairsParams)
        parser.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")

    def handle(self, *args, **o):
        try:
            evaluation, job = pair_evaluation_start(
                pair_set_name=o["pair_set"],
                system_name=o["system"],
                enqueue=o["background"],
                batch_pairs=o["batch_pairs"],
                device=o["device"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        if job is not None and o["background"]:
            self.stdout.write(f"pair evaluation #{evaluation.pk}: job #{job.pk} sent to the workers")
            return
        summary = evaluation.summary if job is None else job_execute_here(job=job).result
        self.stdout.write(format_report(summary) if o["json"] else summary_table(summary))


def summary_table(summary: dict) -> str:
    """The summary as text: one line per group, correctness with its 95 % interval beside chance; a
    group of fewer than MIN_PAIRS_TO_RANK pairs is marked too few to rank."""
    rows = [("all pairs", summary)]
    if "sum_logprob_rule" in summary:
        rows.append(("all pairs, summed log-prob rule", summary["sum_logprob_rule"]))
    for part, title in PARTS:
        rows += [(f"{title} {key}", cell) for key, cell in summary.get(part, {}).items()]
    width = max(len(name) for name, _ in rows)
    lines = [
        f"{summary['system']} on pair set {summary['pair_set']}: the correct response has the lower loss",
        f"{'':<{width}}  {'pairs':>6}  {'correct':>7}  {'accuracy':>8}  95 % CI  (chance {PAIR_CHANCE:.3f})",
    ]
    for name, cell in rows:
        accuracy = "–" if cell["accuracy"] is None else f"{cell['accuracy']:.3f}"
        ci = "–" if not cell["ci95"] else f"[{cell['ci95'][0]:.3f}, {cell['ci95'][1]:.3f}]"
        few = f"  too few to rank (< {MIN_PAIRS_TO_RANK} pairs)" if cell["n"] < MIN_PAIRS_TO_RANK else ""
        lines.append(f"{name:<{width}}  {cell['n']:>6}  {cell['correct']:>7}  {accuracy:>8}  {ci}{few}")
    counts = summary.get("pair_set_counts") or {}
    if counts.get("pending_review") or counts.get("awaiting_annotators") or counts.get("left_out"):
        lines.append(
            f"not evaluated: {counts.get('pending_review', 0)} pairs pending review, "
            f"{counts.get('awaiting_annotators', 0)} with the annotators, "
            f"{counts.get('left_out', 0)} rejected or dropped"
        )
    if "ml" in summary.get("per_criterion", {}):
        lines.append(f"criterion ML: {ML_PAIRS_NOTE}")
    return "\n".join(lines) + "\n"
