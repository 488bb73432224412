"""Reading files given on the command line without reading more than the limits allow."""

from pathlib import Path

from django.utils.translation import gettext as _

from .exceptions import ApplicationError

CHUNK_BYTES = 1024 * 1024


def file_read_limited(path: Path, *, max_bytes: int, max_lines: int | None = None) -> bytes:
    """The file's bytes, read chunk by chunk; refused as soon as it passes `max_bytes` or
    `max_lines` line breaks, so a huge file costs at most the limit in memory."""
    data = bytearray()
    lines = 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            data += chunk
            if len(data) > max_bytes:
                raise ApplicationError(
                    _("%(path_name)s is larger than %(megabytes)s MB; split it into smaller files.")
                    % {"path_name": path.name, "megabytes": max_bytes // (1024 * 1024)}
                )
            if max_lines is not None:
                lines += chunk.count(b"\n")
                if lines > max_lines:
                    raise ApplicationError(
                        _(
                            "%(path_name)s has more than %(max_lines)s lines; split it into "
                            "files of at most %(max_lines)s."
                        )
                        % {"path_name": path.name, "max_lines": max_lines}
                    )
    return bytes(data)
