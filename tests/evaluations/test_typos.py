import pytest

from evaluations.typos import ADJACENT_KEYS, perturb

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
