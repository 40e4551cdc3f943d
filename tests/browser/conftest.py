"""Browser fixtures: Debian's Chromium driven by Playwright, pages that record their console, the replay app.

Helpers and the replay app live in ``browser_support.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from optional_groups import require, skip_or_fail
from support.browser import (
    CHROMIUM_ARGS,
    PageSession,
    ReplayRecord,
    ReplayServer,
    create_replay_app,
    find_chromium,
)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path to Chromium; fails under CI (``CI`` set) when missing, skips with the reason locally."""
    path = find_chromium()
    if path is None:
        skip_or_fail("Debian's chromium is not installed: run `apt-get install -y chromium` (as root)")
    return path


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium per test module (each test gets a fresh context, so nothing is shared).

    Module scope, not session: Playwright's sync API keeps an asyncio loop running on the main thread
    while it is open, and every later test that calls ``asyncio.run()`` would fail.
    """
    sync_playwright = require("playwright.sync_api", "browser").sync_playwright

    with sync_playwright() as playwright:
        # Playwright gives every launch a fresh temporary profile (user-data-dir) and removes it on close.
        instance = playwright.chromium.launch(
            executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page_session(browser: Any) -> Iterator[PageSession]:
    """A fresh browser context and page that records console messages and uncaught errors."""
    context = browser.new_context(viewport={"width": 1000, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    session = PageSession(page=page)
    page.on("console", lambda message: session.console.append((message.type, message.text)))
    page.on("pageerror", lambda error: session.page_errors.append(str(error)))
    try:
        yield session
    finally:
        context.close()


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    """The replay app on 127.0.0.1:<free port>."""
    from kokoro_endpoint.serving.runner import running_server

    record = ReplayRecord()
    with running_server(create_replay_app(record)) as server:
        yield ReplayServer(url=server.base_url + "/", record=record, server=server)
