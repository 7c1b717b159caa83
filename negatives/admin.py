from django.contrib import admin

from annotation.admin.dataset_tools import DatasetTool
from annotation.models import Dataset
from core.admin.helpers import ReadOnlyAdmin, render_form, start_job
from negatives.demo_mlm import TOY_DEFAULT_NOTE, mlm_default_is_toy
from negatives.forms import GenerateNegativesForm
from negatives.models import QuestionGeneration


@admin.register(QuestionGeneration)
class QuestionGenerationAdmin(ReadOnlyAdmin):
    list_display = ["question_id", "setup", "outcome", "words", "selected", "negatives_added", "job_id", "updated_at"]
    list_filter = ["outcome", "question__dataset"]
    raw_id_fields = ["question", "job"]


def dataset_negatives_view(model_admin: admin.ModelAdmin, request, dataset: Dataset):
    """Generate negatives for a dataset: a page of the dataset admin (registered in apps.py)."""
    form = GenerateNegativesForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        return start_job(request, params=form.job_params(dataset=dataset.name))
    return render_form(
        request,
        model_admin,
        form=form,
        title=f"Generate negatives for {dataset.name}",
        intro="Each ground truth is manipulated with a masked language model (Park et al., NAACL 2021): the words "
        "that the context makes likely are replaced by what the model predicts without the context. The "
        "negatives join the questions' pools as candidates of source 'mlm_negative' and are scored by annotators "
        "like the retrieved ones, so a manipulated response that is still a good answer is filtered out. "
        "Questions finished with the same model and settings are skipped when the job runs again."
        + (" " + TOY_DEFAULT_NOTE if mlm_default_is_toy() else ""),
    )


DATASET_NEGATIVES_TOOL = DatasetTool(slug="negatives", label="generated negatives", view=dataset_negatives_view)
