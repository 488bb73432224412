"""Just enough PDF reading to check what Chromium printed: the page count and size, the title,
and the text of each text object (Type0 fonts with ToUnicode maps, as Skia writes them).

No PDF library is a dependency; this reads the uncompressed object structure and inflates the
FlateDecode streams with zlib. It fails loudly on anything it does not understand.
"""

from __future__ import annotations

import re
import zlib

OBJECT = re.compile(rb"(\d+) 0 obj\s*(.*?)endobj", re.S)
STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)


def objects(data: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in OBJECT.finditer(data)}


def stream(body: bytes) -> bytes:
    raw = STREAM.search(body).group(1)
    return zlib.decompress(raw) if b"/FlateDecode" in body.split(b"stream")[0] else raw


def to_unicode(cmap: bytes) -> dict[int, str]:
    mapping: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            mapping[int(src, 16)] = bytes.fromhex(dst.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.S):
        for lo, hi, dst in re.findall(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block
        ):
            start = int(dst, 16)
            for offset, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                mapping[code] = chr(start + offset)
    return mapping


def title(data: bytes) -> str:
    found = re.search(rb"/Title\s*(<[0-9A-Fa-f]+>|\((?:[^()\\]|\\.)*\))", data)
    value = found.group(1)
    if value.startswith(b"<"):
        raw = bytes.fromhex(value[1:-1].decode())
        return raw[2:].decode("utf-16-be") if raw[:2] == b"\xfe\xff" else raw.decode("latin-1")
    return value[1:-1].decode("latin-1")


def pages(data: bytes) -> list[dict]:
    """Each page: its MediaBox (points) and its text, one line per text object."""
    objs = objects(data)
    result = []
    for body in objs.values():
        head = body.split(b"stream")[0]
        if not re.search(rb"/Type\s*/Page\b", head):
            continue
        box = [float(x) for x in re.search(rb"/MediaBox\s*\[([^\]]*)\]", head).group(1).split()]
        fonts = {
            name.decode(): int(ref)
            for name, ref in re.findall(
                rb"/(F\d+)\s+(\d+) 0 R", re.search(rb"/Font\s*<<(.*?)>>", head, re.S).group(1)
            )
        }
        maps = {}
        for name, ref in fonts.items():
            unicode_ref = int(re.search(rb"/ToUnicode\s+(\d+) 0 R", objs[ref]).group(1))
            maps[name] = to_unicode(stream(objs[unicode_ref]))
        contents = int(re.search(rb"/Contents\s+(\d+) 0 R", head).group(1))
        result.append({"mediabox": box, "text": _text(stream(objs[contents]), maps)})
    return result


def _text(content: bytes, maps: dict[str, dict[int, str]]) -> str:
    lines = []
    for block in re.findall(rb"BT(.*?)ET", content, re.S):
        font, line = None, []
        for token in re.finditer(rb"/(F\d+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>", block):
            if token.group(1):
                font = token.group(1).decode()
                continue
            codes = token.group(2).decode()
            cmap = maps[font]
            line += [cmap.get(int(codes[i : i + 4], 16), "?") for i in range(0, len(codes), 4)]
        lines.append("".join(line))
    return "\n".join(lines)
