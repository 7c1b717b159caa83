from django.apps import AppConfig


class PairsConfig(AppConfig):
    name = "pairs"
    verbose_name = "Contrastive response pairs"

    def ready(self) -> None:
        from annotation.admin.dataset_tools import dataset_tool_register
        from annotation.workspace import workspace_step_register
        from core.job_registry import job_kinds_register
        from pairs.admin import DATASET_PAIRS_TOOL
        from pairs.services.job_handlers import HANDLERS
        from pairs.workspace import PAIRS_STEP

        job_kinds_register(HANDLERS)
        dataset_tool_register(DATASET_PAIRS_TOOL)
        workspace_step_register(PAIRS_STEP)
