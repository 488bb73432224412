import pytest

from evaluations.typos import (
    ADJACENT_KEYS,
    AUTOCORRECT_SWAPS,
    NEUTRAL_TYPING,
    SPANISH_ACCENT_DROP_SHARE,
    perturb,
    typing_model,
    without_accents,
)

TEXT = (
    "Honestly I think their plan is fine, but my parents were worried about it. "
    "Should I tell them that I want to leave school early and work instead? "
    "I definitely feel like nobody listens to me when I explain what I really need."
)


def test_rate_zero_is_the_identity():
    assert perturb(TEXT, rate=0.0, seed=1) == TEXT


def test_same_seed_same_text_different_seed_different_text():
    assert perturb(TEXT, rate=0.2, seed=7) == perturb(TEXT, rate=0.2, seed=7)
    outputs = {perturb(TEXT, rate=0.2, seed=seed) for seed in range(10)}
    assert len(outputs) > 5


def test_rate_roughly_sets_the_share_of_changed_words():
    words = TEXT.split(" ")
    changed = 0
    trials = 200
    for seed in range(trials):
        perturbed = perturb(TEXT, rate=0.1, seed=seed).split(" ")
        changed += sum(a != b for a, b in zip(words, perturbed, strict=True))
    share = changed / (len(words) * trials)
    # Each chosen word changes unless the artifact is a no-op (e.g. a two-letter word drop).
    assert 0.06 < share < 0.12
    heavy = sum(
        a != b for a, b in zip(words, perturb(TEXT, rate=0.9, seed=3).split(" "), strict=True)
    )
    assert heavy > len(words) * 0.6


def test_artifacts_are_of_the_promised_kinds():
    seen = set()
    for seed in range(300):
        out = perturb("Their house is there.", rate=0.6, seed=seed)
        if out.startswith("t"):
            seen.add("lowercase start")
        if not out.endswith("."):
            seen.add("no end punctuation")
        if "there house" in out.lower() or "their." in out.lower():
            seen.add("autocorrect swap")
        if "hhouse" in out or "housse" in out or "hoouse" in out or "houuse" in out:
            seen.add("doubled letter")
        if "hose" in out or "huse" in out or "houe" in out:
            seen.add("dropped letter")
    assert seen == {
        "lowercase start",
        "no end punctuation",
        "autocorrect swap",
        "doubled letter",
        "dropped letter",
    }
    assert set(ADJACENT_KEYS["g"]) == set("tyfhvb")


def test_bad_rate_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        perturb(TEXT, rate=1.5, seed=1)


SPANISH = (
    "Está bien, pero mi niño tiene miedo y no sé si hay que llamar a su tía. "
    "¿Qué hago si él no quiere ir? Creo que tuvo un día difícil, ya está hecho."
)
ACCENTED = [w for w in SPANISH.split(" ") if without_accents(w) != w]


def test_spanish_never_gets_an_english_autocorrect_swap_or_an_english_key():
    english_only = set(AUTOCORRECT_SWAPS.values()) - set(SPANISH.casefold().split())
    spanish_keys = typing_model("es").adjacent_keys
    assert "ñ" in spanish_keys["l"]
    assert "l" in spanish_keys["ñ"]
    for seed in range(300):
        out = perturb(SPANISH, rate=0.5, seed=seed, language="es-MX")
        words = {w.strip(".,!?¿¡").casefold() for w in out.split(" ")}
        assert not words & english_only, out


def test_spanish_drops_accents_at_the_rate_and_uses_spanish_homophones():
    rate, trials = 0.2, 400
    dropped = 0
    swaps = set()
    for seed in range(trials):
        out = perturb(SPANISH, rate=rate, seed=seed, language="es").split(" ")
        if len(out) != len(SPANISH.split(" ")):
            continue  # a homophone of two words ("si no") shifted the words
        dropped += sum(
            1
            for a, b in zip(SPANISH.split(" "), out, strict=True)
            if a in ACCENTED and b == without_accents(a)
        )
        swaps |= {
            b for a, b in zip(SPANISH.split(" "), out, strict=True) if b in {"ahí", "echo.", "tubo"}
        }
    share = dropped / (len(ACCENTED) * trials)
    expected = rate * SPANISH_ACCENT_DROP_SHARE
    # Binomial standard error over ~4,000 accented words is about 0.005: 4 of them either side.
    assert abs(share - expected) < 0.02, share
    assert swaps == {"ahí", "echo.", "tubo"}
    assert without_accents("niño") == "nino"
    assert without_accents("Está") == "Esta"


def test_a_language_without_a_model_gets_only_sentence_habits():
    hindi = "मुझे नहीं पता कि क्या करूँ, मेरे माता-पिता नाराज़ हैं।"
    for seed in range(100):
        out = perturb(hindi, rate=0.9, seed=seed, language="hi")
        assert out.split(" ") == hindi.split(" ") or out.rstrip(".!?") == hindi.rstrip(".!?")
    english = "Their house is there."
    outs = {perturb(english, rate=0.9, seed=s, language="de") for s in range(100)}
    assert all(o.lower().rstrip(".") == english.lower().rstrip(".") for o in outs)
    assert typing_model("xx") is NEUTRAL_TYPING
