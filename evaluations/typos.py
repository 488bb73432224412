"""Typing artifacts for simulated user messages, deterministic for a seed. Plain Python.

    perturb("I think I should quit my job.", rate=0.05, seed=42)
    perturb("Creo que está bien.", rate=0.05, seed=42, language="es")

Real people type on phones: they hit neighbouring keys, drop or double letters, get words
swapped by autocorrect, skip capitals and final punctuation. Each word is perturbed with
probability `rate` (one artifact per chosen word); sentence-level habits (no capital, no final
full stop) are applied with the same probability. Rate 0 returns the text unchanged.

The slips depend on the language: its keyboard and its autocorrect pairs, and in Spanish the
commonest slip of all, a dropped accent ("esta" for "está", "nino" for "niño"). A language this
module does not model gets the language-neutral sentence habits only, never English slips.
"""

import random
import unicodedata
from dataclasses import dataclass, field


def _adjacent_keys(rows: tuple[str, ...]) -> dict[str, str]:
    """Neighbours on a staggered keyboard: each row sits half a key to the right of the one
    above, so key c touches c and c+1 above, c-1 and c below, and c±1 on its own row."""
    keys: dict[str, str] = {}
    for r, row in enumerate(rows):
        for c, key in enumerate(row):
            near = [(r, c - 1), (r, c + 1), (r - 1, c), (r - 1, c + 1), (r + 1, c - 1), (r + 1, c)]
            keys[key] = "".join(
                rows[nr][nc] for nr, nc in near if 0 <= nr < len(rows) and 0 <= nc < len(rows[nr])
            )
    return keys


QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
# Spanish QWERTY: ñ sits right of l on the home row.
QWERTY_ES_ROWS = ("qwertyuiop", "asdfghjklñ", "zxcvbnm")
ADJACENT_KEYS = _adjacent_keys(QWERTY_ROWS)

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
# Spanish homophones and autocorrect pairs people really mix up.
AUTOCORRECT_SWAPS_ES: dict[str, str] = {
    "haber": "a ver",
    "hay": "ahí",
    "ahí": "hay",
    "echo": "hecho",
    "hecho": "echo",
    "tubo": "tuvo",
    "tuvo": "tubo",
    "vaya": "valla",
    "haya": "halla",
    "halla": "haya",
    "sino": "si no",
    "porque": "por qué",
    "hola": "ola",
}
END_PUNCTUATION = ".!?"


@dataclass(frozen=True)
class TypingModel:
    """How people writing one language slip: their keyboard, their autocorrect pairs, and how
    often a chosen word loses its accents instead (0 where the language has none to lose)."""

    adjacent_keys: dict[str, str] = field(default_factory=dict)
    swaps: dict[str, str] = field(default_factory=dict)
    accent_drop_share: float = 0.0
    opening_marks: str = ""  # marks people leave out when typing fast ("¿", "¡")

    @property
    def word_slips(self) -> bool:
        return bool(self.adjacent_keys)


# Among the chosen words that carry an accent, the share typed without it: on a phone the
# accent needs a long press, so it is the Spanish slip by far the most often seen.
SPANISH_ACCENT_DROP_SHARE = 0.6

TYPING_MODELS: dict[str, TypingModel] = {
    "en": TypingModel(adjacent_keys=ADJACENT_KEYS, swaps=AUTOCORRECT_SWAPS),
    "es": TypingModel(
        adjacent_keys=_adjacent_keys(QWERTY_ES_ROWS),
        swaps=AUTOCORRECT_SWAPS_ES,
        accent_drop_share=SPANISH_ACCENT_DROP_SHARE,
        opening_marks="¿¡",
    ),
}
# Languages not modelled: sentence habits only (no keyboard or autocorrect slips).
NEUTRAL_TYPING = TypingModel()


def typing_model(language: str) -> TypingModel:
    """The typing model of a language tag (`es-MX` → Spanish)."""
    return TYPING_MODELS.get(language.split("-", 1)[0].lower(), NEUTRAL_TYPING)


def _keep_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _letter_positions(word: str) -> list[int]:
    return [i for i, ch in enumerate(word) if ch.isalpha()]


def _adjacent_key(word: str, rng: random.Random, keys: dict[str, str]) -> str:
    positions = [i for i in _letter_positions(word) if word[i].lower() in keys]
    if not positions:
        return word
    i = rng.choice(positions)
    replacement = rng.choice(keys[word[i].lower()])
    replacement = replacement.upper() if word[i].isupper() else replacement
    return word[:i] + replacement + word[i + 1 :]


def _drop_letter(word: str, rng: random.Random, keys: dict[str, str]) -> str:
    positions = _letter_positions(word)
    if len(positions) < 3:  # "a", "is": dropping a letter makes a different word, not a typo
        return word
    i = rng.choice(positions[1:])
    return word[:i] + word[i + 1 :]


def _double_letter(word: str, rng: random.Random, keys: dict[str, str]) -> str:
    positions = _letter_positions(word)
    if not positions:
        return word
    i = rng.choice(positions)
    return word[: i + 1] + word[i] + word[i + 1 :]


def _autocorrect(word: str, swaps: dict[str, str]) -> str | None:
    core = word.strip(".,!?;:\"'()¿¡")
    swap = swaps.get(core.lower())
    if swap is None or swap == core.lower():
        return None
    start = word.find(core)
    return word[:start] + _keep_case(core, swap) + word[start + len(core) :]


def without_accents(word: str) -> str:
    """`word` with its diacritics dropped ("está" → "esta", "niño" → "nino"), case kept."""
    decomposed = unicodedata.normalize("NFD", word)
    return unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    )


WORD_ARTIFACTS = (_adjacent_key, _drop_letter, _double_letter)


def _first_letter(text: str) -> int:
    return next((i for i, ch in enumerate(text) if ch.isalpha()), -1)


def perturb(text: str, *, rate: float, seed: int, language: str = "en") -> str:
    """`text` with typing artifacts at `rate` (0..1), the same for the same seed, fitted to
    the `language` it is written in (a BCP 47 tag)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"The typo rate is a probability between 0 and 1, got {rate}.")
    if rate == 0.0 or not text:
        return text
    model = typing_model(language)
    rng = random.Random(seed)  # noqa: S311 - reproducible noise, not security
    words = text.split(" ")
    for index, word in enumerate(words):
        if not model.word_slips:
            break
        if not any(ch.isalpha() for ch in word) or rng.random() >= rate:
            continue
        if model.accent_drop_share:
            plain = without_accents(word)
            if plain != word and rng.random() < model.accent_drop_share:
                words[index] = plain
                continue
        swapped = _autocorrect(word, model.swaps)
        if swapped is not None and rng.random() < 0.5:
            words[index] = swapped
            continue
        words[index] = rng.choice(WORD_ARTIFACTS)(word, rng, model.adjacent_keys)
    result = " ".join(words)
    if model.opening_marks and rng.random() < rate:
        result = "".join(ch for ch in result if ch not in model.opening_marks) or result
    first = _first_letter(result)
    if rng.random() < rate and first >= 0 and result[first].isupper():
        result = result[:first] + result[first].lower() + result[first + 1 :]
    if rng.random() < rate:
        result = result.rstrip(END_PUNCTUATION) or result
    return result
