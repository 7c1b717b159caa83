from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    verbose_name = "Crowd work"

    def ready(self) -> None:
        from annotation.annotator_pay import annotator_pay_register
        from annotation.services.annotators_admin import annotator_platform_block_register
        from core.job_registry import job_kinds_register
        from crowd.providers.internal import InternalProvider
        from crowd.providers.link import LinkProvider
        from crowd.providers.mturk import MTurkProvider
        from crowd.providers.prolific import ProlificProvider
        from crowd.providers.registry import providers_register
        from crowd.selectors import crowd_pay_lines
        from crowd.services.job_handlers import HANDLERS
        from crowd.services.workers import crowd_worker_platforms_block

        providers_register(InternalProvider, MTurkProvider, ProlificProvider, LinkProvider)
        job_kinds_register(HANDLERS)
        annotator_platform_block_register(crowd_worker_platforms_block)
        annotator_pay_register(crowd_pay_lines)
