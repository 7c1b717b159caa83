from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report
from core.errors import UserError
from pairs.fluency import MAX_LOSS_INCREASE
from pairs.services.fluency import pairs_fluency_check


class Command(BaseCommand):
    help = (
        "Hold back the garbled edits of a pair set before review: a pending pair whose incorrect response a "
        "reference causal LM finds much less fluent than its correct one (per-token loss) is rejected, its "
        "losses recorded. Pairs checked before are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="pair_set", required=True, help="pair set name")
        parser.add_argument("--lm", required=True, help="a causal LM: a local folder or a Hugging Face id")
        parser.add_argument(
            "--max-increase",
            type=float,
            default=MAX_LOSS_INCREASE,
            help=f"nats per token the edited response may lose against the original (default {MAX_LOSS_INCREASE})",
        )
        parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when there is one)")

    def handle(self, *args, **o):
        try:
            report = pairs_fluency_check(
                pair_set_name=o["pair_set"], lm=o["lm"], max_increase=o["max_increase"], device=o["device"]
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(format_report(report))
