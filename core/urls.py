from django.urls import path

from . import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    # browsers ask every site for /favicon.ico, whatever the page links (the admin's pages link none)
    path("favicon.ico", views.favicon, name="favicon"),
    path("jobs/", views.job_list, name="job-list"),
    path("jobs/<int:job_id>/", views.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/status.json", views.job_status_json, name="job-status-json"),
    path("jobs/<int:job_id>/cancel", views.job_cancel_view, name="job-cancel"),
    path("jobs/<int:job_id>/retry", views.job_retry_view, name="job-retry"),
]
