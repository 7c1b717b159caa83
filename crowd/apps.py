from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    verbose_name = "Crowd work"

    def ready(self) -> None:
        from annotation.services.annotators_admin import annotator_platform_block_register
        from core.job_registry import job_kinds_register
        from crowd.services.job_handlers import HANDLERS
        from crowd.services.workers import crowd_worker_platforms_block

        job_kinds_register(HANDLERS)
        annotator_platform_block_register(crowd_worker_platforms_block)
