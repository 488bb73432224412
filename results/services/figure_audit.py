"""An audit of every published interval: walks the public API and the public pages of the
official runs and checks each figure it finds.

A figure is an `Estimate` wherever it is published: in an API response its JSON form
(`stats.estimates.is_estimate_dict`), on a page the ``{% estimate %}`` tag's output, which
carries its value, bounds and unit as data attributes (and, where a template names the figure,
a ``data-estimate-key``). Four defects are reported:

* an interval of width 0 (it claims a certainty no sample gives);
* a bound outside the unit's range (a proportion outside [0, 1], a difference or a coefficient
  outside [-1, 1]);
* a value outside its own interval;
* the same figure published with two different intervals (one figure computed twice by two
  methods): in the API, the same field of the same run, model, polarity, metric ... in two
  responses; on pages, two figures carrying the same key.

What is walked comes from the URL configuration and from the links the API gives: the runs of
the run list (or one run), each run's targets and metrics, its release. The reader is any
function from a path to (status, content type, body): the Django test client in process, or
HTTP against a deployed site.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from stats.estimates import is_estimate_dict

Fetch = Callable[[str], tuple[int, str, bytes]]

ZERO_WIDTH = "interval of width 0"
OUT_OF_RANGE = "bound outside the unit's range"
POINT_OUTSIDE = "value outside its interval"
TWO_INTERVALS = "same figure, two intervals"
PROBLEMS = (ZERO_WIDTH, OUT_OF_RANGE, POINT_OUTSIDE, TWO_INTERVALS)

RANGES = {"proportion": (0.0, 1.0), "difference": (-1.0, 1.0), "coefficient": (-1.0, 1.0)}
# Fields of an API object that say which figure an estimate inside it is (with the run).
IDENTITY = (
    "target",
    "target_id",
    "model",
    "polarity",
    "level",
    "age_context",
    "age",
    "area",
    "subarea",
    "metric",
    "metric_version",
    "category",
    "study",
    "judge",
    "rater",
    "dimension",
    "slug",
    "key",
    # Simulator fidelity: one share per simulator and per criterion.
    "simulator_id",
    "criterion",
)
# Bounds equal to this precision are the same bound (JSON and data attributes round-trip
# floats exactly; the tolerance only absorbs a recomputation's last digit).
TOLERANCE = 1e-9
ESTIMATE_SPAN = re.compile(r"<span class=\"estimate[^\"]*\"[^>]*data-estimate-value=[^>]*>")
ATTRIBUTE = re.compile(r'data-estimate-(\w+)="([^"]*)"')
# The sections a page's figures sit in: containers with a test id (a badge or a link inside a
# row is not a section).
TESTID = re.compile(
    r'<(?:section|table|div|p|li|td|tr|ul|dl|figure|strong|span)\b[^>]*data-testid="([^"]+)"'
)


@dataclass(frozen=True)
class Figure:
    """One published figure: where it was read, what it is, and its numbers."""

    source: str  # the path it was read from
    kind: str  # the API field path, or the page section (nearest data-testid) it sits in
    key: str  # what makes two figures the same figure ("" when a page does not say)
    value: float | None
    low: float | None
    high: float | None
    unit: str

    def describe(self) -> str:
        bounds = "no interval" if self.low is None else f"[{self.low:.4g}, {self.high:.4g}]"
        return f"{self.kind} {self.value} {bounds} ({self.unit}) at {self.source}"


@dataclass(frozen=True)
class Finding:
    problem: str
    figure: Figure
    detail: str = ""


@dataclass
class AuditReport:
    """What the walk read and what it found."""

    api_responses: int = 0
    pages: int = 0
    figures: int = 0
    with_interval: int = 0
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # paths that did not answer 200

    def counts(self) -> dict[str, int]:
        counted = dict.fromkeys(PROBLEMS, 0)
        for finding in self.findings:
            counted[finding.problem] += 1
        return counted

    def by_kind(self) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = defaultdict(int)
        for finding in self.findings:
            out[(finding.problem, finding.figure.kind)] += 1
        return dict(sorted(out.items()))


# --- reading figures ----------------------------------------------------------------------


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def figures_in_json(data: Any, *, source: str, run: int | None) -> list[Figure]:
    """Every estimate in an API response, with the field path it sits at and its identity
    (the run and the identifying fields of the objects around it)."""
    found: list[Figure] = []

    def walk(node: Any, path: tuple[str, ...], identity: dict[str, str]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, path, identity)
            return
        if not isinstance(node, dict):
            return
        if is_estimate_dict(node):
            kind = ".".join(path) or "estimate"
            key = _figure_name(kind, identity) or "|".join(
                [kind, *(f"{k}={v}" for k, v in sorted(identity.items()))]
            )
            found.append(
                Figure(
                    source,
                    kind,
                    key,
                    _number(node.get("value")),
                    _number(node.get("low")),
                    _number(node.get("high")),
                    str(node.get("unit", "")),
                )
            )
            return
        here = {**identity}
        for name in IDENTITY:
            if (
                name in node
                and isinstance(node[name], str | int)
                and not isinstance(node[name], bool)
            ):
                here[name] = str(node[name])
        for name, child in node.items():
            if isinstance(child, dict | list):
                # A mapping keyed by data (polarities, ages) names the figure, not its kind.
                segment = name if not name.isdigit() else "*"
                walk(child, (*path, segment), here)

    walk(data, (), {"run": str(run)} if run is not None else {})
    return found


SWAP_SHIFT = re.compile(r"polarities\.(\w+)\.models\.shift$")
SWAP_STUDY = re.compile(
    r"polarities\.(\w+)\.(rank_agreement|flip_share|single_vs_majority\.(base|swap))$"
)
SWAP_NAMES = {"rank_agreement": "swap rank agreement", "flip_share": "swap flip share"}


def _figure_name(kind: str, identity: dict[str, str]) -> str:
    """The name a page gives the same figure (``{% estimate e "pass rate" ... %}``), for the
    API fields that publish one the pages name, so a response and a page are compared too."""
    run, target = identity.get("run"), identity.get("target")
    polarity = identity.get("polarity")
    if kind.endswith("judge_only") or kind.endswith("panel_rates.pass_rate"):
        return f"run={run}|pass rate:{target}:{polarity or 'all'}:all"
    if kind == "results.estimate" and identity.get("level") == "overall":
        return f"run={run}|pass rate:{target}:{polarity}:{identity.get('age_context')}"
    if kind.endswith(".calibrated") and polarity:
        return f"run={run}|calibrated rate:{target}:{polarity}"
    study = identity.get("study")
    shift = SWAP_SHIFT.search(kind)
    if shift and study:
        return f"run={run}|swap shift:{study}:{shift[1]}:{target}"
    figure = SWAP_STUDY.search(kind)
    if figure and study:
        if figure[3]:
            return f"run={run}|swap single vs majority:{study}:{figure[1]}:{figure[3]}"
        return f"run={run}|{SWAP_NAMES[figure[2]]}:{study}:{figure[1]}"
    return ""


def figures_in_html(page: str, *, source: str, run: int | None) -> list[Figure]:
    """Every ``{% estimate %}`` on a page, with its kind (the figure's name when the template
    gives it a key, else the section it sits in: the nearest container with a ``data-testid``
    before it) and its key."""
    found = []
    testids = [(m.start(), m.group(1)) for m in TESTID.finditer(page) if "badge" not in m[1]]
    for span in ESTIMATE_SPAN.finditer(page):
        attributes = {name: html.unescape(value) for name, value in ATTRIBUTE.findall(span[0])}
        section = next((t for at, t in reversed(testids) if at < span.start()), "page")
        key = attributes.get("key", "")
        found.append(
            Figure(
                source,
                f"page:{key.split(':')[0] if key else section}",
                f"run={run}|{key}" if key else "",
                _number(attributes.get("value")),
                _number(attributes.get("low")),
                _number(attributes.get("high")),
                attributes.get("unit", ""),
            )
        )
    return found


# --- checking them ------------------------------------------------------------------------


def figure_problems(figure: Figure) -> list[Finding]:
    """What is wrong with one figure on its own (nothing for a figure without a value)."""
    if figure.value is None:
        return []
    out = []
    low, high, value = figure.low, figure.high, figure.value
    bounds = RANGES.get(figure.unit)
    if bounds is not None:
        outside = [x for x in (value, low, high) if x is not None]
        if any(x < bounds[0] - TOLERANCE or x > bounds[1] + TOLERANCE for x in outside):
            out.append(Finding(OUT_OF_RANGE, figure, f"range [{bounds[0]:g}, {bounds[1]:g}]"))
    if low is None or high is None:
        return out
    if high - low <= TOLERANCE:
        out.append(Finding(ZERO_WIDTH, figure))
    if value < low - TOLERANCE or value > high + TOLERANCE:
        out.append(Finding(POINT_OUTSIDE, figure))
    return out


def duplicate_problems(figures: Iterable[Figure]) -> list[Finding]:
    """Figures with one key and more than one interval: one finding per extra interval."""
    by_key: dict[str, dict[tuple, Figure]] = defaultdict(dict)
    for figure in figures:
        if figure.key and figure.value is not None:
            bounds = tuple(
                None if x is None else round(x / TOLERANCE) for x in (figure.low, figure.high)
            )
            by_key[figure.key].setdefault(bounds, figure)
    out = []
    for key, shown in by_key.items():
        if len(shown) > 1:
            first, *others = shown.values()
            for other in others:
                out.append(Finding(TWO_INTERVALS, other, f"also {first.describe()} ({key})"))
    return out


def audit_figures(figures: list[Figure]) -> list[Finding]:
    findings = [finding for figure in figures for finding in figure_problems(figure)]
    return findings + duplicate_problems(figures)


# --- walking the site ---------------------------------------------------------------------


def _with_query(path: str, **query: Any) -> str:
    query = {k: v for k, v in query.items() if v is not None}
    joint = "&" if "?" in path else "?"
    return f"{path}{joint}{urlencode(query)}" if query else path


def _json(fetch: Fetch, path: str, report: AuditReport) -> Any:
    status, content_type, body = fetch(path)
    if status != 200 or "json" not in content_type:
        _unreadable(report, path, status)
        return None
    report.api_responses += 1
    return json.loads(body)


def _pages_of(fetch: Fetch, path: str, report: AuditReport) -> Iterator[Any]:
    """A response and, for a paginated list, every further page (by its page number: the
    ``next`` link holds the serving host, which an in-process reader does not serve)."""
    page = 1
    while True:
        data = _json(fetch, _with_query(path, page=page) if page > 1 else path, report)
        if data is None:
            return
        yield data
        if not (isinstance(data, dict) and data.get("next")):
            return
        page += 1


def _paths(fetch: Fetch, run_id: int | None, report: AuditReport) -> Iterator[tuple[str, str]]:
    """("api" or "page", path) of everything to read, discovered from the run list and each
    run's own responses."""
    listed = [
        r
        for data in _pages_of(fetch, reverse("results-api:run-list"), report)
        for r in (data.get("results", data) if isinstance(data, dict) else data)
    ]
    runs = [r for r in listed if run_id is None or r["id"] == run_id]
    yield "api", reverse("results-api:area-list")
    yield "api", reverse("results-api:anchor-study")
    yield "page", reverse("results:anchor-study")
    releases = set()
    for run in runs:
        pk = run["id"]
        releases.add(run["release"])
        for name in (
            "run-detail",
            "run-judges",
            "run-calibration",
            "run-swap-studies",
            "run-fidelity",
        ):
            yield "api", reverse(f"results-api:{name}", args=[pk])
        yield "api", reverse("results-api:run-reasks", args=[pk])
        yield "api", _with_query(reverse("results-api:explore"), run=pk)
        yield "page", _with_query(reverse("results:methodology"), run=pk)
        yield "page", _with_query(reverse("results:metric-list"), run=pk)
        yield "page", _with_query(reverse("results:explore"), run=pk)
        metrics = set()
        results = _with_query(reverse("results-api:run-results", args=[pk]), level="metric")
        for data in _pages_of(fetch, results, report):
            metrics.update(row["metric"] for row in data.get("results", []) if row["metric"])
        yield "api", _with_query(reverse("results-api:run-results", args=[pk]), level="overall")
        for target in run["targets"]:
            yield "api", _with_query(reverse("results-api:label", args=[target["id"]]), run=pk)
            yield "page", _with_query(reverse("results:label", args=[target["id"]]), run=pk)
        for key in sorted(metrics):
            yield "api", _with_query(reverse("results-api:metric-results", args=[key]), run=pk)
            yield "page", _with_query(reverse("results:metric", args=[key]), run=pk)
    for version in sorted(releases):
        yield "api", reverse("results-api:release-expert-figures", args=[version])
        yield "page", reverse("results:release-expert-figures", args=[version])
        yield "page", reverse("results:release-expert-metrics", args=[version])


def _unreadable(report: AuditReport, path: str, status: int) -> None:
    # A redirect is a page not public (to the login) or not published yet: nothing to audit.
    if not 300 <= status < 400:
        report.unreadable.append(f"{path} ({status})")


def _run_of(path: str) -> int | None:
    match = re.search(r"[?&]run=(\d+)", path) or re.search(r"/runs/(\d+)/", path)
    return int(match.group(1)) if match else None


def site_audit(fetch: Fetch, *, run_id: int | None = None) -> AuditReport:
    """Walk the public API and pages of the official runs (or of one) and check every
    published figure: the report lists what was read and every finding."""
    report = AuditReport()
    figures: list[Figure] = []
    for where, path in _paths(fetch, run_id, report):
        if where == "api":
            for data in _pages_of(fetch, path, report):
                figures += figures_in_json(data, source=path, run=_run_of(path))
            continue
        status, _, body = fetch(path)
        if status != 200:
            _unreadable(report, path, status)
            continue
        report.pages += 1
        figures += figures_in_html(body.decode(), source=path, run=_run_of(path))
    report.figures = len(figures)
    report.with_interval = sum(1 for f in figures if f.low is not None)
    report.findings = audit_figures(figures)
    return report
