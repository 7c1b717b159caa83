from django.urls import path

from . import views

# Under their own prefix: "dashboard/<dataset name>/" belongs to datasets (any name, "campaigns" too).
urlpatterns = [
    path("campaigns/", views.campaign_list, name="campaign-list"),
    # before campaigns/<name>/: "new" is no campaign name (services.campaign_setup.RESERVED_NAMES)
    path("campaigns/new/", views.campaign_new, name="campaign-new"),
    path("campaigns/<slug:name>/", views.campaign_report, name="campaign-report"),
    path("campaigns/<slug:name>/report.json", views.campaign_report_json, name="campaign-report-json"),
    path("campaigns/<slug:name>/recompute", views.campaign_recompute, name="campaign-recompute"),
]
