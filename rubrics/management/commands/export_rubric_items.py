from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from rubrics.services.exports import healthbench_jsonl, rubric_items_for_export


class Command(BaseCommand):
    help = (
        "Write rubric items as HealthBench JSONL (simple-evals' oss_eval.jsonl rows): items "
        "imported from HealthBench come back as the rows they were read from."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("out", type=Path, help="The .jsonl file to write ('-' for stdout).")
        parser.add_argument(
            "--key", action="append", dest="keys", help="Only this item (repeatable)."
        )
        parser.add_argument("--format", choices=["healthbench"], default="healthbench")

    def handle(self, *args, **options) -> None:
        items = rubric_items_for_export(keys=options["keys"])
        if options["keys"] and len(items) != len(set(options["keys"])):
            found = {item.key for item in items}
            missing = ", ".join(sorted(set(options["keys"]) - found))
            raise CommandError(f"No rubric item with key {missing}.")
        out: Path = options["out"]
        lines = list(healthbench_jsonl(items))
        if str(out) == "-":
            self.stdout.write("".join(lines), ending="")
            return
        out.write_text("".join(lines), encoding="utf-8")
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(lines)} HealthBench rows to {out}."))
