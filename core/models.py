from django.conf import settings
from django.db import models
from django.db.models import Expression, ExpressionWrapper, F, Q, Value
from django.db.models.functions import Concat

from .languages import LANGUAGE_TAG_MAX_LENGTH, validate_language_tag
from .roles import Role


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class WorkerPing(models.Model):
    """Written by a Celery worker on request: proof that background work really runs."""

    token = models.CharField(max_length=64, unique=True)
    requested_at = models.DateTimeField()
    answered_at = models.DateTimeField()
    worker_hostname = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["-answered_at"]

    def __str__(self) -> str:
        return f"ping {self.token} by {self.worker_hostname or 'worker'}"


class RoleChange(models.Model):
    """One grant or withdrawal of a platform role: who did it, to whom, when. Never edited."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="role_changes_made"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="role_changes"
    )
    role = models.CharField(max_length=32, choices=[(role.value, role.value) for role in Role])
    granted = models.BooleanField(help_text="True for a grant, False for a withdrawal.")
    changed_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-changed_at", "-pk"]

    def __str__(self) -> str:
        verb = "granted" if self.granted else "withdrew"
        return f"{self.actor} {verb} {self.role} for {self.user}"


class StoredPage(models.Model):
    """A public page or API answer rendered ahead of any request (`core.page_store`), served
    when a request's page key matches (`core.pagecache`). The key holds the published stamp,
    so a page is never served once what it shows may have changed."""

    key = models.CharField(max_length=200, unique=True)
    stamp = models.CharField(max_length=32, db_index=True)
    content = models.BinaryField()
    headers = models.JSONField(default=dict)
    rendered_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key


class SignInAttempt(models.Model):
    """One password sign-in counted against its account's lockout (``sign_in_attempt_begin``).

    Kept in the database, not the cache: a cache restarted empty must not unlock an account
    under attack. The account is named by a digest of the address typed, so attempts at
    addresses nobody owns leave no address behind; rows older than the lockout window are
    deleted as new attempts arrive."""

    account_key = models.CharField(max_length=64)
    attempted_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["account_key", "attempted_at"])]

    def __str__(self) -> str:
        return f"sign-in attempt at {self.attempted_at:%Y-%m-%d %H:%M:%S}"


class ReaderLanguageQuerySet(models.QuerySet):
    def reading(self, language: "str | Expression | F") -> "ReaderLanguageQuerySet":
        """Declarations under which text in `language` is read: the tag itself, or a shorter
        tag it starts with (a reader of `pt` reads `pt-BR`, of `zh-Hans` reads `zh-Hans-CN`:
        RFC 4647's basic filtering). `language` may be an expression such as an OuterRef to a
        rated item's column, so a claim routes by language inside its one query."""
        # Wrapped so lookups (startswith) know it is text even when it is an outer reference.
        text_language = ExpressionWrapper(
            Value(language) if isinstance(language, str) else language,
            output_field=models.CharField(),
        )
        return self.alias(text_language=text_language).filter(
            Q(language=F("text_language"))
            | Q(text_language__startswith=Concat(F("language"), Value("-")))
        )


class ReaderLanguage(models.Model):
    """A language a person has declared they read: a reviewer of a machine translation must
    read its language (`evaluations.services.translation.scenario_translation_review`), and a
    rater is given only queue items in a language they read (`review`)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reader_languages"
    )
    language = models.CharField(
        max_length=LANGUAGE_TAG_MAX_LENGTH,
        validators=[validate_language_tag],
        help_text="BCP 47 tag, e.g. es, pt-BR.",
    )
    declared_at = models.DateTimeField(auto_now_add=True)

    objects = ReaderLanguageQuerySet.as_manager()

    class Meta:
        ordering = ["user", "language"]
        constraints = [
            models.UniqueConstraint(fields=["user", "language"], name="reader_language_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} reads {self.language}"


class InterfaceLanguage(models.Model):
    """The language a signed-in person last chose for the site (the footer's switch): emails
    to them are written in it, as they read the site."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="interface_language"
    )
    language = models.CharField(max_length=LANGUAGE_TAG_MAX_LENGTH)
    chosen_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} reads the site in {self.language}"
