from django.apps import AppConfig


class NegativesConfig(AppConfig):
    name = "negatives"
    verbose_name = "Generated negatives"

    def ready(self) -> None:
        from core.job_registry import job_kinds_register
        from negatives.services.job_handlers import HANDLERS

        job_kinds_register(HANDLERS)
