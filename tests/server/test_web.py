"""The web client's files on the WebSocket port (server/web, server/http.py)."""

from __future__ import annotations

import asyncio
import http.client

import pytest

from server import web

pytestmark = pytest.mark.redis


def raw_get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET `path` exactly as written (no client-side normalisation of '..' or '%')."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True, skip_host="Host" in (headers or {}))
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


async def get(server, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(raw_get, server.port, path, headers)


async def test_root_serves_the_web_client(giants_server) -> None:
    status, headers, body = await get(giants_server, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert b'<script type="module"' in body
    assert "default-src 'self'" in headers["content-security-policy"]
    port = giants_server.port
    assert f"connect-src 'self' ws://127.0.0.1:{port} wss://127.0.0.1:{port};" in headers["content-security-policy"]
    # A forged Host cannot inject into the policy.
    _, forged, _ = await get(giants_server, "/", {"Host": "evil; script-src *"})
    assert "script-src *" not in forged["content-security-policy"]
    assert "connect-src 'self';" in forged["content-security-policy"]


async def test_repeated_headers_do_not_break_the_page(giants_server) -> None:
    def twice() -> tuple[int, dict[str, str]]:
        conn = http.client.HTTPConnection("127.0.0.1", giants_server.port, timeout=5)
        try:
            conn.putrequest("GET", "/", skip_host=True)
            conn.putheader("Host", "a.example")
            conn.putheader("Host", "b.example")
            conn.putheader("If-None-Match", '"x"')
            conn.putheader("If-None-Match", '"y"')
            conn.putheader("Upgrade", "h2c")
            conn.putheader("Upgrade", "other")
            conn.endheaders()
            resp = conn.getresponse()
            resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()

    status, headers = await asyncio.to_thread(twice)
    assert status == 200
    assert "connect-src 'self';" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/js/protocol.js", "text/javascript; charset=utf-8"),
        ("/vendor/msgpack/index.mjs", "text/javascript; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
        ("/boards/index.js", "text/javascript; charset=utf-8"),
    ],
)
async def test_files_have_their_content_type(giants_server, path: str, content_type: str) -> None:
    status, headers, body = await get(giants_server, path)
    assert status == 200, path
    assert headers["content-type"] == content_type
    assert body == (web.STATIC_ROOT / path.lstrip("/")).read_bytes()


async def test_etag_revalidation_answers_304(giants_server) -> None:
    status, headers, _ = await get(giants_server, "/js/protocol.js")
    assert status == 200
    status, again, body = await get(giants_server, "/js/protocol.js", {"If-None-Match": headers["etag"]})
    assert status == 304 and body == b""
    assert again["etag"] == headers["etag"]


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/js/../../http.py",
        "/%2e%2e/http.py",
        "/js/%2e%2e/%2e%2e/__init__.py",
        "/..%2f__init__.py",
        "//etc/passwd",
        "/boards/README.md",  # shipped, but not a type the client needs
        "/.hidden.js",
        "/js\\protocol.js",
        "/nothing.js",
        "/js/",
    ],
)
async def test_hostile_or_unknown_paths_are_404(giants_server, path: str) -> None:
    status, headers, body = await get(giants_server, path)
    assert status == 404, path
    assert headers["content-type"].startswith("text/plain")
    assert b"import" not in body and b"def " not in body


async def test_query_string_is_ignored_and_health_still_answers(giants_server) -> None:
    assert (await get(giants_server, "/?room=x"))[0] == 200
    status, headers, _ = await get(giants_server, "/healthz")
    assert status == 200 and headers["content-type"] == "application/json"
    status, headers, _ = await get(giants_server, "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")


async def test_hello_reports_the_server_clock(giants_server, client_factory) -> None:
    import time

    client = await client_factory(giants_server.url, hello=False)
    before = time.time()
    data = await client.ok("hello", protocol=1)
    assert before - 1 <= data["time"] <= time.time() + 1
    bots = {b["name"]: b["games"] for b in data["bots"]}
    assert bots["random"] is None and "giants" not in bots["mcts"]
    # The bots listed are the ones create_room accepts.
    for name in bots:
        game = "giants" if bots[name] is None or "giants" in bots[name] else bots[name][0]
        await client.ok("create_room", game=game, bots={"1": name})


async def test_giants_serve_prints_the_address_to_open(serve_process) -> None:
    """README: the first command's output names the URL to open."""
    sp = await asyncio.to_thread(serve_process)
    port = sp.url.rsplit(":", 1)[1]
    expected = f"open http://127.0.0.1:{port}/ in a browser"
    for _ in range(100):
        if any(expected in line for line in sp.output):
            break
        await asyncio.sleep(0.05)
    assert any(expected in line for line in sp.output), sp.output
    status, headers, _ = await asyncio.to_thread(raw_get, int(port), "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
