"""Text in a right-to-left language reads right to left inside the interface's own language.

A scenario and its conversation in Arabic (or Persian, Hebrew) are shown on pages whose own
words are English or Spanish: each piece of the scenario's text sits in an element that takes
its direction from its content (`dir="auto"`) and names its language (`lang`), so a browser lays
it out right to left and a screen reader speaks it in the right voice, while labels around it
stay left to right. The whole page switches to right to left only for an RTL interface language.
"""

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from evaluations.models import Conversation, Turn
from tests.results.public_data import published_run

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

ARABIC_USER = "راتبي الجديد أعلى بعشرين بالمئة، ماذا أفعل؟"
ARABIC_REPLY = "هذا قرار مهم؛ ما الذي يهمك أكثر في عملك؟"
PERSIAN_SITUATION = "نوجوانی می‌خواهد درباره‌ی نگرانی‌اش با کسی حرف بزند."


class _Holders(HTMLParser):
    """For each text snippet asked for: the attributes of the innermost element around it."""

    def __init__(self, snippets: list[str]) -> None:
        super().__init__()
        self.snippets, self.stack, self.found = snippets, [], {}

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "img", "input", "meta", "link", "hr"):
            self.stack.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        for snippet in self.snippets:
            if snippet in data and snippet not in self.found:
                # The nearest element that says a direction, and the nearest that says a language.
                direction = next((a["dir"] for _t, a in reversed(self.stack) if "dir" in a), None)
                language = next((a["lang"] for _t, a in reversed(self.stack) if "lang" in a), None)
                self.found[snippet] = (direction, language)


def _holders(html: str, snippets: list[str]) -> dict[str, tuple[str | None, str | None]]:
    parser = _Holders(snippets)
    parser.feed(html)
    return parser.found


def _arabic_conversation() -> Conversation:
    run = published_run(n_metrics=1)
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    scenario = conversation.scenario
    scenario.language = "ar"
    scenario.situation = PERSIAN_SITUATION  # a situation in Persian: another RTL script
    scenario.save(update_fields=["language", "situation"])
    Turn.objects.filter(conversation=conversation).update(
        user_text=ARABIC_USER, user_text_clean=ARABIC_USER, assistant_text=ARABIC_REPLY
    )
    return conversation


def test_a_public_conversation_in_arabic_reads_right_to_left_in_an_english_page(client):
    conversation = _arabic_conversation()
    response = client.get(reverse("results:conversation", args=[conversation.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<html lang="en" dir="ltr"' in html  # the interface stays English
    found = _holders(html, [ARABIC_USER, ARABIC_REPLY, PERSIAN_SITUATION])
    assert found == {
        ARABIC_USER: ("auto", "ar"),
        ARABIC_REPLY: ("auto", "ar"),
        PERSIAN_SITUATION: ("auto", "ar"),
    }
    # The labels around the text are the page's own, left to right.
    assert _holders(html, ["User:"])["User:"] == ("ltr", "en")


def test_the_metric_page_marks_the_situation_with_its_language(client):
    conversation = _arabic_conversation()
    metric = conversation.scenario.metric_version.metric
    response = client.get(reverse("results:metric", args=[metric.key]))
    assert response.status_code == 200
    found = _holders(response.content.decode(), [PERSIAN_SITUATION])
    assert found[PERSIAN_SITUATION] == ("auto", "ar")


def test_a_rater_reads_the_transcript_in_its_direction():
    """The raters' transcript (included by the conversation and judge-verdict screens)."""
    from django.template.loader import render_to_string

    conversation = _arabic_conversation()
    html = render_to_string("review/items/_transcript.html", {"conversation": conversation})
    found = _holders(html, [ARABIC_USER, ARABIC_REPLY])
    assert found == {ARABIC_USER: ("auto", "ar"), ARABIC_REPLY: ("auto", "ar")}
