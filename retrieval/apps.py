from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        from annotation.admin.dataset_tools import dataset_tool_register, question_link_register
        from annotation.services.demo import demo_step_register
        from annotation.workspace import workspace_step_register
        from core.job_registry import job_kinds_register
        from retrieval.admin import DATASET_POOLS_TOOL, POOL_REVIEW_LINK
        from retrieval.services.demo import demo_repository_and_pools
        from retrieval.services.job_handlers import HANDLERS, SHARD_HANDLERS
        from retrieval.workspace import POOLS_STEP

        job_kinds_register(HANDLERS, shard_handlers=SHARD_HANDLERS)
        dataset_tool_register(DATASET_POOLS_TOOL)
        question_link_register(POOL_REVIEW_LINK)
        demo_step_register(demo_repository_and_pools)
        workspace_step_register(POOLS_STEP)
