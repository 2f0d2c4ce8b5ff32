"""Debian's headless Chromium driven through its chromedriver by Selenium (both from ``make install``): the network
page's tests and bench/network_page.py open gonkad/web in it, and read what it shows here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.wait import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
VALUES = "return arguments[0].map((s) => document.querySelector(s)?.dataset.value ?? null);"
"""The ``data-value`` of each selector's element (null where there is none), read in one script: the page's own
script replaces its rows every poll, and cannot between the reads of one script."""
ROWS = """return Array.from(document.querySelectorAll(arguments[0] + " > tr"), (row) => Object.assign(
  {}, row.dataset, ...Array.from(row.cells, (td) => ({ [td.dataset.field]: td.dataset.value }))));"""
"""Each row of a table body: its own ``data-`` attributes and each cell's ``data-value`` by its ``data-field``."""


@contextmanager
def headless_chromium(width: int = 1280, height: int = 900) -> Iterator[webdriver.Chrome]:
    """A fresh browser and driver, both quit on the way out whatever happened (--no-sandbox: the tests run as
    root)."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def shown_all(driver: webdriver.Chrome, selectors: list[str]) -> dict[str, str | None]:
    """The exact values the page shows (``data-value``: the text is grouped by thousands); None where the
    selector finds no element yet."""
    values: list[str | None] = driver.execute_script(VALUES, selectors)
    return dict(zip(selectors, values, strict=True))


def shown(driver: webdriver.Chrome, selector: str) -> str:
    """The exact value the page shows in the element ("" while it has none)."""
    return shown_all(driver, [selector])[selector] or ""


def rows(driver: webdriver.Chrome, body: str) -> list[dict[str, Any]]:
    """The rows the table body ``body`` (a selector) shows, all read at one moment."""
    found: list[dict[str, Any]] = driver.execute_script(ROWS, body)
    return found


def page_agrees(driver: webdriver.Chrome, figures: Callable[[], dict[str, str]], timeout_s: float = 20) -> None:
    """Waits until every selector of ``figures()`` (asked afresh each try: the chain moves on) shows its value."""
    seen: dict[str, str | None] = {}

    def agrees(_: object) -> bool:
        wanted = figures()
        seen.clear()
        seen.update(shown_all(driver, list(wanted)))
        return seen == wanted

    try:
        WebDriverWait(driver, timeout_s, poll_frequency=0.25).until(agrees)
    except Exception as error:
        raise AssertionError(f"the page shows {seen}, the chain {figures()}") from error
