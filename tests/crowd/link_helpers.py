"""A worker going through a link batch on our pages, as the link and confirmation tests need."""

import re

from django.urls import reverse

from crowd.providers.link import link_token


def keys(html: str) -> list[str]:
    return re.findall(r'name="score-([0-9a-f]+)" value="0"', html)


def work_through(client, batch, worker="P1", value="1", params=None):
    """Open the link as a worker (``?worker=``, or the platform's ``params``) and score units until
    the completion page; returns that page."""
    url = reverse("crowd-link", args=[link_token(batch=batch)])
    response = client.get(url, params or {"worker": worker}, follow=True)
    for _ in range(10):
        html = response.content.decode()
        if "completion-code" in html or not keys(html):
            return response
        action = re.search(r'id="unit-form" action="([^"]+)"', html).group(1)
        response = client.post(action, {f"score-{k}": value for k in keys(html)}, follow=True)
    return response
