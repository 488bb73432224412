import pytest

from core.exceptions import ApplicationError
from review.kinds import Candidate
from review.sampling import allocate_proportionally, sample_size_for, stratified_sample


def candidates(sizes: dict[str, int]) -> list[Candidate]:
    out, next_id = [], 1
    for stratum, n in sizes.items():
        for _ in range(n):
            out.append(Candidate(object_id=next_id, strata={"subarea": stratum}))
            next_id += 1
    return out


def test_allocation_is_exact_and_proportional_within_one():
    sizes = {("a",): 50, ("b",): 30, ("c",): 20, ("d",): 7}
    shares = allocate_proportionally(sizes, 40)
    assert sum(shares.values()) == 40
    population = sum(sizes.values())
    for key, n in sizes.items():
        assert abs(shares[key] - 40 * n / population) < 1


def test_sample_respects_strata_and_is_deterministic_for_a_seed():
    pool = candidates({"law": 60, "privacy": 30, "creativity": 10})
    first = stratified_sample(pool, strata=["subarea"], size=20, seed=3)
    again = stratified_sample(pool, strata=["subarea"], size=20, seed=3)
    other = stratified_sample(pool, strata=["subarea"], size=20, seed=4)
    assert [c.object_id for c in first] == [c.object_id for c in again]
    assert [c.object_id for c in first] != [c.object_id for c in other]
    by_stratum = {}
    for c in first:
        by_stratum[c.strata["subarea"]] = by_stratum.get(c.strata["subarea"], 0) + 1
    assert by_stratum == {"law": 12, "privacy": 6, "creativity": 2}
    assert len({c.object_id for c in first}) == 20


def test_fraction_rounds_and_never_gives_an_empty_sample():
    assert sample_size_for(1000, size=None, fraction=0.105) == 105
    assert sample_size_for(3, size=None, fraction=0.01) == 1
    assert sample_size_for(3, size=10, fraction=None) == 3


@pytest.mark.parametrize(
    ("size", "fraction"), [(None, None), (5, 0.5), (0, None), (None, 0.0), (None, 1.5)]
)
def test_invalid_sample_requests_are_refused(size, fraction):
    with pytest.raises(ApplicationError):
        sample_size_for(100, size=size, fraction=fraction)


def test_sampling_nothing_is_refused():
    with pytest.raises(ApplicationError, match="nothing of this kind"):
        stratified_sample([], strata=[], size=3)
