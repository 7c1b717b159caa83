from django.apps import AppConfig


class NegativesConfig(AppConfig):
    name = "negatives"
    verbose_name = "Generated negatives"

    def ready(self) -> None:
        from annotation.admin.dataset_tools import dataset_tool_register
        from annotation.services.demo import demo_model_step_register
        from annotation.workspace import workspace_step_register
        from core.job_registry import job_kinds_register
        from negatives.admin import DATASET_NEGATIVES_TOOL
        from negatives.services.demo import demo_masked_lm
        from negatives.services.job_handlers import HANDLERS, SHARD_HANDLERS
        from negatives.workspace import NEGATIVES_STEP

        job_kinds_register(HANDLERS, shard_handlers=SHARD_HANDLERS)
        dataset_tool_register(DATASET_NEGATIVES_TOOL)
        demo_model_step_register(demo_masked_lm)
        workspace_step_register(NEGATIVES_STEP)
