"""Regenerates docs/network-page.png: the network page (gonkad/web) of a running localnet in headless Chromium,
after a few paid chats through its TAs so that it shows inferences and their payments.

    .venv/bin/python -m gonkad localnet start --validators 1 --home /tmp/page-net --wait 120
    PYTHONPATH=$PWD .venv/bin/python bench/network_page.py --home /tmp/page-net
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from gonka import Gonka
from gonkad import localnet
from sdk.keyring.keyring import Keyring

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser import headless_chromium  # noqa: E402  (the tests' helper, so the browser is set up one way)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=Path("localnet/home"))
    parser.add_argument("--chats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("docs/network-page.png"))
    args = parser.parse_args()
    net = localnet.status(args.home)
    if args.chats and net.get("transfer_agents"):
        key = Keyring(args.home, "test").private_key("faucet")
        client = Gonka(ta_urls=[ta["url"] for ta in net["transfer_agents"]], key=key)
        for i in range(args.chats):
            prompt = f"Hello, Gonka! ({i})"
            client.chat.completions.create(
                model=net["model"], max_tokens=16, messages=[{"role": "user", "content": prompt}]
            )
    with headless_chromium(1280, 780) as browser:
        browser.get(net["nodes"][0]["api"] + "/")

        def shows_the_chats(driver: object) -> bool:
            status = browser.find_element(By.ID, "status").get_attribute("data-state")
            finished = browser.find_elements(By.CSS_SELECTOR, 'td[data-field="status"][data-value="finished"]')
            return status == "live" and len(finished) >= min(args.chats, 10)

        WebDriverWait(browser, 60).until(shows_the_chats)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(args.out)), args.out
    print(args.out, args.out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
