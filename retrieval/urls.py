from django.urls import path

from . import views

urlpatterns = [
    path("dashboard/<slug:name>/pools/", views.pool_review, name="pool-review"),
]
