from django.core.management.base import BaseCommand, CommandError

from core.commands import job_execute_here, job_params_arguments
from core.errors import UserError
from evaluation.job_params import CampaignParams
from evaluation.models import Campaign
from evaluation.services.campaign_setup import campaign_create
from evaluation.services.campaigns import campaign_start


class Command(BaseCommand):
    help = (
        "Evaluation campaigns: `create` one (systems ranked on a test set and optionally a pair set, their "
        "generations' human ratings, a repository for RANDOM), `run` it (CHOSEN and pair evaluations, RANDOM "
        "trials, the report; "
        "here, or --background for the gpu queue). Read the report at /campaigns/NAME/ or with `report`."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create")
        create.add_argument("name")
        create.add_argument(
            "--testset",
            "--release",
            dest="testset",
            help="test set whose CHOSEN accuracy ranks the systems (--release: an alias)",
        )
        create.add_argument("--system", action="append", default=[], help="system name (repeat the option)")
        create.add_argument(
            "--generation", type=int, action="append", default=[], help="generation id, one per system (repeat)"
        )
        create.add_argument("--repository", help="repository the RANDOM false candidates are drawn from")
        create.add_argument("--pair-set", help="contrastive pairs whose correctness ranks the systems too")
        create.add_argument("--random-trials", type=int, default=100)
        create.add_argument("--seed", type=int, default=0)
        create.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the CIs")
        run = sub.add_parser("run")
        run.add_argument("name")
        run.add_argument("--background", action="store_true", help="enqueue the job for a worker instead")
        job_params_arguments(run, CampaignParams)

    def handle(self, *args, **o):
        try:
            if o["action"] == "create":
                campaign = campaign_create(
                    name=o["name"],
                    testset_name=o["testset"],
                    system_names=o["system"],
                    generation_ids=o["generation"],
                    repository_name=o["repository"],
                    pair_set_name=o["pair_set"],
                    random_trials=o["random_trials"],
                    seed=o["seed"],
                    bootstrap_resamples=o["resamples"],
                )
                self.stdout.write(f"campaign {campaign.name} created")
                return
            campaign = Campaign.objects.filter(name=o["name"]).first()
            if campaign is None:
                raise UserError(f"no campaign {o['name']!r}")
            job = campaign_start(campaign=campaign, enqueue=o["background"], device=o["device"])
        except UserError as exc:
            raise CommandError(str(exc)) from None
        if o["background"]:
            self.stdout.write(f"campaign {campaign.name}: job #{job.pk} sent to the workers")
            return
        job = job_execute_here(job=job)
        self.stdout.write(f"campaign {campaign.name}: report ready at /campaigns/{campaign.name}/")
