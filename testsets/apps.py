from django.apps import AppConfig


class TestsetsConfig(AppConfig):
    name = "testsets"
    verbose_name = "Test sets"

    def ready(self) -> None:
        from annotation.admin.dataset_tools import dataset_list_page_register, dataset_tool_register
        from annotation.services.demo import demo_step_register
        from annotation.views.home import home_list_register
        from annotation.workspace import workspace_step_register
        from annotation.workspace_steps import dataset_import_kind_register
        from core.job_registry import job_kinds_register
        from testsets.admin import AUDIT_TOOL, BUILD_TOOL, IMPORT_PAGE
        from testsets.job_params import ImportHFTestsetParams, ImportTestsetParams
        from testsets.selectors import testsets_recent
        from testsets.services.demo import demo_annotated_testset
        from testsets.services.job_handlers import HANDLERS
        from testsets.workspace import RELEASES_STEP, SHORTCUTS_STEP

        job_kinds_register(HANDLERS)
        dataset_tool_register(BUILD_TOOL)
        dataset_tool_register(AUDIT_TOOL)
        dataset_list_page_register(IMPORT_PAGE)
        demo_step_register(demo_annotated_testset)
        workspace_step_register(RELEASES_STEP)
        workspace_step_register(SHORTCUTS_STEP)
        dataset_import_kind_register(ImportTestsetParams.kind)
        dataset_import_kind_register(ImportHFTestsetParams.kind)
        home_list_register("testsets", permission="testsets.view_testset", rows=testsets_recent)
