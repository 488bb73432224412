"""Reading files given on the command line without reading more than the limits allow."""

from pathlib import Path

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
                    f"{path.name} is larger than {max_bytes // (1024 * 1024)} MB; "
                    "split it into smaller files."
                )
            if max_lines is not None:
                lines += chunk.count(b"\n")
                if lines > max_lines:
                    raise ApplicationError(
                        f"{path.name} has more than {max_lines} lines; "
                        f"split it into files of at most {max_lines}."
                    )
    return bytes(data)
