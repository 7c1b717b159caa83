from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("evaluation.urls")),
    path("", include("annotation.urls")),
    path("", include("crowd.urls")),
    path("", include("pairs.urls")),
    path("", include("retrieval.urls")),
    path("", include("core.urls")),
]
