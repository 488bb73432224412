from allauth.account.adapter import DefaultAccountAdapter
from django.contrib.auth.models import User
from django.forms import Form
from django.http import HttpRequest

from .roles import Role, user_add_roles


class AccountAdapter(DefaultAccountAdapter):
    """Every account created through sign-up is a Contributor."""

    def save_user(self, request: HttpRequest, user: User, form: Form, commit: bool = True) -> User:
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            user_add_roles(user, [Role.CONTRIBUTOR])
        return user
