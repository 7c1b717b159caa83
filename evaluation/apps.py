from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from core.job_registry import job_kinds_register
        from evaluation.services.job_handlers import HANDLERS

        job_kinds_register(HANDLERS)
