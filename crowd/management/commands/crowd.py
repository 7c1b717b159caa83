import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset
from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from core.errors import UserError
from crowd.job_params import CrowdPublishParams, CrowdSyncParams
from crowd.models import CrowdBatch, CrowdProvider
from crowd.selectors import crowd_batch_status, crowd_cost_estimate
from crowd.services.batches import crowd_batch_create, crowd_batch_expire
from crowd.services.review import link_approvals_import


class Command(BaseCommand):
    help = "Crowd batches: create, cost, publish, sync, status, expire, import link approvals."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="a new batch (draft)")
        create.add_argument("--dataset", required=True)
        create.add_argument("--provider", required=True, choices=CrowdProvider.values)
        create.add_argument("--name", required=True)
        # Not --settings: manage.py takes that one (the Django settings module) from any command line.
        create.add_argument(
            "--provider-settings", default="{}", help="JSON object of provider settings (see docs/crowd.md)"
        )
        create.add_argument("--max-units", type=int, default=None)
        create.add_argument("--production", action="store_true", help="MTurk: real money (needs --confirm on publish)")
        for name in ("cost", "status", "expire"):
            sub.add_parser(name).add_argument("batch", type=int)
        job_params_arguments(sub.add_parser("sync"), CrowdSyncParams)
        job_params_arguments(sub.add_parser("publish"), CrowdPublishParams)
        approvals = sub.add_parser("approvals", help="import a link platform's approvals CSV")
        approvals.add_argument("batch", type=int)
        approvals.add_argument("path", type=Path)

    def handle(self, *args, **o):
        try:
            self.stdout.write(format_report(self._run(o)))
        except UserError as exc:
            raise CommandError(str(exc)) from exc

    def _run(self, o) -> dict:
        action = o["action"]
        if action == "create":
            try:
                settings = json.loads(o["provider_settings"])
            except ValueError as exc:
                raise CommandError(f"--provider-settings is not JSON: {exc}") from exc
            if not isinstance(settings, dict):
                raise CommandError("--provider-settings must be a JSON object")
            dataset = Dataset.objects.filter(name=o["dataset"]).first()
            if dataset is None:
                raise CommandError(f"no dataset {o['dataset']!r}")
            batch = crowd_batch_create(
                dataset=dataset,
                provider=o["provider"],
                name=o["name"],
                settings=settings,
                max_units=o["max_units"],
                production=o["production"],
            )
            return {"batch": batch.pk, "name": batch.name, "provider": batch.provider, "status": batch.status}
        batch_pk = o["batch_id"] if action in ("publish", "sync") else o["batch"]
        batch = CrowdBatch.objects.select_related("dataset").filter(pk=batch_pk).first()
        if batch is None:
            raise CommandError(f"no crowd batch {batch_pk}")
        if action == "cost":
            return crowd_cost_estimate(batch=batch).as_dict()
        if action == "status":
            return crowd_batch_status(batch=batch)
        if action == "expire":
            crowd_batch_expire(batch=batch)
            return crowd_batch_status(batch=batch)
        if action == "approvals":
            return link_approvals_import(batch=batch, path=o["path"])
        params_class = CrowdPublishParams if action == "publish" else CrowdSyncParams
        return job_run_here(params=job_params_from_options(params_class, o)).result
