from .annotate import annotate_next, annotate_pause, annotate_unit
from .jobs import healthz, home, job_cancel_view, job_detail, job_list, job_status_json

__all__ = [
    "annotate_next",
    "annotate_pause",
    "annotate_unit",
    "healthz",
    "home",
    "job_cancel_view",
    "job_detail",
    "job_list",
    "job_status_json",
]
