"""The demo seed's simulated panel of three clinicians, shared by the seeded demo queues that
need expert ratings (rubric consensus, conversation realism).

They are stand-ins, not people: their accounts have no usable password and an address on the
seeded panel domain (`core.demo.SEEDED_PANEL_DOMAIN`), by which figures built on their ratings
are marked as seeded.
"""

from django.contrib.auth import get_user_model

from core.demo import seeded_panel_email
from core.roles import Role, user_add_roles

DEMO_PANEL = [
    (seeded_panel_email("panel-1"), "Demo panel clinician 1"),
    (seeded_panel_email("panel-2"), "Demo panel clinician 2"),
    (seeded_panel_email("panel-3"), "Demo panel clinician 3"),
]


def demo_panel_raters() -> list:
    """The three reviewers, created when missing; they cannot sign in (no usable password)."""
    User = get_user_model()
    raters = []
    for email, name in DEMO_PANEL:
        user = User.objects.filter(email__iexact=email).first()
        if user is None:
            user = User(username=email, email=email, first_name=name)
            user.set_unusable_password()
            user.save()
        user_add_roles(user, (Role.EXPERT_REVIEWER,))
        raters.append(user)
    return raters
