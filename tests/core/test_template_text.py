"""The bare-text check of translated templates (tests/core/template_text.py) on templates with
known answers: it finds prose and read attributes outside translation tags, and leaves alone
what translation tags, comments, code and template variables hold."""

import pytest

from tests.core.template_text import bare_text


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("<p>Hello there</p>", ["Hello there"]),
        ('<nav aria-label="Breadcrumb"></nav>', ['aria-label="Breadcrumb"']),
        ('<img alt="A label of {{ model }}">', ['alt="A label of …"']),
        ("<p>{{ a }}, Cohen's κ {{ b }}.</p>", ["… , Cohen's κ … ."]),
        ("{% if x %}<b>Only when x</b>{% endif %}", ["Only when x"]),
        ("<p>Ñandú</p>", ["Ñandú"]),  # any script
        ("<p>Не переведено</p>", ["Не переведено"]),
        ("<p>未翻译的文字</p>", ["未翻译的文字"]),
    ],
)
def test_text_outside_translation_tags_is_found(source, found):
    assert bare_text(source) == found


@pytest.mark.parametrize(
    "source",
    [
        '{% load i18n %}<p>{% translate "Hello there" %}</p>',
        "{% blocktranslate trimmed with n=3 %}Turn {{ n }} of many{% endblocktranslate %}",
        "{% blocktranslate count n=k %}One item{% plural %}{{ n }} items{% endblocktranslate %}",
        "{# a note for developers #}{% comment %}Old text here{% endcomment %}",
        "<script>const words = 'not prose';</script><style>.a { color: red }</style>",
        "<pre>curl https://example.org/api/</pre><code>metric_key</code>",
        "<td{{ shown|text_lang }}>{{ shown.name }}</td> · {{ a }} — 12 %",
        '<a href="{{ p }}?run={{ r }}&amp;age={{ a }}">{{ site }}{{ p }}?run={{ r }}&amp;age=</a>',
        '<input placeholder="es"><input placeholder="MX">',
        "<p>ImpactBench · PDF · SVG · CSV</p>",
        '<p title="{% translate "Copy" %}">{{ value }}</p>',
    ],
)
def test_translated_text_code_and_variables_pass(source):
    assert bare_text(source) == []
