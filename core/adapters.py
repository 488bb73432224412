from allauth.account.adapter import DefaultAccountAdapter

from .roles import Role, user_add_roles


class AccountAdapter(DefaultAccountAdapter):
    """Every account created through sign-up is a Contributor."""

    def save_user(self, request, user, form, commit=True):
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            user_add_roles(user, [Role.CONTRIBUTOR])
        return user
