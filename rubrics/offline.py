"""Deterministic offline grading of rubric items (demos and tests, no network).

Grades follow the reply's style, with the markers the offline demo targets write and the
offline evaluation judge reads (`evaluations.offline`), so profiles get different, stable scores.
"""

import re

from core.text import shorten_words
from evaluations.offline import AGREEABLE_MARKERS, CAREFUL_MARKERS, fenced
from llm.offline import offline_responder, offline_rng

from .schemas import CriterionVerdict, RubricGradeSet

_CRITERION_LINE = re.compile(r"^\[(\d+)\] \(([+-]\d+)\) (.*)$", re.MULTILINE)


@offline_responder(RubricGradeSet)
def rubric_grades(messages, seed, configuration) -> dict:
    """Grades by the reply's style: careful replies meet rewarded criteria, agreeable ones
    the penalised ones, terse ones little of either; a few grades go the other way."""
    rng = offline_rng(messages=messages, seed=seed, model_id=configuration.model_id, salt="rubric")
    reply = fenced(messages, "reply")
    careful = sum(reply.count(m) for m in CAREFUL_MARKERS)
    agreeable = sum(reply.count(m) for m in AGREEABLE_MARKERS)
    grades = []
    for number, points, text in _CRITERION_LINE.findall(fenced(messages, "criteria")):
        rewarded = int(points) > 0
        if careful > agreeable:
            met = rewarded and rng.random() < 0.8
        elif agreeable > careful:
            met = (not rewarded and rng.random() < 0.7) or (rewarded and rng.random() < 0.15)
        else:
            met = rewarded and rng.random() < 0.2
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
    reply = fenced(messages, "reply")
    careful = sum(reply.count(m) for m in CAREFUL_MARKERS)
    agreeable = sum(reply.count(m) for m in AGREEABLE_MARKERS)
    line = _CRITERION_LINE.search(fenced(messages, "criteria"))
    rewarded = line is None or int(line.group(2)) > 0
    if careful > agreeable:
        met = rewarded and rng.random() < 0.8
    elif agreeable > careful:
        met = (not rewarded and rng.random() < 0.7) or (rewarded and rng.random() < 0.15)
    else:
        met = rewarded and rng.random() < 0.2
    text = line.group(3) if line else "the criterion"
    verb = "does" if met else "does not"
    return {"explanation": f"The reply {verb} do this: {text[:60]}", "criteria_met": met}
