from django.contrib.auth import views as auth_views
from django.urls import path

from . import accounts, views

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="frontend/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.project_list, name="project-list"),
    path("users/", accounts.user_list, name="user-list"),
    path(
        "users/<int:user_id>/password-link/",
        accounts.user_password_link,
        name="user-password-link",
    ),
    path("set-password/", accounts.set_password_link, name="set-password-link"),
    path(
        "set-password/<uidb64>/set/",
        accounts.set_password,
        {"token": accounts.SESSION_STEP},
        name="set-password",
    ),
    path("set-password/done/", accounts.set_password_done, name="set-password-done"),
]
