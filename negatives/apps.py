from django.apps import AppConfig


class NegativesConfig(AppConfig):
    name = "negatives"
    verbose_name = "Generated negatives"

    def ready(self) -> None:
        from annotation.admin.dataset_tools import dataset_tool_register
        from core.job_registry import job_kinds_register
        from negatives.admin import DATASET_NEGATIVES_TOOL
        from negatives.services.job_handlers import HANDLERS

        job_kinds_register(HANDLERS)
        dataset_tool_register(DATASET_NEGATIVES_TOOL)
