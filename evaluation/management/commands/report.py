import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Campaign
from evaluation.report_page import report_html
from evaluation.services.campaign_report import campaign_report_refresh


class Command(BaseCommand):
    help = (
        "A campaign's report: leaderboard, correlations with the human ranking (Table 3), RANDOM box plot "
        "(Figure 2) and the per-error-label breakdown, as self-contained HTML or JSON. Prints the report "
        "stored by the last campaign run; --recompute computes it again from the stored results first."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument("--format", choices=["html", "json"], default="html")
        parser.add_argument("--output", default=None, help="write to this file instead of standard output")
        parser.add_argument(
            "--recompute",
            action="store_true",
            help="recompute (and store) the report from the stored ratings, evaluations and RANDOM trials",
        )

    def handle(self, *args, **o):
        campaign = Campaign.objects.select_related("job").filter(name=o["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {o['campaign']!r}")
        if o["recompute"] or not campaign.report:
            campaign_report_refresh(campaign=campaign)
        text = report_html(campaign) if o["format"] == "html" else json.dumps(campaign.report, indent=2) + "\n"
        if o["output"]:
            Path(o["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {o['output']}")
        else:
            self.stdout.write(text, ending="")
