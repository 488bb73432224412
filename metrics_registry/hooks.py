"""Extension points other apps plug into, so the registry never imports them.

`contested_keep_providers`: callables returning ids of contested metrics a maintainer decided
to keep in new releases (the review app registers one). Release assembly leaves every other
contested metric out.
"""

from collections.abc import Callable, Iterable

ContestedKeepProvider = Callable[[], Iterable[int]]

contested_keep_providers: list[ContestedKeepProvider] = []


def register_contested_keep_provider(provider: ContestedKeepProvider) -> None:
    if provider not in contested_keep_providers:
        contested_keep_providers.append(provider)


def contested_metric_ids_kept() -> set[int]:
    kept: set[int] = set()
    for provider in contested_keep_providers:
        kept.update(provider())
    return kept


# `release_download_providers`: callables (release) -> [{"label", "url", "format"}] adding
# downloads other apps own (the evaluations app adds Inspect AI scenarios and run exports)
# to the release page and its API record. URLs are site-relative.
ReleaseDownloadProvider = Callable[[object], Iterable[dict]]

release_download_providers: list[ReleaseDownloadProvider] = []


def register_release_download_provider(provider: ReleaseDownloadProvider) -> None:
    if provider not in release_download_providers:
        release_download_providers.append(provider)


def release_downloads(release) -> list[dict]:
    downloads: list[dict] = []
    for provider in release_download_providers:
        downloads.extend(provider(release))
    return downloads
