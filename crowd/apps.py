from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    verbose_name = "Crowd work"

    def ready(self) -> None:
        from annotation.annotator_pay import annotator_pay_register
        from annotation.services.annotators_admin import annotator_platform_block_register
        from core.job_registry import job_kinds_register
        from crowd.selectors import crowd_pay_lines
        from crowd.services.job_handlers import HANDLERS
        from crowd.services.workers import crowd_worker_platforms_block

        job_kinds_register(HANDLERS)
        annotator_platform_block_register(crowd_worker_platforms_block)
        annotator_pay_register(crowd_pay_lines)
