"""Tables that scroll sideways on a phone sit in a `.table-responsive` container, which a
keyboard user can only scroll once it takes focus (axe-core's scrollable-region-focusable): every
such container in the templates is focusable, and one announced as a region carries its name."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTAINER = re.compile(r"<div\b[^>]*\bclass=\"[^\"]*\btable-responsive\b[^\"]*\"[^>]*>")


def test_every_sideways_scrolling_table_takes_focus_and_a_named_region_has_its_name():
    problems = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        for tag in CONTAINER.findall(path.read_text()):
            where = f"{path.relative_to(ROOT)}: {tag[:80]}"
            if 'tabindex="0"' not in tag:
                problems.append(f"not focusable: {where}")
            if 'role="region"' in tag and "aria-label" not in tag:
                problems.append(f"a region without a name: {where}")
    assert problems == []
