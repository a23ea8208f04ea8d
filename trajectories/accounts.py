"""People's accounts: who is a site admin, finding a user by name, creating one, and the
one-time link with which a new user sets their password.

Site admins (staff) create accounts; project admins add existing accounts to their projects.
No email server is assumed: the set-password link is shown to the site admin, who passes it on.
It is Django's password-reset token (``PasswordResetTokenGenerator``): it stops working once
the password is set (the token is computed from the password hash and the last login) and
after ``PASSWORD_RESET_TIMEOUT``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from . import events
from .access import AccessDenied
from .models import Project, Role
from .services import do_add_membership, record_event
from .validation import InvalidData, check_choice


def is_site_admin(user) -> bool:
    return user.is_authenticated and (user.is_staff or user.is_superuser)


def check_site_admin(user) -> None:
    if not is_site_admin(user):
        raise AccessDenied("Only a site admin can create users or their set-password links")


class UnknownUser(InvalidData):
    """No active user has the name; ``suggestion`` is one whose name differs only in case."""

    def __init__(self, username: str, suggestion: str = "") -> None:
        super().__init__(f"username: no user named {username!r}")
        self.username = username
        self.suggestion = suggestion


def user_named(username: str):
    """An active user by name, for adding to a project."""
    username = username.strip()
    users = get_user_model().objects.filter(is_active=True)
    found = users.filter(username=username).first()
    if found is None:
        alike = users.filter(username__iexact=username).values_list("username", flat=True)
        raise UnknownUser(username, alike.first() or "")
    return found


def check_new_username(username: str) -> str:
    """The name, stripped, if no account has it in any letter case."""
    username = username.strip()
    taken = (
        get_user_model()
        .objects.filter(username__iexact=username)
        .values_list("username", flat=True)
        .first()
    )
    if taken is not None:
        raise InvalidData(f"username: there is already a user named {taken!r}")
    return username


def do_create_user(
    actor,
    username: str,
    *,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    project: Project | None = None,
    role: str = "",
) -> AbstractBaseUser:
    """A site admin creates an account without a password (the user sets it through
    :func:`password_link_parts`), and adds it to ``project`` with ``role`` when given."""
    check_site_admin(actor)
    if project is not None:
        check_choice(role, Role.values, "role")
    user = get_user_model()(
        username=check_new_username(username),
        email=email.strip(),
        first_name=first_name.strip(),
        last_name=last_name.strip(),
    )
    user.set_unusable_password()
    try:
        user.full_clean()
    except ValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        raise InvalidData(f"{field}: {' '.join(messages)}") from None
    with transaction.atomic(durable=True):
        user.save()
        record_event(
            events.USER_CREATED,
            actor=actor,
            obj=user,
            after={"username": user.get_username(), "email": user.email},
        )
    if project is not None:
        # Its own recorded change (membership.set), as when a project admin adds someone.
        do_add_membership(project, user, role, actor)
    return user


def password_link_parts(user, actor) -> tuple[str, str]:
    """(uidb64, token) of a set-password link for ``user``, for a site admin to pass on;
    recorded, so that who handed out a way into an account is known."""
    check_site_admin(actor)
    if not user.is_active:
        raise InvalidData(f"user: {user.get_username()}'s account is deactivated")
    record_event(
        events.PASSWORD_LINK_CREATED,
        actor=actor,
        obj=user,
        after={"username": user.get_username()},
    )
    return urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)
