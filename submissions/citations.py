"""Citations are typed one per line by contributors; each line becomes a DOI, a URL or free text."""

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils.translation import gettext as _

from .models import CitationKind

DOI_PATTERN = re.compile(
    r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE
)
MAX_CITATIONS = 30


@dataclass(frozen=True)
class ParsedCitation:
    kind: str
    value: str


def citations_parse(text: str) -> list[ParsedCitation]:
    """Split the citation box into typed citations; raise ValidationError naming the bad line."""
    citations: list[ParsedCitation] = []
    url_validator = URLValidator(schemes=["http", "https"])
    lines = [line.strip().lstrip("-•* ").strip() for line in (text or "").splitlines()]
    for number, line in enumerate(lines, start=1):
        if not line:
            continue
        doi = DOI_PATTERN.match(line)
        if doi:
            citations.append(ParsedCitation(CitationKind.DOI, doi.group(1).rstrip(".,;")))
        elif re.match(r"^https?://", line, re.IGNORECASE):
            try:
                url_validator(line)
            except ValidationError as error:
                raise ValidationError(
                    _("Line %(number)s looks like a web address but is not a valid one: %(line)s")
                    % {"number": number, "line": line[:80]}
                ) from error
            citations.append(ParsedCitation(CitationKind.URL, line))
        else:
            if len(line) > 1000:
                raise ValidationError(
                    _("Line %(number)s is longer than 1,000 characters.") % {"number": number}
                )
            citations.append(ParsedCitation(CitationKind.TEXT, line))
    if len(citations) > MAX_CITATIONS:
        raise ValidationError(
            _("Please list at most %(max_citations)s citations.") % {"max_citations": MAX_CITATIONS}
        )
    return citations


def citations_as_text(citations) -> str:
    return "\n".join(c.value if c.kind != CitationKind.DOI else f"doi:{c.value}" for c in citations)
