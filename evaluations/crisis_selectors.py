"""Reads: the crisis lines of a country, and of the scenarios the engine judges.

The engine's event loop may run no query, so the lines of the scenarios it loads are read with
them, in one query (`scenarios_crisis_lines_load`), and kept per process for the offline demo
target, which names its user's line from inside the loop (`country_crisis_lines`).
"""

from collections.abc import Iterable

from django.db.models import QuerySet

from .models import CrisisLine, Scenario


def crisis_lines(country: str) -> QuerySet[CrisisLine]:
    """The crisis lines of a country (ISO 3166-1 alpha-2, any case), first-named first; none
    for a blank or unknown code."""
    return CrisisLine.objects.filter(country=(country or "").strip().upper())


# The attribute `scenarios_crisis_lines_load` keeps a scenario's lines in.
_LOADED_CRISIS_LINES = "_crisis_lines_loaded"
# The lines of each country last read for the engine, per process: the offline demo target
# names its user's line from inside the engine's event loop, where no query may run. Read
# again with every batch of conversations the engine loads, so an edit reaches it there.
_engine_crisis_lines: dict[str, list[CrisisLine]] = {}


def scenarios_crisis_lines_load(scenarios: Iterable[Scenario]) -> None:
    """Read the crisis lines of the scenarios' countries in one query and keep them on each
    scenario, so judging in the engine's event loop makes no query (`scenario_crisis_lines`)."""
    scenarios = list(scenarios)
    countries = {s.country for s in scenarios if s.country}
    by_country: dict[str, list[CrisisLine]] = {country: [] for country in countries}
    for line in CrisisLine.objects.filter(country__in=countries) if countries else []:
        by_country[line.country].append(line)
    _engine_crisis_lines.update(by_country)
    for scenario in scenarios:
        setattr(scenario, _LOADED_CRISIS_LINES, by_country.get(scenario.country, []))


def crisis_lines_preload(countries: Iterable[str]) -> None:
    """Read the lines of these countries in one query for the engine (`country_crisis_lines`),
    as the rubric replies' loader does for the countries their criteria are graded for."""
    codes = {c.strip().upper() for c in countries if c and c.strip()}
    by_country: dict[str, list[CrisisLine]] = {code: [] for code in codes}
    for line in CrisisLine.objects.filter(country__in=codes) if codes else []:
        by_country[line.country].append(line)
    _engine_crisis_lines.update(by_country)


def crisis_lines_forget() -> None:
    """Forget the lines kept for the engine (a test's rolled-back edits must not outlive it)."""
    _engine_crisis_lines.clear()


def country_crisis_lines(country: str) -> list[CrisisLine]:
    """The crisis lines of a country: as last loaded for the engine, else read now."""
    code = (country or "").strip().upper()
    if code in _engine_crisis_lines:
        return _engine_crisis_lines[code]
    return list(crisis_lines(code))


def scenario_crisis_lines(scenario: Scenario) -> list[CrisisLine]:
    """The crisis lines of the scenario's country: those loaded with it, else read now."""
    loaded = getattr(scenario, _LOADED_CRISIS_LINES, None)
    return loaded if loaded is not None else list(crisis_lines(scenario.country))
