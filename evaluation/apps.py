from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from core.job_registry import job_kind_register
        from evaluation.services.job_handlers import HANDLERS

        for params, handler in HANDLERS.items():
            job_kind_register(params=params, handler=handler)
