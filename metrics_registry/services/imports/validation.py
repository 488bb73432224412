"""Checking one import row against the taxonomy: a candidate metric, or the reasons it is not."""

import difflib
from dataclasses import dataclass
from typing import Any

from django.utils.text import slugify
from django.utils.translation import gettext as _

from core.validators import control_character_find, display_spoofing_message, text_length_problem

from ...models import AgeContexts, Benchmark, MetricVersion
from .parsing import ImportRow, cell_text, fold

POLARITY_WORDS = {
    "positive": "positive",
    "pos": "positive",
    "+": "positive",
    "promote": "positive",
    "negative": "negative",
    "neg": "negative",
    "-": "negative",
    "avoid": "negative",
}


@dataclass(frozen=True)
class ImportCandidate:
    number: int
    name: str
    criterion: str
    polarity: str
    subarea_slugs: tuple[str, ...]
    label_category_slug: str
    rubric_notes: str
    age_contexts: str
    source_reference: str
    weight: float | None = None

    @property
    def needs_mapping(self) -> bool:
        return not self.subarea_slugs or not self.label_category_slug


def criterion_key(criterion: str) -> str:
    return " ".join(criterion.casefold().split())


class Vocabulary:
    """Resolves slugs or display names (any spelling) to slugs, suggesting near misses and
    listing the valid values when nothing is close."""

    def __init__(self, pairs: list[tuple[str, str]], *, kind: str, plural: str):
        self.kind = kind
        self.plural = plural
        self.pairs = pairs
        self.lookup: dict[str, str] = {}
        for slug, name in pairs:
            for alias in (slug, name):
                self.lookup[fold(alias)] = slug
                # "Mental & Emotional Health" also as "mental emotional health".
                self.lookup[fold(alias).replace(" and ", " ")] = slug
        self.names = [name for _, name in pairs] + [slug for slug, _ in pairs]

    def resolve(self, value: str) -> str | None:
        folded = fold(value)
        return self.lookup.get(folded) or self.lookup.get(folded.replace(" and ", " "))

    def unknown(self, value: str) -> str:
        close = difflib.get_close_matches(value, self.names, n=1, cutoff=0.5)
        if not close:
            close = difflib.get_close_matches(slugify(value), self.names, n=1, cutoff=0.4)
        values = {
            "kind": self.kind,
            "value": value,
            "plural": self.plural,
            "valid": ", ".join(f"{slug} ({name})" for slug, name in self.pairs),
        }
        if close:
            # Translators: kind is "subarea" or "label category" (plural: their plurals).
            message = _(
                'unknown %(kind)s "%(value)s" — did you mean "%(close)s"? '
                "Valid %(plural)s: %(valid)s"
            )
            return message % {**values, "close": close[0]}
        # Translators: kind is "subarea" or "label category" (plural: their plurals).
        return _('unknown %(kind)s "%(value)s". Valid %(plural)s: %(valid)s') % values


def row_validate(
    row: ImportRow, subareas: Vocabulary, categories: Vocabulary
) -> ImportCandidate | str:
    """A candidate, or the reasons (joined) why the row cannot be imported."""
    data = row.data
    if "__invalid__" in data:
        return _("the entry is not an object with metric fields")
    reasons = []
    for column, value in data.items():
        if isinstance(value, str) and (found := control_character_find(value)):
            reasons.append(
                _("%(column)s contains a control character (%(found)s)")
                % {"column": column, "found": found}
            )
        if problem := text_length_problem(value, what=column):
            reasons.append(problem)
    name = cell_text(data.get("name"))
    criterion = cell_text(data.get("criterion"))
    if not criterion:
        reasons.append(_("missing criterion"))
    if not name:
        reasons.append(_("missing name"))
    elif problem := display_spoofing_message(name):
        reasons.append(_("name: %(problem)s") % {"problem": problem})
    elif len(name) > 200:
        reasons.append(
            _("name is too long (%(count)s characters, at most 200)") % {"count": len(name)}
        )

    raw_polarity = cell_text(data.get("polarity"))
    polarity = POLARITY_WORDS.get(raw_polarity.casefold())
    if not raw_polarity:
        reasons.append(_("missing polarity (positive or negative)"))
    elif polarity is None:
        reasons.append(
            _('bad polarity "%(value)s": use positive or negative') % {"value": raw_polarity}
        )

    raw_subareas = data.get("subareas")
    if isinstance(raw_subareas, list):
        subarea_values = [cell_text(value) for value in raw_subareas]
    else:
        subarea_values = cell_text(raw_subareas).split(";")
    subarea_values = [value for value in (v.strip() for v in subarea_values) if value]
    subarea_slugs: list[str] = []
    for value in subarea_values:
        slug = subareas.resolve(value)
        if slug is None:
            reasons.append(subareas.unknown(value))
        elif slug not in subarea_slugs:
            subarea_slugs.append(slug)

    raw_category = cell_text(data.get("label_category"))
    category = categories.resolve(raw_category) if raw_category else ""
    if category is None:
        reasons.append(categories.unknown(raw_category))

    weight = _weight(data.get("weight"), reasons)

    age_contexts = cell_text(data.get("age_contexts")).casefold() or AgeContexts.BOTH
    if age_contexts not in AgeContexts.values:
        reasons.append(
            _('bad age_contexts "%(age_contexts)s": use teen, adult or both')
            % {"age_contexts": age_contexts}
        )

    if reasons:
        return "; ".join(reasons)
    return ImportCandidate(
        number=row.number,
        name=name,
        criterion=criterion,
        polarity=polarity,
        subarea_slugs=tuple(subarea_slugs),
        label_category_slug=category,
        rubric_notes=cell_text(data.get("rubric_notes")),
        age_contexts=age_contexts,
        source_reference=cell_text(data.get("source_reference")),
        weight=weight,
    )


def _weight(raw: Any, reasons: list[str]) -> float | None:
    text = cell_text(raw)
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        reasons.append(_('weight "%(text)s" is not a number') % {"text": text})
        return None
    if not value >= 0 or value == float("inf"):
        reasons.append(_("weight %(text)s must be a finite number of at least 0") % {"text": text})
        return None
    return value


def existing_criteria(benchmark: Benchmark | None) -> dict[str, str]:
    """Criteria of every version of the benchmark's metrics, so revised metrics still match."""
    if benchmark is None:
        return {}
    versions = MetricVersion.objects.filter(metric__benchmark=benchmark).values_list(
        "criterion", "metric__key"
    )
    return {criterion_key(criterion): key for criterion, key in versions}
