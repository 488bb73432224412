import hashlib
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _

from .exceptions import ApplicationError
from .health import Check, components_check
from .languages import TranslationProvenance, language_display_name, language_tag_normalize
from .models import InterfaceLanguage, ReaderLanguage, RoleChange, SignInAttempt, WorkerPing
from .roles import AnyUser, Role, user_has_role, user_roles_forget


def worker_ping_answer(*, token: str, requested_at: str) -> WorkerPing:
    """Record that a worker ran a ping task; repeated delivery of the same ping is harmless."""
    ping, _created = WorkerPing.objects.get_or_create(
        token=token,
        defaults={
            "requested_at": datetime.fromisoformat(requested_at),
            "answered_at": timezone.now(),
            "worker_hostname": socket.gethostname(),
        },
    )
    return ping


HEARTBEAT_KEEP = timedelta(days=1)


def worker_heartbeat_record() -> WorkerPing:
    """A ping answered at once (the beat entry's), keeping one day of them."""
    now = timezone.now()
    WorkerPing.objects.filter(answered_at__lt=now - HEARTBEAT_KEEP).delete()
    return WorkerPing.objects.create(
        token=f"heartbeat-{uuid.uuid4().hex}",
        requested_at=now,
        answered_at=now,
        worker_hostname=socket.gethostname(),
    )


def readiness_checks() -> list[Check]:
    """Database, cache, broker and a worker: what must work to serve and evaluate.

    Each component answers within HEALTH_CHECK_TIMEOUT_SECONDS or is reported as silent."""
    checks = components_check(("database", "cache", "broker"))
    max_age = settings.HEALTH_WORKER_MAX_AGE_SECONDS
    if not checks[0].ok:
        checks.append(Check("worker", False, "unknown: the database does not answer"))
        return checks
    last = WorkerPing.objects.order_by("-answered_at").values_list("answered_at", flat=True).first()
    if last is None:
        checks.append(Check("worker", False, "no worker has answered yet (is beat running?)"))
    else:
        age = (timezone.now() - last).total_seconds()
        detail = f"last heartbeat {age:.0f} s ago (limit {max_age} s)"
        checks.append(Check("worker", age <= max_age, detail))
    return checks


@transaction.atomic
def role_set(*, actor: AnyUser, user: User, role: Role, granted: bool) -> RoleChange | None:
    """Grant or withdraw one of the four platform roles, recording who, whom and when.

    Only platform role groups are touched; staff and superuser flags, passwords and other
    groups are outside a maintainer's reach. Returns None when nothing changed.
    """
    if not actor.is_authenticated or not user_has_role(actor, Role.MAINTAINER):
        raise ApplicationError(_("Only maintainers assign roles."))
    role = Role(role)
    if user.is_superuser:
        raise ApplicationError(_("A superuser holds every role; there is nothing to change."))
    group, _created = Group.objects.get_or_create(name=role.value)
    holds = user.groups.filter(pk=group.pk).exists()
    if holds == granted:
        return None
    if granted:
        user.groups.add(group)
    else:
        user.groups.remove(group)
    user_roles_forget(user)
    return RoleChange.objects.create(actor=actor, user=user, role=role.value, granted=granted)


def _account_key(login: str) -> str:
    return hashlib.sha256(login.strip().lower().encode()).hexdigest()


def sign_in_attempt_begin(*, login: str) -> SignInAttempt | None:
    """Count a password attempt at ``login`` before the password is checked; None when the
    account is locked (SIGN_IN_LOCKOUT_FAILURES attempts within SIGN_IN_LOCKOUT_SECONDS).

    The attempt is written and committed before the others are counted, and a right password
    forgets it (``sign_in_attempt_forget``): of simultaneous guesses the later ones see the
    earlier, so together they cannot slip under the limit. Deliberately not atomic: an
    uncommitted row would be invisible to the guesses racing it.
    """
    key = _account_key(login)
    now = timezone.now()
    window_start = now - timedelta(seconds=settings.SIGN_IN_LOCKOUT_SECONDS)
    SignInAttempt.objects.filter(attempted_at__lt=window_start).delete()
    attempt = SignInAttempt.objects.create(account_key=key, attempted_at=now)
    others = (
        SignInAttempt.objects.filter(account_key=key, attempted_at__gte=window_start)
        .exclude(pk=attempt.pk)
        .count()
    )
    if others >= settings.SIGN_IN_LOCKOUT_FAILURES:
        attempt.delete()
        return None
    return attempt


def sign_in_attempt_forget(*, attempt: SignInAttempt) -> None:
    """The password was right: this attempt does not count. The account's failures stay, so a
    guesser who also knows one right password cannot wipe them by signing in between."""
    SignInAttempt.objects.filter(pk=attempt.pk).delete()


def sign_in_attempts_clear(*, login: str) -> None:
    """The owner reset the password by email: the account's failures no longer count."""
    SignInAttempt.objects.filter(account_key=_account_key(login)).delete()


def reader_language_declare(*, user: User, language: str) -> ReaderLanguage:
    """Record that `user` reads `language` (normalised); declaring it again changes nothing."""
    try:
        tag = language_tag_normalize(language)
    except ValidationError as error:
        raise ApplicationError(error.messages[0]) from error
    declared, _created = ReaderLanguage.objects.get_or_create(user=user, language=tag)
    return declared


def reader_language_remove(*, user: User, language: str) -> None:
    """`user` no longer reads `language`; removing one never declared changes nothing."""
    ReaderLanguage.objects.filter(user=user, language=language).delete()


def user_reads_language(*, user: User, language: str) -> bool:
    """Whether `user` declared `language`, or a shorter tag it starts with (a reader of `pt`
    reads `pt-BR`). No default here: a translation's reviewer must have declared the language
    (rating queues, which do have one, use `core.selectors.reads_language_condition`)."""
    return ReaderLanguage.objects.filter(user=user).reading(language).exists()


@dataclass(frozen=True)
class ReviewRefusals:
    """What a refused review of a machine translation says, in the words of the thing reviewed
    (a scenario, a metric's text): whole sentences, each translated as written."""

    not_reviewer: Promise
    native: Promise
    already_reviewed: Promise


def translation_review_check(
    *,
    reviewer: User,
    provenance: str,
    language: str,
    refusals: ReviewRefusals,
    written_by_id: int | None = None,
) -> None:
    """Refuse (ApplicationError) a review of a translation unless it is a machine translation not
    yet reviewed, and `reviewer` is an expert reviewer who has declared they read `language` and
    did not write it (`written_by_id`: whoever pasted the machine translation in, when known). The
    one rule for every translated thing, so a scenario and a metric's text are vouched for alike."""
    if not user_has_role(reviewer, Role.EXPERT_REVIEWER):
        raise ApplicationError(str(refusals.not_reviewer))
    if provenance == TranslationProvenance.NATIVE:
        raise ApplicationError(str(refusals.native))
    if provenance == TranslationProvenance.MACHINE_REVIEWED:
        raise ApplicationError(str(refusals.already_reviewed))
    if written_by_id is not None and written_by_id == reviewer.pk:
        raise ApplicationError(
            _("You wrote this text: someone else who reads the language reviews it.")
        )
    if not user_reads_language(user=reviewer, language=language):
        raise ApplicationError(
            _(
                "Reviewing this translation needs a reader of %(language)s: declare that you "
                "read it, or leave the review to someone who does."
            )
            % {"language": language_display_name(language)}
        )


def interface_language_remember(*, user: User, language: str) -> bool:
    """Keep the site language `user` chose (one of settings.LANGUAGES) for the emails they get;
    False for a language the site does not speak (nothing stored)."""
    if language not in dict(settings.LANGUAGES):
        return False
    InterfaceLanguage.objects.update_or_create(user=user, defaults={"language": language})
    return True


def recipient_language(user: User | None) -> str:
    """The language to write to `user` in: the site language they last chose, else the
    site's default."""
    if user is None or user.pk is None:
        return settings.LANGUAGE_CODE
    chosen = InterfaceLanguage.objects.filter(user=user).values_list("language", flat=True).first()
    return chosen if chosen in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE
