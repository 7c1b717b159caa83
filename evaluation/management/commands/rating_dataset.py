from django.core.management.base import BaseCommand, CommandError

from core.errors import UserError
from evaluation.models import Generation
from evaluation.services.human_ratings import rating_dataset_create


class Command(BaseCommand):
    help = (
        'Open a "rate this response 1-5" dataset of systems\' generated responses for annotation '
        "(one unit per context, every system's response to it, and the reference)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="name of the new rating dataset")
        parser.add_argument(
            "--generation", type=int, action="append", default=[], help="generation id (repeat the option)"
        )
        parser.add_argument(
            "--dataset",
            help="instead of --generation: every finished generation that answered this dataset's contexts",
        )
        parser.add_argument("--annotators", type=int, default=5, help="annotators per response (default 5)")
        parser.add_argument("--no-reference", action="store_true", help="do not rate the reference response")

    def handle(self, *args, **o):
        ids = list(o["generation"])
        if o["dataset"]:
            ids += list(
                Generation.objects.filter(dataset__name=o["dataset"], status="succeeded").values_list("pk", flat=True)
            )
        if not ids:
            raise CommandError("name the generations: --generation ID (repeatable) or --dataset NAME")
        try:
            dataset = rating_dataset_create(
                name=o["name"],
                generation_ids=ids,
                annotators_per_item=o["annotators"],
                include_reference=not o["no_reference"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"rating dataset {dataset.name}: {dataset.questions.count()} units from {len(set(ids))} generation(s), "
            f"{dataset.annotators_per_item} annotators per response"
        )
