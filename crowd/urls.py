from django.urls import path

from . import views

urlpatterns = [
    path("crowd/mturk/", views.crowd_mturk, name="crowd-mturk"),
    path("crowd/u/<str:token>/", views.crowd_unit, name="crowd-unit"),
    path("crowd/l/<str:token>/", views.crowd_link, name="crowd-link"),
    path("crowd/l/<str:token>/next/", views.crowd_link_next, name="crowd-link-next"),
]
