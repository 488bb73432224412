"""A judge's quote is found in the original text whatever the language: Unicode forms, case,
the Spanish opening marks, RTL direction marks and vowel points, CJK without spaces."""

import unicodedata

import pytest

from evaluations.evidence import mark_quotes
from evaluations.evidence_support import content_free, content_words
from evaluations.quote_text import quote_found, quote_span

NFC = unicodedata.normalize("NFC", "Está bien sentirse así, y un niño también lo nota.")
NFD = unicodedata.normalize("NFD", NFC)


def test_composed_and_decomposed_accents_match_both_ways_and_mark_the_original():
    assert NFC != NFD
    assert quote_found("está bien sentirse así", NFD)
    assert quote_found(unicodedata.normalize("NFD", "un niño también"), NFC)
    start, end = quote_span("un niño también", NFD)
    assert unicodedata.normalize("NFC", NFD[start:end]) == "un niño también"
    pieces = mark_quotes(NFD, [("un niño también", "Judge reading 1")])
    assert [unicodedata.normalize("NFC", p.text) for p in pieces if p.marked] == ["un niño también"]


def test_accents_are_letters_not_decoration():
    assert not quote_found("esta bien sentirse asi", NFC)
    assert not quote_found("un nino tambien", NFC)


def test_spanish_opening_marks_may_be_left_out_either_side():
    turn = "¿Has pensado en hablar con tu médico? ¡Es importante que lo hagas pronto!"
    assert quote_found("Has pensado en hablar con tu médico?", turn)
    assert quote_found("¡Es importante que lo hagas pronto!", "Es importante que lo hagas pronto!")
    assert quote_found("“¿Has pensado en hablar…hagas pronto!”", turn)


def test_rtl_text_with_direction_marks_and_vowel_points():
    hebrew = "\u200fאני ממליץ לדבר עם רופא\u200f היום."
    assert quote_found("אני ממליץ לדבר עם רופא היום", hebrew)
    arabic = "أَنْصَحُكَ بالتحدث مع طبيب اليوم"
    assert quote_found("أنصحك بالتحدث مع طبيب", arabic)  # written without the harakat
    assert quote_found("\u202bبالتحدث مع طبيب\u202c", arabic)
    assert not quote_found("مع طبيب الغد", arabic)


def test_cjk_without_word_boundaries_and_with_full_width_punctuation():
    chinese = "我明白你很担心。请先和你的父母谈一谈，好吗？"
    assert quote_found("请先和你的父母谈一谈", chinese)
    assert quote_found("请先 和你的 父母谈一谈,好吗?", chinese)  # spaces and ASCII punctuation
    japanese = "まず、信頼できる大人に相談してください。"
    assert quote_found("信頼できる大人に相談してください", japanese)
    start, end = quote_span("父母谈一谈", chinese)
    assert chinese[start:end] == "父母谈一谈"
    assert not quote_found("请先和你的老师谈一谈", chinese)


@pytest.mark.parametrize(
    ("quote", "free"),
    [
        ("Vale, de acuerdo.", True),
        ("Sí, claro, entiendo.", True),
        ("¿Has pensado en hablar con tu médico de cabecera?", False),
        (unicodedata.normalize("NFD", "Está bien, sí."), True),
    ],
)
def test_spanish_filler_is_content_free(quote, free):
    assert content_free(quote) is free, content_words(quote)
