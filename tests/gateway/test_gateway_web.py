"""The web client's static pages, as the gateway serves them (docs/web.md)."""

from __future__ import annotations

import re

from croupier_gateway.web import WEB_DIR


def test_the_root_sends_a_browser_to_the_lobby(client):
    r = client.get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "/web/"
    lobby = client.get("/web/")
    assert lobby.status_code == 200 and lobby.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="js/lobby.js">' in lobby.text


def test_every_page_and_module_is_served(client):
    for path in sorted(WEB_DIR.rglob("*")):
        if path.is_file():
            rel = path.relative_to(WEB_DIR).as_posix()
            r = client.get(f"/web/{rel}")
            assert r.status_code == 200, rel
            assert r.content == path.read_bytes()
    assert client.get("/web/js/table.js").headers["content-type"].startswith("text/javascript")


def test_nothing_outside_the_static_folder_is_served(client):
    for path in ("/web/../app.py", "/web/..%2Fapp.py", "/web/%2e%2e/__init__.py", "/web/__init__.py", "/web/nope.js"):
        assert client.get(path).status_code == 404, path


PUBLIC_ROUTES = {
    "/v1/games", "/v1/tables", "/v1/tables?{}", "/v1/tables/{}", "/v1/tables/{}/seats/{}",
    "/v1/tables/{}/seats/{}/renew", "/v1/tables/{}/commands", "/v1/tables/{}/stream?from_version={}",
    "/v1/tables/{}/replay?{}",
    "/v1/operator/games/{}/replay?{}", "/v1/operator/games/{}/audit", "/v1/operator/games?status=over&limit=50",
    "/v1/operator/games/{}/fork", "/v1/operator/games/{}/seats/{}/token",
}


def test_the_pages_use_only_the_public_api():
    """The pages call the documented routes (docs/gateway.md) and nothing else."""
    found = set()
    for module in (WEB_DIR / "js").glob("*.js"):
        for url in re.findall(r"/v1/[^`\"'\s]*", module.read_text()):
            found.add(re.sub(r"\$\{[^}]*\}", "{}", url))
    assert found == PUBLIC_ROUTES
