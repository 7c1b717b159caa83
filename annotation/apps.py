from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation and curation"

    def ready(self) -> None:
        from annotation.services.job_handlers import HANDLERS
        from annotation.workspace import workspace_step_register
        from annotation.workspace_steps import STEPS
        from core.job_registry import job_kinds_register

        job_kinds_register(HANDLERS)
        for step in STEPS:
            workspace_step_register(step)
