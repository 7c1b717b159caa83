from django.urls import path

from . import views

urlpatterns = [
    path("pairs/", views.pair_sets, name="pairs"),
    path("pairs/<slug:name>/review/", views.pair_review_page, name="pairs-review"),
    path("pairs/<slug:name>/review/<int:pair_id>/", views.pair_review_submit, name="pairs-review-submit"),
]
