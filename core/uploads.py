"""A checked upload carried back to the page signed, so "Import now" imports exactly the file
the dry run checked without asking the user to choose it again."""

import base64

from django import forms
from django.core import signing

MAX_IMPORT_BYTES = 2 * 1024 * 1024
STAGED_MAX_AGE = 3600  # seconds a dry-run file stays valid for "Import now"


def upload_stage(data: bytes, filename: str, *, salt: str) -> str:
    payload = {"name": filename, "data": base64.b64encode(data).decode()}
    return signing.dumps(payload, salt=salt, compress=True)


def upload_from_form(cleaned: dict, *, salt: str, kinds: str) -> tuple[bytes, str]:
    """(data, filename) from the form's `file` or its `staged` token; ValidationError else."""
    upload = cleaned.get("file")
    if upload:
        if upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError("The file is larger than 2 MB; split it into parts.")
        return upload.read(), upload.name
    if cleaned.get("staged"):
        try:
            staged = signing.loads(cleaned["staged"], salt=salt, max_age=STAGED_MAX_AGE)
        except signing.BadSignature:
            raise forms.ValidationError(
                "The checked file expired; choose the file again and re-run the check."
            ) from None
        return base64.b64decode(staged["data"]), staged["name"]
    raise forms.ValidationError(f"Choose a {kinds} file to import.")
