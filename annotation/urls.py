from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("annotate/", views.annotate_next, name="annotate-next"),
    path("annotate/choose/", views.annotate_choose, name="annotate-choose"),
    path("annotate/pause/", views.annotate_pause, name="annotate-pause"),
    path("annotate/u/<int:assignment_id>/", views.annotate_unit, name="annotate-unit"),
    path("annotate/u/<int:assignment_id>/correct/", views.annotate_correct, name="annotate-correct"),
    path("invite/<str:token>/", views.invite_accept_view, name="invite-accept"),
    path("dashboard/", views.dashboard_index, name="dashboard"),
    path("dashboard/<slug:name>/", views.dashboard_dataset, name="dashboard-dataset"),
    path("dashboard/<slug:name>/refresh", views.dashboard_refresh, name="dashboard-refresh"),
    path("dashboard/<slug:name>/open", views.dashboard_open, name="dashboard-open"),
    path("dashboard/<slug:name>/invite", views.dashboard_invite, name="dashboard-invite"),
    path(
        "dashboard/<slug:name>/invitations/<int:invitation_id>/revoke",
        views.dashboard_invitation_revoke,
        name="dashboard-invitation-revoke",
    ),
    path("dashboard/<slug:name>/members/add", views.dashboard_members_add, name="dashboard-members-add"),
    path(
        "dashboard/<slug:name>/members/<int:annotator_id>/remove",
        views.dashboard_members_remove,
        name="dashboard-members-remove",
    ),
    path("dashboard/<slug:name>/annotators/<int:annotator_id>/block", views.dashboard_block, name="dashboard-block"),
]
