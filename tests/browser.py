"""Debian's headless Chromium driven through its chromedriver by Selenium (both from ``make install``): the network
page's test and bench/network_page.py open gonkad/web in it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


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
