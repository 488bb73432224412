import pytest

from tests.submissions.factories import SubmissionFactory

pytestmark = pytest.mark.django_db


def test_anonymous_get_a_json_reason(api_client):
    response = api_client.get("/api/submissions/")
    assert response.status_code == 403
    assert response.json()["detail"]


def test_owners_see_only_their_own(api_client, contributor):
    mine = SubmissionFactory(contributor=contributor)
    other = SubmissionFactory()
    api_client.force_authenticate(contributor)
    data = api_client.get("/api/submissions/").json()
    assert [row["id"] for row in data["results"]] == [mine.pk]
    assert api_client.get(f"/api/submissions/{mine.pk}/").json()["title"] == mine.title
    response = api_client.get(f"/api/submissions/{other.pk}/")
    assert response.status_code == 404
    assert "detail" in response.json()


@pytest.mark.parametrize("role", ["researcher", "maintainer"])
def test_staff_see_every_submission(request, api_client, role):
    SubmissionFactory()
    SubmissionFactory()
    api_client.force_authenticate(request.getfixturevalue(role))
    assert api_client.get("/api/submissions/").json()["count"] == 2


def test_writes_are_refused(api_client, contributor):
    submission = SubmissionFactory(contributor=contributor)
    api_client.force_authenticate(contributor)
    response = api_client.delete(f"/api/submissions/{submission.pk}/")
    assert response.status_code in (403, 405)
    assert "detail" in response.json()
