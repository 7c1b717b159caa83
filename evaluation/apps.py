from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from annotation.services.demo import demo_model_step_register, demo_step_register
        from annotation.workspace import workspace_step_register
        from core.job_registry import job_kinds_register
        from evaluation.services.demo import demo_baseline_system
        from evaluation.services.demo_model import demo_causal_system
        from evaluation.services.job_handlers import HANDLERS, SHARD_HANDLERS
        from evaluation.shortcut_baseline import CandidateOnlyLM
        from evaluation.workspace import CAMPAIGNS_STEP, EVALUATIONS_STEP
        from testsets.shortcuts.baselines import shortcut_baseline_register

        job_kinds_register(HANDLERS, shard_handlers=SHARD_HANDLERS)
        demo_step_register(demo_baseline_system)
        demo_model_step_register(demo_causal_system)
        workspace_step_register(EVALUATIONS_STEP)
        workspace_step_register(CAMPAIGNS_STEP)
        shortcut_baseline_register(CandidateOnlyLM)
