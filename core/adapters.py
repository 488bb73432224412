from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from django.contrib.auth.models import AbstractBaseUser, User
from django.forms import Form
from django.http import HttpRequest

from .models import SignInAttempt
from .roles import Role, user_add_roles
from .services import sign_in_attempt_begin, sign_in_attempt_forget, sign_in_attempts_clear


def _login(credentials: dict[str, Any]) -> str:
    return str(credentials.get("email", credentials.get("username", "")))


class AccountAdapter(DefaultAccountAdapter):
    """Every account created through sign-up is a Contributor; an account's lockout is kept
    in the database (``core.services.sign_in_attempt_begin``)."""

    _sign_in_attempt: SignInAttempt | None = None

    def save_user(self, request: HttpRequest, user: User, form: Form, commit: bool = True) -> User:
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            user_add_roles(user, [Role.CONTRIBUTOR])
        return user

    def pre_authenticate(self, request: HttpRequest, **credentials: Any) -> None:
        # allauth's per-address limit first: with its store unreachable this raises and the
        # attempt is refused (fails closed) before it could count against the account.
        super().pre_authenticate(request, **credentials)
        self._sign_in_attempt = sign_in_attempt_begin(login=_login(credentials))
        if self._sign_in_attempt is None:
            raise self.validation_error("too_many_login_attempts")

    def authenticate(self, request: HttpRequest, **credentials: Any) -> AbstractBaseUser | None:
        user = super().authenticate(request, **credentials)
        if user is not None and self._sign_in_attempt is not None:
            sign_in_attempt_forget(attempt=self._sign_in_attempt)
        return user

    def _delete_login_attempts_cached_email(self, request: HttpRequest, **credentials: Any) -> None:
        # allauth's hook after a password reset by email, which unlocks the account.
        super()._delete_login_attempts_cached_email(request, **credentials)
        sign_in_attempts_clear(login=_login(credentials))
