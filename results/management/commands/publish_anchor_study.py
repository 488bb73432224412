"""Publish an anchor study: two completed runs of the same scenarios with replicates, one with
anchors in the simulator's brief and one without, shown with the release whose metric versions
they evaluated.

manage.py publish_anchor_study --with-anchors 12 --without-anchors 13 --release 1.0.0
"""

from django.core.management.base import BaseCommand, CommandError

from evaluations.models import EvaluationRun
from metrics_registry.models import Release
from results.services.anchor_study import anchor_study_publish


class Command(BaseCommand):
    help = "Compute and publish the with- versus without-anchors study of two runs."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--with-anchors", type=int, required=True, metavar="RUN")
        parser.add_argument("--without-anchors", type=int, required=True, metavar="RUN")
        parser.add_argument("--release", required=True, help="Release version, e.g. 1.0.0.")
        parser.add_argument("--resamples", type=int, default=10_000)

    def handle(self, *args, **options) -> None:
        try:
            with_run = EvaluationRun.objects.get(pk=options["with_anchors"])
            without_run = EvaluationRun.objects.get(pk=options["without_anchors"])
            release = Release.objects.get(version=options["release"])
        except (EvaluationRun.DoesNotExist, Release.DoesNotExist) as error:
            raise CommandError(str(error)) from error
        try:
            study = anchor_study_publish(
                with_run=with_run,
                without_run=without_run,
                release=release,
                n_resamples=options["resamples"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        paired = study.figures["paired"]
        self.stdout.write(f"Published anchor study {study.pk} with release {release.version}.")
        self.stdout.write(f"Paired difference: {paired.get('difference', paired)}")
