"""Demo accounts, one per role. Seeding is idempotent and never overwrites what users changed."""

from dataclasses import dataclass

from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction

from .roles import Role, user_add_roles

DEMO_PASSWORD = "impactbench-demo"  # noqa: S105 - published demo credential, local only
# The domain of the demo seed's simulated panel members (clinicians, users): created only by the
# seed, they never sign in, so a rating by one of them is a seeded stand-in and figures built on
# it say so (`review.selectors.seeded_panel_rater_ids`).
SEEDED_PANEL_DOMAIN = "panel.demo.impactbench.org"


def seeded_panel_email(local_part: str) -> str:
    return f"{local_part}@{SEEDED_PANEL_DOMAIN}"


@dataclass(frozen=True)
class DemoAccount:
    email: str
    first_name: str
    roles: tuple[Role, ...]


DEMO_ACCOUNTS: list[DemoAccount] = [
    DemoAccount("contributor@demo.impactbench.org", "Casey", (Role.CONTRIBUTOR,)),
    DemoAccount("researcher@demo.impactbench.org", "Riley", (Role.CONTRIBUTOR, Role.RESEARCHER)),
    DemoAccount("reviewer@demo.impactbench.org", "Robin", (Role.CONTRIBUTOR, Role.EXPERT_REVIEWER)),
    DemoAccount("maintainer@demo.impactbench.org", "Morgan", (Role.CONTRIBUTOR, Role.MAINTAINER)),
]


@transaction.atomic
def demo_accounts_seed() -> list[str]:
    """Create missing demo accounts with a verified email; existing accounts keep their data."""
    User = get_user_model()
    created: list[str] = []
    password = None  # hashed once for all of them: hashing is deliberately slow (~0.5 s)
    for account in DEMO_ACCOUNTS:
        user = User.objects.filter(email__iexact=account.email).first()
        if user is None:
            password = password or make_password(DEMO_PASSWORD)
            user = User(username=account.email, email=account.email, first_name=account.first_name)
            user.password = password
            user.save()
            created.append(account.email)
        user_add_roles(user, account.roles)
        EmailAddress.objects.get_or_create(
            user=user, email=account.email, defaults={"verified": True, "primary": True}
        )
    return created
