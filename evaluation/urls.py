from django.urls import path

from . import views

# Included before annotation.urls: "dashboard/<dataset name>/" would otherwise take "campaigns".
urlpatterns = [
    path("dashboard/campaigns/", views.campaign_list, name="campaign-list"),
    path("dashboard/campaigns/<slug:name>/", views.campaign_report, name="campaign-report"),
    path("dashboard/campaigns/<slug:name>/report.json", views.campaign_report_json, name="campaign-report-json"),
    path("dashboard/campaigns/<slug:name>/recompute", views.campaign_recompute, name="campaign-recompute"),
]
