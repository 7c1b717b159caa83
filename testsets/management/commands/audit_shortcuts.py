from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from testsets.job_params import AuditShortcutsParams
from testsets.models import ShortcutAudit
from testsets.shortcuts.report import audit_table_lines


class Command(BaseCommand):
    help = (
        "Audit a dataset's pools or a test set for shortcuts: the accuracy of context-free baselines "
        "(longest and shortest reply, similarity to the other candidates, a surface-feature classifier, "
        "a system scoring the candidates alone) with 95 % intervals, beside chance."
    )

    def add_arguments(self, parser):
        job_params_arguments(parser, AuditShortcutsParams)
        parser.add_argument("--json", action="store_true", help="print the stored audit as JSON")

    def handle(self, *args, **o):
        if bool(o["dataset"]) == bool(o["testset"]):
            raise CommandError("give either --dataset or --testset")
        job = job_run_here(params=job_params_from_options(AuditShortcutsParams, o))
        audit = ShortcutAudit.objects.get(pk=job.result["audit_id"])
        if o["json"]:
            self.stdout.write(format_report(audit.result))
            return
        self.stdout.write("\n".join(audit_table_lines(audit.result)))
