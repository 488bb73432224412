"""The run's outcomes at the grain every analysis starts from, fetched with GROUP BY queries.

A *cell* is (target, metric version, base scenario, age context, language) with its number of
judged conversations and how many passed: one row per cluster, age and language, whatever the
number of replicates. The same base index in two languages is one situation (translated or
written natively), so the language is a variant of a cell like the age, and analyses that pair
variants (teen against adult, one language against another) pair them within the other.
Counting happens in the database; Python only sees cells and metadata.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from django.db import connections
from django.db.models import BigIntegerField, Case, CharField, Count, F, Q, QuerySet, Value, When
from django.utils.translation import gettext_noop
from numpy.typing import NDArray

from core.languages import DEFAULT_LANGUAGE
from evaluations.models import (
    Conversation,
    ConversationStatus,
    EvaluationRun,
    FailureKind,
    Scenario,
)
from metrics_registry.models import MetricVersion
from review.blindness import blind_held_scenarios

AGES = ("teen", "adult")


def numeric_rows(queryset) -> list[tuple]:
    """Rows of a ``values_list`` of ids, counts and plain text, fetched without the ORM's
    per-row converters (they need none; tens of thousands of rows go straight to NumPy)."""
    sql, params = queryset.query.sql_with_params()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def bigint_array(queryset, *, width: int) -> NDArray[np.int64]:
    """A ``values_list`` of ``width`` non-null bigint columns (ids, counts) as an int64 array.

    On PostgreSQL the rows come back as one bytea of their big-endian values, read by NumPy in
    one call: no Python object per value (fetching 48,540 rows as tuples and converting them
    took longer than the query). Rows and order are the query's.
    """
    connection = connections[queryset.db]
    if connection.vendor != "postgresql":
        return _int_array(numeric_rows(queryset), width=width)
    sql, params = queryset.query.sql_with_params()
    names = [*queryset.query.values_select, *queryset.query.annotation_select]
    if len(names) != width:
        raise ValueError(f"{width} columns expected, the query has {names}")
    values = " || ".join(f"int8send(g.{connection.ops.quote_name(name)})" for name in names)
    # A null would drop its row from the aggregate: the row count tells.
    statement = f"SELECT count(*), string_agg({values}, ''::bytea) FROM ({sql}) g"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        count, data = cursor.fetchone()
    data = bytes(data or b"")
    if len(data) != count * 8 * width:
        raise ValueError(f"{sql!r} returned a null or a value that is not a bigint")
    return np.frombuffer(data, ">i8").astype(np.int64).reshape(-1, width)


def judged_conversations(run: EvaluationRun):
    """The run's conversations with a verdict the pass rates count: not those held for blind
    review (the public listing leaves them out too, so no count can be differenced against
    it to read a held verdict; `review.blindness`)."""
    return Conversation.objects.filter(
        run=run, status=ConversationStatus.COMPLETED, verdict_passed__isnull=False
    ).exclude(scenario_id__in=blind_held_scenarios())


def failed_conversations(run: EvaluationRun):
    """Conversations of the run without a verdict the pass rates count, annotated with why
    (``failure``): failures, ties, and conversations held for blind review."""
    held = blind_held_scenarios()
    counted = Q(status=ConversationStatus.COMPLETED, verdict_passed__isnull=False) & ~Q(
        scenario_id__in=held
    )
    return (
        Conversation.objects.filter(run=run)
        .exclude(counted)
        .annotate(failure=failure_reason(held=held))
    )


# A panel of judges split evenly (`evaluations.services.panel`): completed, but no verdict. Left
# out of the pass rates and counted beside them like a failure, and never charged to the model:
# the split is the judges' and the tie is never broken toward pass or fail.
JUDGES_TIED = gettext_noop("judges tied")
# The reason published for each recorded failure kind.
FAILURE_REASONS = {
    FailureKind.TARGET_ERROR: gettext_noop("target error"),
    FailureKind.SIMULATOR_ERROR: gettext_noop("simulator error"),
    FailureKind.NOT_JUDGED: gettext_noop("not judged"),
    FailureKind.TIMEOUT: gettext_noop("timeout"),
    FailureKind.OTHER: gettext_noop("error"),
}
# Conversations of a scenario in blind expert review: left out of every count until the hold
# ends (`review.blindness`), whatever their verdict.
HELD_FOR_REVIEW = gettext_noop("held for blind review")
# Failures of the platform's own models (the user simulator, the judge), not of the target:
# reported apart, never charged to the model in the "failed counted as fail" sensitivity.
# A hold is the platform's too.
PLATFORM_REASONS = frozenset({"simulator error", "not judged", JUDGES_TIED, HELD_FOR_REVIEW})


def failure_reason(held: QuerySet[Conversation] | None = None) -> Case:
    """Why a conversation has no verdict, from the failure kind recorded when it failed; null
    when it has one.

    Anything that is not completed with a verdict counts, so a model is never scored only on
    the conversations it survived without that being said: a completed conversation without a
    verdict was not judged, or its panel of judges tied; a failure without a recorded kind
    (older rows) reads its error text; any other state gives its status. ``held``: scenario
    ids held for blind review (a subquery), which come first.
    """
    completed, failed = ConversationStatus.COMPLETED, ConversationStatus.FAILED
    timeout = Q(error__icontains="timeout") | Q(error__icontains="timed out")
    holds = [] if held is None else [When(scenario_id__in=held, then=Value(HELD_FOR_REVIEW))]
    return Case(
        *holds,
        When(status=completed, verdict_passed__isnull=False, then=Value(None)),
        When(status=completed, panel_tie=True, then=Value(JUDGES_TIED)),
        When(status=completed, then=Value("not judged")),
        *(
            When(status=failed, failure_kind=kind, then=Value(reason))
            for kind, reason in FAILURE_REASONS.items()
        ),
        When(Q(status=failed) & timeout, then=Value("timeout")),
        When(status=failed, then=Value("error")),
        When(status="not_judged", then=Value("not judged")),
        default=F("status"),
        output_field=CharField(),
    )


@dataclass
class RunCells:
    target: NDArray[np.int64]
    version: NDArray[np.int64]
    base: NDArray[np.int64]
    age: NDArray[np.int64]  # index into AGES
    n: NDArray[np.float64]
    passed: NDArray[np.float64]
    # Metadata of the metric versions in the run.
    polarity: dict[int, str] = field(default_factory=dict)
    source: dict[int, str] = field(default_factory=dict)  # benchmark slug or "expert submissions"
    source_weight: dict[int, float] = field(default_factory=dict)  # the source's own, if given
    subareas: dict[int, list[int]] = field(default_factory=dict)
    areas: dict[int, list[int]] = field(default_factory=dict)
    subarea_names: dict[int, str] = field(default_factory=dict)
    # Conversations without a verdict: (target, version, base, age, reason, count) rows, and
    # the language (a tag) of each row, in the same order.
    failed: list[tuple[int, int, int, str, str, int]] = field(default_factory=list)
    failed_language: list[str] = field(default_factory=list)
    # The languages of the run's scenarios (sorted tags) and each cell's, as an index into
    # them; cells built without one are all in the default language.
    languages: tuple[str, ...] = (DEFAULT_LANGUAGE,)
    language: NDArray[np.int64] | None = None

    def __post_init__(self) -> None:
        if self.language is None:
            self.language = np.zeros(self.n.size, np.int64)
        if len(self.failed_language) != len(self.failed):
            self.failed_language = [self.languages[0]] * len(self.failed)

    @property
    def size(self) -> int:
        return int(self.n.size)

    @property
    def language_codes(self) -> NDArray[np.int64]:
        """Each cell's language as an index into ``languages`` (never None after init)."""
        assert self.language is not None  # noqa: S101 - set by __post_init__
        return self.language


def run_cells(run: EvaluationRun) -> RunCells:
    """Six queries, none joined to the scenarios: the judged conversations counted by scenario
    and target, the failed ones by scenario, target and reason, then the scenarios' languages
    and variants, the metric versions, their subareas."""
    judged = bigint_array(
        judged_conversations(run)
        .values_list("scenario_id", "target_id")
        # Counting a column of the conversation_run_judged index (never null here), in its
        # order: PostgreSQL groups while reading that index alone (no hash of the whole run, no
        # visit to the table).
        .annotate(
            n=Count("verdict_passed"),
            passed=Count("verdict_passed", filter=Q(verdict_passed=True)),
        )
        .order_by("scenario_id", "target_id"),
        width=4,
    )
    failed = list(
        failed_conversations(run)
        .values_list("scenario_id", "target_id", "failure")
        .annotate(count=Count("id"))
        .order_by()
    )
    ids = [row[0] for row in failed]
    if judged.size:
        ids += [int(judged[:, 0].min()), int(judged[:, 0].max())]
    languages, variants = _scenario_variants(min(ids, default=0), max(ids, default=0))
    version, base, age, language = variants[1:, np.searchsorted(variants[0], judged[:, 0])]
    # Cells in (age, target, version, base, language) order; two scenarios of one variant (a
    # regenerated one, say) count together.
    (age, target, version, base, language), (n, passed) = _sums_by_key(
        np.stack([age, judged[:, 1], version, base, language]), judged[:, 2:]
    )
    cells = RunCells(
        target,
        version,
        base,
        age,
        n.astype(np.float64),
        passed.astype(np.float64),
        languages=languages,
        language=language,
    )

    reasons: dict[tuple, int] = {}
    failed_variants = variants[1:, np.searchsorted(variants[0], [row[0] for row in failed])]
    for (_, target_id, reason, count), (v, b, a, lang) in zip(
        failed, failed_variants.T.tolist(), strict=True
    ):
        key = (target_id, v, b, AGES[a], reason, languages[lang])
        reasons[key] = reasons.get(key, 0) + count
    cells.failed = [(*key[:5], count) for key, count in sorted(reasons.items())]
    cells.failed_language = [key[5] for key in sorted(reasons)]
    version_ids = set(cells.version.tolist()) | {row[1] for row in cells.failed}
    # Id ranges, filtered here, rather than lists of hundreds of ids to bind and send.
    low, high = min(version_ids, default=0), max(version_ids, default=0)
    for pk, polarity, slug, weight in MetricVersion.objects.filter(
        pk__range=(low, high)
    ).values_list("pk", "polarity", "metric__benchmark__slug", "metric__source_weight"):
        if pk not in version_ids:
            continue
        cells.polarity[pk] = polarity
        cells.source[pk] = slug or "expert submissions"
        if weight is not None:
            cells.source_weight[pk] = float(weight)
    through = MetricVersion.subareas.through.objects.filter(
        metricversion__gte=low, metricversion__lte=high
    )
    for pk, subarea_id, area_id, subarea_name in through.values_list(
        "metricversion_id", "subarea_id", "subarea__area_id", "subarea__name"
    ).order_by("metricversion_id", "subarea_id"):
        if pk not in version_ids:
            continue
        cells.subareas.setdefault(pk, []).append(subarea_id)
        cells.subarea_names[subarea_id] = subarea_name
        if area_id not in cells.areas.setdefault(pk, []):
            cells.areas[pk].append(area_id)
    return cells


def situations(cells: RunCells) -> NDArray[np.int64]:
    """Each cell's base scenario in its language, as one code (``base * languages +
    language``): what the teen-adult test pairs within, so a teen and an adult variant are
    compared in the same language. With one language it is the base index itself."""
    return cells.base * len(cells.languages) + cells.language_codes


def _scenario_variants(low: int, high: int) -> tuple[tuple[str, ...], NDArray[np.int64]]:
    """The languages (sorted tags) of the scenarios with ids from ``low`` to ``high``, and
    their columns pk, metric version, base index, age (index into AGES) and language (index
    into those languages), by pk.

    A run's scenarios lie within one id range of the small scenario table: one range scan, with
    no join and no list of ids to send; the few other scenarios in it cost little.
    """
    scenarios = Scenario.objects.filter(pk__range=(low, high))
    languages = tuple(
        sorted(scenarios.order_by().values_list("language", flat=True).distinct())
    ) or (DEFAULT_LANGUAGE,)
    # The age as its index in AGES (null, refused, for any other).
    age = Case(
        *(When(age_context=name, then=Value(index)) for index, name in enumerate(AGES)),
        output_field=BigIntegerField(),
    )
    language = Case(
        *(When(language=tag, then=Value(index)) for index, tag in enumerate(languages)),
        output_field=BigIntegerField(),
    )
    return languages, bigint_array(
        scenarios.annotate(age=age, language_code=language)
        .values_list("pk", "metric_version_id", "base_index", "age", "language_code")
        .order_by("pk"),
        width=5,
    ).T


def _sums_by_key(keys: NDArray[np.int64], counts: NDArray[np.int64]):
    """Distinct columns of ``keys`` in lexicographic order (first row first), with the sums of
    the rows of ``counts`` that share them."""
    packed = packed_key(tuple(keys))
    order = np.lexsort(keys[::-1]) if packed is None else np.argsort(packed, kind="stable")
    keys, counts = keys[:, order], counts[order]
    first = np.ones(order.size, bool)
    first[1:] = (keys[:, 1:] != keys[:, :-1]).any(axis=0)
    starts = np.flatnonzero(first)
    sums = np.add.reduceat(counts, starts) if starts.size else counts
    return keys[:, starts], sums.T


def packed_key(cols: tuple[NDArray[np.int64], ...]) -> NDArray[np.int64] | None:
    """One int64 per row ordered as the rows are lexicographically, or None if it would not fit."""
    packed = packing(cols)
    return None if packed is None else packed[0]


def packing(cols: tuple[NDArray[np.int64], ...]) -> tuple[NDArray[np.int64], list[int]] | None:
    """`packed_key` and the number of values each column spans: the key is the columns'
    offsets from their minimums in mixed radix, the last column the least significant."""
    if not cols or cols[0].size == 0:
        return None
    key = np.zeros(cols[0].size, np.int64)
    span, widths = 1, []
    for col in cols:
        low, high = int(col.min()), int(col.max())
        width = high - low + 1
        span *= width
        if span >= 2**62:
            return None
        key *= width
        key += col
        key -= low
        widths.append(width)
    return key, widths


def _int_array(rows: list[tuple], *, width: int) -> NDArray[np.int64]:
    # Twice as fast as np.array on a list of tuples.
    flat = np.fromiter(itertools.chain.from_iterable(rows), np.int64, count=len(rows) * width)
    return flat.reshape(-1, width)
