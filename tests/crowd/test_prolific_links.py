"""The links in Prolific's answers: the API token goes to PROLIFIC_API_URL's origin only, and a
list's next links are followed for at most MAX_PAGES pages."""

import pytest

from crowd.providers.prolific import MAX_PAGES, ProlificApi, ProlificError, ProlificProvider
from crowd.services.batches import crowd_batch_create, crowd_batch_publish, crowd_batch_sync

from .prolific_double import TOKEN, ProlificDouble, Recorder


@pytest.fixture
def prolific():
    with ProlificDouble(page_size=2) as double:
        yield double


@pytest.fixture
def api(prolific):
    return ProlificApi(base_url=prolific.url, token=TOKEN, sleep=lambda s: None)


@pytest.fixture
def elsewhere():
    with Recorder() as recorder:
        yield recorder


def test_a_next_link_to_another_server_is_refused_and_that_server_gets_no_token(dataset, prolific, api, elsewhere):
    # given a published study whose submissions' next link leads to another server
    batch = crowd_batch_create(dataset=dataset, provider="prolific", name="prolific", settings={"reward": "1.50"})
    crowd_batch_publish(batch=batch, provider=ProlificProvider(api=api))
    batch.refresh_from_db()
    prolific.next_link = lambda path, page: f"{elsewhere.url}api/v1/studies/{batch.external_id}/submissions/?page=2"
    # when the batch is synced
    with pytest.raises(ProlificError, match="not on PROLIFIC_API_URL's origin") as refused:
        crowd_batch_sync(batch=batch, provider=ProlificProvider(api=api))
    # then the error says the token was not sent, and the other server received nothing at all
    assert "token was not sent" in str(refused.value)
    assert elsewhere.headers == []


@pytest.mark.parametrize(
    "link",
    [
        "http://localhost:{port}/api/v1/studies/?page=2",  # another host name
        "https://127.0.0.1:{port}/api/v1/studies/?page=2",  # another scheme
        "http://127.0.0.1:{other}/api/v1/studies/?page=2",  # another port
        "//127.0.0.1:{other}/api/v1/studies/?page=2",  # no scheme, another port
        "http://127.0.0.1:{port}@127.0.0.1:{other}/api/v1/studies/?page=2",  # the host after the @
    ],
)
def test_a_next_link_off_the_apis_origin_is_not_requested(prolific, api, elsewhere, link):
    port, other = prolific.server.server_port, elsewhere.server.server_port
    prolific.next_link = lambda path, page: link.format(port=port, other=other) if page == 1 else None
    with pytest.raises(ProlificError, match="not on PROLIFIC_API_URL's origin"):
        list(api.pages("studies/"))
    assert len(prolific.requests) == 1 and elsewhere.headers == []


def test_a_next_link_on_the_apis_origin_is_followed(prolific, api):
    # the scheme and host in other letter cases, the default port of neither: the same origin
    upper = prolific.url.replace("http://", "HTTP://")
    prolific.next_link = lambda path, page: f"{upper}studies/?page={page + 1}" if page < 3 else None
    list(api.pages("studies/"))
    assert [r.path for r in prolific.requests] == ["/api/v1/studies/"] * 3


def test_next_links_that_never_end_stop_after_max_pages_with_an_error(prolific, api):
    # a list whose every page links to a next one (the double stops at 3,000 pages, for the test's sake)
    prolific.next_link = lambda path, page: f"{prolific.url}studies/?page={page + 1}" if page < 3_000 else None
    with pytest.raises(ProlificError, match=f"still a next page after {MAX_PAGES:,} pages"):
        list(api.pages("studies/"))
    assert len(prolific.requests) == MAX_PAGES == 1_000


def test_a_next_link_to_the_same_page_stops_at_the_page_limit(prolific):
    prolific.next_link = lambda path, page: f"{prolific.url}studies/" if len(prolific.requests) < 3_000 else None
    api = ProlificApi(base_url=prolific.url, token=TOKEN, sleep=lambda s: None, max_pages=20)
    with pytest.raises(ProlificError, match="after 20 pages"):
        list(api.pages("studies/"))
    assert len(prolific.requests) == 20


def test_a_redirect_to_another_server_is_refused_and_that_server_gets_no_token(prolific, api, elsewhere):
    prolific.redirects["/api/v1/studies/"] = f"{elsewhere.url}api/v1/studies/"
    with pytest.raises(ProlificError, match="redirected GET .* not on PROLIFIC_API_URL's origin"):
        list(api.pages("studies/"))
    assert elsewhere.headers == []


def test_a_redirect_on_the_apis_origin_is_followed(prolific, api):
    prolific.redirects["/api/v1/old-studies/"] = f"{prolific.url}studies/"
    assert list(api.pages("old-studies/")) == []
    assert [r.path for r in prolific.requests] == ["/api/v1/old-studies/", "/api/v1/studies/"]
