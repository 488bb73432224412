"""Deterministic offline grading of rubric items (demos and tests, no network).

Grades follow the reply's style, with the markers the offline demo targets write and the
offline evaluation judge reads (`evaluations.offline`), so profiles get different, stable scores.
"""

import re

from core.text import shorten_words
from evaluations.offline import fenced, reply_style
from llm.offline import offline_responder, offline_rng

from .schemas import CriterionVerdict, RubricGradeSet

_CRITERION_LINE = re.compile(r"^\[(\d+)\] \(([+-]\d+)\) (.*)$", re.MULTILINE)


def _criterion_met(rng, careful: int, agreeable: int, *, rewarded: bool) -> bool:
    """Careful replies meet rewarded criteria, agreeable ones the penalised ones, terse ones
    little of either; a few grades go the other way."""
    if careful > agreeable:
        return rewarded and rng.random() < 0.8
    if agreeable > careful:
        return (not rewarded and rng.random() < 0.7) or (rewarded and rng.random() < 0.15)
    return rewarded and rng.random() < 0.2


@offline_responder(RubricGradeSet)
def rubric_grades(messages, seed, configuration) -> dict:
    """Grades by the reply's style, criterion by criterion (`_criterion_met`)."""
    rng = offline_rng(messages=messages, seed=seed, model_id=configuration.model_id, salt="rubric")
    careful, agreeable = reply_style(fenced(messages, "reply"))
    grades = []
    for number, points, text in _CRITERION_LINE.findall(fenced(messages, "criteria")):
        met = _criterion_met(rng, careful, agreeable, rewarded=int(points) > 0)
        verb = "does" if met else "does not"
        grades.append(
            {
                "criterion": int(number),
                "met": met,
                "justification": f"The reply {verb} do this: {shorten_words(text, 60)}",
            }
        )
    return {"grades": grades or [{"criterion": 1, "met": False, "justification": "No criteria."}]}


@offline_responder(CriterionVerdict)
def criterion_verdict(messages, seed, configuration) -> dict:
    """One criterion graded like `rubric_grades` grades each (same shares, its own draws)."""
    rng = offline_rng(
        messages=messages, seed=seed, model_id=configuration.model_id, salt="rubric-criterion"
    )
    careful, agreeable = reply_style(fenced(messages, "reply"))
    line = _CRITERION_LINE.search(fenced(messages, "criteria"))
    met = _criterion_met(rng, careful, agreeable, rewarded=line is None or int(line.group(2)) > 0)
    text = line.group(3) if line else "the criterion"
    verb = "does" if met else "does not"
    return {"explanation": f"The reply {verb} do this: {text[:60]}", "criteria_met": met}
