from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from core.job_registry import JobParams
from testsets.formats.registry import FORMATS, readable_formats
from testsets.job_params import ImportHFTestsetParams, ImportTestsetParams

# The options of every readable format's import job, each declared by the job that takes it; a
# format refuses the others'.
OPTION_PARAMS: tuple[tuple[type[JobParams], tuple[str, ...]], ...] = (
    (ImportHFTestsetParams, ("dataset", "name")),
    (ImportTestsetParams, ("scores_path", "context_turns", "encoding")),
)


class Command(BaseCommand):
    help = (
        "Import a released test set: TSV (context turns, ground truth, false candidates) and its "
        "human_scores.jsonl as a dataset with scores; or (--format hf) a test set folder written by "
        "export_testset --format hf as a dataset and a frozen test set."
    )

    def add_arguments(self, parser):
        job_params_arguments(parser, ImportTestsetParams, names=["path"])
        parser.add_argument("--format", choices=readable_formats(), default="tsv")
        # None when not given: the chosen format's job takes its own default, and refuses the others' options
        for params, names in OPTION_PARAMS:
            job_params_arguments(parser, params, names=list(names), defaults=False)

    def handle(self, *args, **o):
        params = FORMATS[o["format"]].import_params
        takes = {p.name for p in params.command_params()}
        foreign = [name for _, names in OPTION_PARAMS for name in names if o[name] is not None and name not in takes]
        if foreign:
            others = [f for f in readable_formats() if foreign[0] in _names(FORMATS[f].import_params)]
            raise CommandError(
                f"{', '.join(_flag(name) for name in foreign)}: for the {' and '.join(others)} format only"
            )
        for p in params.command_params():
            if p.required and p.name != "path" and o.get(p.name) is None:
                raise CommandError(f"{_flag(p.name)} is required for the {o['format']} format")
        self.stdout.write(format_report(job_run_here(params=job_params_from_options(params, o)).result))


def _names(params: type[JobParams]) -> set[str]:
    return {p.name for p in params.command_params()}


def _flag(name: str) -> str:
    for params, _ in OPTION_PARAMS:
        if name in _names(params):
            return params.param_get(name).spec.option or "--" + name.replace("_", "-")
    return "--" + name.replace("_", "-")
