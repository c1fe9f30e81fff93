"""Browser tests of the web client: a real Chromium driven by Playwright (async API).

Fixtures shared by every test under tests/web (web-core's and web-boards'):

- `browser` (session): Debian's Chromium (`/usr/bin/chromium`, or `GIANTS_CHROMIUM`)
  launched by Playwright with `executable_path` (no browser download). Missing
  browser or Playwright: the tests *fail* under CI (`CI=true`) and are skipped with the
  reason elsewhere.
- `web_server`: a real `GiantsServer` on a free port (test Redis, own key prefix);
  `web_server.http_url` is the page address, `web_server.url` the WebSocket one.
- `open_page`: `page = await open_page(web_server, name="ann")` opens the client in a
  fresh browser context (its own localStorage = its own person), waits until it is
  connected, and records console errors and uncaught exceptions; the test fails at
  teardown if any page logged one. `open_page(..., path="#/room/ID")` lands on a route;
  `open_page(..., context=page.context)` opens a second tab of the same person;
  `allow_console=("text",)` tolerates console errors containing that text (Chromium
  itself logs each failed WebSocket connection while the server is down).
- `server_client`: `await server_client(web_server, name)` is a `client_cli` Client on
  the same server, for setting up rooms or playing the other seat from Python.
- `web_helpers.py` (import it as `from web_helpers import ...`): `screenshot(page,
  name)` saves `docs/web/<name>.png` (shown in docs/web.md); `wait_connected(page)`,
  `room_id_of(page)`, `wait_until(page, "() => js")` (use it, not Playwright's
  `wait_for_function`, whose eval the page's Content-Security-Policy refuses).

They use the test Redis but are not marked `redis`: .ci/run's second pass against an
external Redis re-runs the Redis-backed server tests, and repeating the browser tests
there would add minutes and test nothing new.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from web_helpers import wait_connected

from server.app import GiantsServer

# Messages Chromium logs that are not the page's fault (none expected so far).
IGNORED_CONSOLE: tuple[str, ...] = ()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(f"browser tests skipped: {reason}")


def chromium_path() -> str | None:
    for candidate in (os.environ.get("GIANTS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Any]:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (pip install -e '.[test]')")
    path = chromium_path()
    if path is None:
        _unavailable("no Chromium found (apt-get install chromium, or set GIANTS_CHROMIUM)")
    pw = await async_playwright().start()
    try:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        launched = await pw.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
    except Exception as exc:
        await pw.stop()
        _unavailable(f"Chromium at {path} did not start: {exc}")
    yield launched
    await launched.close()
    await pw.stop()


@pytest.fixture
async def web_server(server_factory: Callable[..., Awaitable[GiantsServer]]) -> GiantsServer:
    server = await server_factory()
    server.http_url = f"http://127.0.0.1:{server.port}/"  # type: ignore[attr-defined]
    return server


OpenPage = Callable[..., Awaitable[Any]]


@pytest.fixture
async def open_page(browser: Any) -> AsyncIterator[OpenPage]:
    contexts: list[Any] = []
    problems: list[str] = []

    async def open_(server: GiantsServer, path: str = "", name: str | None = None, context: Any = None,
                    viewport: dict[str, int] | None = None, allow_console: tuple[str, ...] = ()) -> Any:
        if context is None:
            context = await browser.new_context(viewport=viewport or {"width": 1200, "height": 900})
            contexts.append(context)
            if name:
                # The name is a preference in localStorage, set before the page loads.
                host = f"127.0.0.1:{server.port}"
                await context.add_init_script(
                    f"try {{ if (!localStorage.getItem('giants-table|{host}|name')) "
                    f"localStorage.setItem('giants-table|{host}|name', JSON.stringify({name!r})); }} catch (e) {{}}"
                )
        page = await context.new_page()
        label = f"{name or 'page'}:{path or '/'}"

        def on_console(msg: Any) -> None:
            if msg.type == "error" and not any(s in msg.text for s in (*IGNORED_CONSOLE, *allow_console)):
                problems.append(f"[{label}] console error: {msg.text}")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: problems.append(f"[{label}] uncaught: {exc}"))
        await page.goto(f"http://127.0.0.1:{server.port}/{path}")
        await wait_connected(page)
        return page

    yield open_
    for context in contexts:
        await context.close()
    assert not problems, "the pages logged errors:\n" + "\n".join(problems)


@pytest.fixture
async def server_client() -> AsyncIterator[Callable[..., Awaitable[Any]]]:
    from client_cli.client import Client

    clients: list[Any] = []

    async def make(server: GiantsServer, name: str = "py") -> Any:
        client = Client(server.url, name=name)
        await client.__aenter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.__aexit__(None, None, None)
