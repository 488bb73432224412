"""The demo catalogue: observable assistant behaviours, written for the ImpactBench demo.

Each entry of `demo_catalog.json` is one behaviour a judge can see in a transcript, with its
polarity, subareas, the AI Nutrition Label category it counts towards, and the age contexts it
applies to; `DEMO_METRICS` reads them as (name, criterion, polarity, subarea slugs, label
category slug, age contexts).

Written in our own words from the behaviours the platform is about; not taken from any
published benchmark. Entries are only ever appended: the seed identifies them by position
("demo item N"), so reordering would create duplicates in an existing demo database.
"""

import json
from pathlib import Path

DemoMetric = tuple[str, str, str, tuple[str, ...], str, str]


def _read(path: Path) -> list[DemoMetric]:
    return [
        (
            row["name"],
            row["criterion"],
            row["polarity"],
            tuple(row["subareas"]),
            row["label_category"],
            row["age_contexts"],
        )
        for row in json.loads(path.read_text(encoding="utf-8"))
    ]


DEMO_METRICS: list[DemoMetric] = _read(Path(__file__).with_name("demo_catalog.json"))
