"""What the API tests share: a token for a user, and requests that send it."""

from benchmarks.api import tokens


class Api:
    """The test client, sending a user's token as a script does."""

    def __init__(self, client, user, *, sees_addresses: bool = False):
        self.client = client
        self.row, self.token = tokens.issue(user, "test script", sees_addresses=sees_addresses)

    def headers(self) -> dict:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}"}

    def get(self, path: str, **params):
        return self.client.get(path, params, **self.headers())

    def post(self, path: str, data=None):
        return self.client.post(path, data, content_type="application/json", **self.headers())


def every_page(api: Api, path: str, **params) -> list[dict]:
    """The results of every page of a list, following its "next" links."""
    found, response = [], api.get(path, **params)
    while True:
        assert response.status_code == 200, response.content
        body = response.json()
        found += body["results"]
        if not body["next"]:
            return found
        response = api.client.get(body["next"], **api.headers())
