"""What one imported rubric item becomes, and the checks both file formats share."""

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from core.countries import country_code_normalize
from core.languages import DEFAULT_LANGUAGE, language_tag_normalize, language_tag_problem
from core.validators import text_length_problem

from ...models import Acuity, CriterionOrigin, Population, RubricDimension
from ...scoring import MAX_POINTS, MIN_POINTS

MESSAGE_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class RubricCriterionCandidate:
    text: str
    points: int
    dimension: str
    tags: tuple[str, ...] = ()
    country: str = ""


@dataclass(frozen=True)
class RubricItemCandidate:
    line: int
    key: str
    title: str
    messages: list[dict]
    acuity: str
    population: str
    language: str
    source: str
    criteria: tuple[RubricCriterionCandidate, ...]
    origin: str = CriterionOrigin.PLATFORM
    source_format: str = "impactbench"
    external_id: str = ""
    metadata: dict = field(default_factory=dict)
    country: str = ""


def _fold(text: str) -> str:
    """Spellings that mean the same value: case, hyphens, spaces, underscores."""
    return " ".join(text.casefold().replace("_", " ").replace("-", " ").split())


def choice_lookup(choices: type) -> dict[str, str]:
    """Accept the stored value, the label, and spellings with hyphens or spaces."""
    lookup: dict[str, str] = {}
    for value, label in choices.choices:
        for alias in (value, str(label)):
            lookup[_fold(alias)] = value
    return lookup


ACUITY = choice_lookup(Acuity)
POPULATION = choice_lookup(Population)


class DimensionVocabulary:
    """The dimension table read once per import: slug or name, in any spelling, to a slug."""

    def __init__(self) -> None:
        rows = list(RubricDimension.objects.values_list("slug", "name"))
        self.slugs = [slug for slug, _name in rows]
        self.lookup = {}
        for slug, name in rows:
            self.lookup[_fold(slug)] = slug
            self.lookup[_fold(name)] = slug

    def get(self, raw: str) -> str | None:
        return self.lookup.get(_fold(raw))

    def unknown(self, position: int, raw: str) -> str:
        return _(
            'criterion %(position)s has unknown dimension "%(value)s": use one of %(valid)s'
        ) % {
            "position": position,
            "value": raw,
            "valid": ", ".join(self.slugs),
        }


def text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def messages_validate(raw: Any, reasons: list[str], *, allow_system: bool = False) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        reasons.append(_("messages must be a non-empty list of {role, content}"))
        return []
    roles = ("system", *MESSAGE_ROLES) if allow_system else MESSAGE_ROLES
    messages = []
    for position, message in enumerate(raw, start=1):
        if not isinstance(message, dict):
            reasons.append(_("message %(position)s is not an object") % {"position": position})
            continue
        role = text(message.get("role")).casefold()
        content = message.get("content")
        if role not in roles:
            reasons.append(
                _('message %(position)s has role "%(role)s": use %(items)s')
                % {"position": position, "role": role, "items": " or ".join(roles)}
            )
        if not text(content):
            reasons.append(_("message %(position)s has no content") % {"position": position})
        if problem := text_length_problem(
            content, what=_("message %(position)s") % {"position": position}
        ):
            reasons.append(problem)
        # Content is kept exactly as written: an export must give back the same conversation.
        messages.append({"role": role, "content": content if isinstance(content, str) else ""})
    if messages and messages[-1]["role"] != "user":
        reasons.append(_("the last message must be the user's (the reply to it is graded)"))
    return messages


def row_language(raw: Any, reasons: list[str]) -> str:
    """A row's language tag in its standard spelling (`PT_br` → `pt-BR`); a row without one is
    English, as every benchmark row was before languages were recorded."""
    tag = text(raw)
    if not tag:
        return DEFAULT_LANGUAGE
    if problem := language_tag_problem(tag):
        reasons.append(problem)
        return DEFAULT_LANGUAGE
    return language_tag_normalize(tag)


def row_country(raw: Any, reasons: list[str], *, what: str = "") -> str:
    """A row's or criterion's country code in capitals (`es` → `ES`); blank when it names none."""
    code = text(raw)
    if not code:
        return ""
    # Translators: a rubric item's country field, in "country: <why the code was refused>".
    what = what or _("country")
    try:
        return country_code_normalize(code)
    except ValidationError as error:
        reasons.append(_("%(what)s: %(error)s") % {"what": what, "error": error.messages[0]})
        return ""


def tagged(tags: Any, prefix: str) -> str | None:
    """The value of the first `prefix…` tag (`country:ES` → `ES`), None without one."""
    if not isinstance(tags, list):
        return None
    return next(
        (t[len(prefix) :] for t in tags if isinstance(t, str) and t.startswith(prefix)), None
    )


def points_validate(position: int, points: Any, reasons: list[str]) -> int | None:
    # HealthBench stores points as JSON numbers; 5.0 is the integer 5.
    if isinstance(points, float) and points.is_integer():
        points = int(points)
    if isinstance(points, bool) or not isinstance(points, int):
        reasons.append(
            _("criterion %(position)s points %(points)r is not an integer")
            % {"position": position, "points": points}
        )
        return None
    if points == 0 or not MIN_POINTS <= points <= MAX_POINTS:
        reasons.append(
            _("criterion %(position)s points %(points)s must be −10..+10 and not 0")
            % {"position": position, "points": points}
        )
        return None
    return points


def optional_choice(
    data: dict, name: str, lookup: dict[str, str], valid: str, reasons: list[str]
) -> str:
    """A blank value is allowed (acuity and population are optional); a wrong one is not."""
    raw = text(data.get(name))
    if not raw:
        return ""
    value = lookup.get(_fold(raw))
    if value is None:
        reasons.append(
            _('unknown %(name)s "%(raw)s": use %(valid)s, or leave it out')
            % {"name": name, "raw": raw, "valid": valid}
        )
        return ""
    return value


def positive_points_check(criteria: list[RubricCriterionCandidate], reasons: list[str]) -> None:
    if criteria and not any(c.points > 0 for c in criteria):
        reasons.append(_("no criterion has positive points, so the item cannot be scored"))
