"""Accounts for site admins (create a user, hand out a set-password link) and the page where
a user sets their password from that link (Django's own password-reset views and token)."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UsernameField
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from trajectories.access import access_project
from trajectories.accounts import (
    check_new_username,
    check_site_admin,
    do_create_user,
    password_link_parts,
)
from trajectories.models import Role
from trajectories.validation import InvalidData

USERS_PER_PAGE = 50


class NewUserForm(forms.ModelForm):
    """A new account: its name and contact; from a project's Members page, also the project
    and the role it joins with."""

    project = forms.IntegerField(required=False, widget=forms.HiddenInput)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR, required=False)

    class Meta:
        model = get_user_model()
        fields = ("username", "first_name", "last_name", "email")
        field_classes = {"username": UsernameField}

    def clean_username(self) -> str:
        try:
            return check_new_username(self.cleaned_data["username"])
        except InvalidData as exc:
            raise ValidationError(str(exc).removeprefix("username: ")) from None


def _link_page(request: HttpRequest, user, *, created: bool, project=None) -> HttpResponse:
    uidb64, token = password_link_parts(user, request.user)
    # The token goes in the query string, which the access logs leave out (gunicorn.conf.py,
    # the proxy's log format in docker-compose.yml); the path alone is logged.
    path = reverse("set-password-link") + "?" + urlencode({"uid": uidb64, "token": token})
    expires = timezone.now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    context = {
        "account": user,
        "link": request.build_absolute_uri(path),
        "expires": expires,
        "created": created,
        "project": project,
        "role": project.memberships.get(user=user).get_role_display() if project else "",
    }
    return render(request, "frontend/user_link.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def user_list(request: HttpRequest) -> HttpResponse:
    """Site admins: everyone's account, and a form to create one."""
    check_site_admin(request.user)
    form = NewUserForm(request.POST or None, initial=request.GET.dict())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        project = None
        if data["project"] is not None:
            project = access_project(request.user, data["project"], roles=(Role.ADMIN,))
        try:
            user = do_create_user(
                request.user,
                data["username"],
                email=data["email"],
                first_name=data["first_name"],
                last_name=data["last_name"],
                project=project,
                role=data["role"] or Role.ANNOTATOR,
            )
        except InvalidData as exc:
            form.add_error(None, str(exc))
        else:
            return _link_page(request, user, created=True, project=project)
    search = request.GET.get("q", "").strip()
    users = get_user_model().objects.annotate(project_count=Count("memberships"))
    if search:
        users = users.filter(
            Q(username__icontains=search)
            | Q(first_name__icontains=search)
            | Q(last_name__icontains=search)
            | Q(email__icontains=search)
        )
    page = Paginator(users.order_by("username"), USERS_PER_PAGE).get_page(request.GET.get("page"))
    asked = request.POST.get("project") or request.GET.get("project")
    joining = access_project(request.user, asked, roles=(Role.ADMIN,)) if asked else None
    context = {"form": form, "page": page, "search": search, "joining": joining}
    return render(request, "frontend/user_list.html", context)


@login_required
@require_POST
def user_password_link(request: HttpRequest, user_id: int) -> HttpResponse:
    """Site admins: a new one-time set-password link for someone (a forgotten password)."""
    check_site_admin(request.user)
    user = get_object_or_404(get_user_model(), pk=user_id)
    try:
        return _link_page(request, user, created=False)
    except InvalidData as exc:
        return render(request, "frontend/user_link.html", {"account": user, "error": str(exc)})


# The user's side: Django's password-reset views, with our pages. The form's address holds no
# token: Django's view finds it in the session (its own "set-password" step, here "set").
SESSION_STEP = "set"
set_password = auth_views.PasswordResetConfirmView.as_view(
    template_name="frontend/set_password.html",
    success_url=reverse_lazy("set-password-done"),
    reset_url_token=SESSION_STEP,
)


@never_cache
@require_GET
def set_password_link(request: HttpRequest) -> HttpResponse:
    """The link handed out, ``/set-password/?uid=…&token=…``: as Django's view does with a token
    in its path, a good token is kept in the session and the browser sent on to the form at an
    address without it (no address bar, history or Referer holds it); a spent or mistyped link
    is sent to this address without its query, which says the link no longer works."""
    uidb64, token = request.GET.get("uid", ""), request.GET.get("token", "")
    user = auth_views.PasswordResetConfirmView().get_user(uidb64)
    if user is not None and default_token_generator.check_token(user, token):
        request.session[auth_views.INTERNAL_RESET_SESSION_TOKEN] = token
        return redirect("set-password", uidb64)
    if request.GET:
        return redirect("set-password-link")
    return render(request, "frontend/set_password.html", {"validlink": False})


set_password_done = auth_views.PasswordResetCompleteView.as_view(
    template_name="frontend/set_password_done.html"
)
