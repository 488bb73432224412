"""Typing artifacts for simulated user messages, deterministic for a seed. Plain Python.

    perturb("I think I should quit my job.", rate=0.05, seed=42)

Real people type on phones: they hit neighbouring keys, drop or double letters, get words
swapped by autocorrect, skip capitals and final punctuation. Each word is perturbed with
probability `rate` (one artifact per chosen word); sentence-level habits (no capital, no final
full stop) are applied with the same probability. Rate 0 returns the text unchanged.
"""

import random

QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")

# Neighbours on a staggered keyboard: each row sits half a key to the right of the one above,
# so key c touches c and c+1 above, c-1 and c below, and c±1 on its own row.
ADJACENT_KEYS: dict[str, str] = {}
for _r, _row in enumerate(QWERTY_ROWS):
    for _c, _key in enumerate(_row):
        _near = [(_r, _c - 1), (_r, _c + 1), (_r - 1, _c), (_r - 1, _c + 1), (_r + 1, _c - 1)]
        _near.append((_r + 1, _c))
        ADJACENT_KEYS[_key] = "".join(
            QWERTY_ROWS[r][c]
            for r, c in _near
            if 0 <= r < len(QWERTY_ROWS) and 0 <= c < len(QWERTY_ROWS[r])
        )

# Classic autocorrect and homophone slips (both directions).
AUTOCORRECT_SWAPS: dict[str, str] = {
    "their": "there",
    "there": "their",
    "your": "you're",
    "you're": "your",
    "its": "it's",
    "it's": "its",
    "then": "than",
    "than": "then",
    "were": "we're",
    "lose": "loose",
    "to": "too",
    "definitely": "defiantly",
    "well": "we'll",
    "ill": "I'll",
    "sure": "sore",
}
END_PUNCTUATION = ".!?"


def _keep_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _letter_positions(word: str) -> list[int]:
    return [i for i, ch in enumerate(word) if ch.isalpha()]


def _adjacent_key(word: str, rng: random.Random) -> str:
    positions = [i for i in _letter_positions(word) if word[i].lower() in ADJACENT_KEYS]
    if not positions:
        return word
    i = rng.choice(positions)
    replacement = rng.choice(ADJACENT_KEYS[word[i].lower()])
    replacement = replacement.upper() if word[i].isupper() else replacement
    return word[:i] + replacement + word[i + 1 :]


def _drop_letter(word: str, rng: random.Random) -> str:
    positions = _letter_positions(word)
    if len(positions) < 3:  # "a", "is": dropping a letter makes a different word, not a typo
        return word
    i = rng.choice(positions[1:])
    return word[:i] + word[i + 1 :]


def _double_letter(word: str, rng: random.Random) -> str:
    positions = _letter_positions(word)
    if not positions:
        return word
    i = rng.choice(positions)
    return word[: i + 1] + word[i] + word[i + 1 :]


def _autocorrect(word: str, rng: random.Random) -> str | None:
    core = word.strip(".,!?;:\"'()")
    swap = AUTOCORRECT_SWAPS.get(core.lower())
    if swap is None or swap == core.lower():
        return None
    start = word.find(core)
    return word[:start] + _keep_case(core, swap) + word[start + len(core) :]


WORD_ARTIFACTS = (_adjacent_key, _drop_letter, _double_letter)


def perturb(text: str, *, rate: float, seed: int) -> str:
    """`text` with typing artifacts at `rate` (0..1), the same for the same seed."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"The typo rate is a probability between 0 and 1, got {rate}.")
    if rate == 0.0 or not text:
        return text
    rng = random.Random(seed)  # noqa: S311 - reproducible noise, not security
    words = text.split(" ")
    for index, word in enumerate(words):
        if not any(ch.isalpha() for ch in word) or rng.random() >= rate:
            continue
        swapped = _autocorrect(word, rng)
        if swapped is not None and rng.random() < 0.5:
            words[index] = swapped
            continue
        words[index] = rng.choice(WORD_ARTIFACTS)(word, rng)
    result = " ".join(words)
    if rng.random() < rate and result[:1].isupper():
        result = result[0].lower() + result[1:]
    if rng.random() < rate:
        result = result.rstrip(END_PUNCTUATION) or result
    return result
