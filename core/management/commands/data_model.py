"""Print the project's data model as a Mermaid diagram (docs/architecture.md embeds it)."""

from django.apps import apps
from django.core.management.base import BaseCommand

PROJECT_APPS = ("core", "annotation", "testsets", "crowd", "retrieval", "negatives", "pairs", "evaluation")


def data_model_mermaid() -> str:
    """A Mermaid ``flowchart``: one box per model, grouped by app, and an arrow for each foreign
    key (and one-to-one) from the model that holds it to the model it points at."""
    lines = ["flowchart LR"]
    models = [m for label in PROJECT_APPS if label in apps.app_configs for m in apps.get_app_config(label).get_models()]
    names = {m: f"{m._meta.app_label}_{m.__name__}" for m in models}
    for label in PROJECT_APPS:
        members = [m for m in models if m._meta.app_label == label]
        if not members:
            continue
        lines.append(f"  subgraph {label}")
        lines += [f"    {names[m]}[{m.__name__}]" for m in members]
        lines.append("  end")
    for model in models:
        for field in model._meta.get_fields():
            if field.many_to_one or field.one_to_one and field.concrete:
                target = field.related_model
                if target in names and target is not model:
                    lines.append(f"  {names[model]} -->|{field.name}| {names[target]}")
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = "Print the data model (models of the project's apps and their foreign keys) as a Mermaid flowchart."

    def handle(self, *args, **options):
        self.stdout.write(data_model_mermaid(), ending="")
