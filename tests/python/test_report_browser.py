"""report.html in a real browser (issue 46, item 6): Debian's headless Chromium, driven through
its chromedriver by selenium, opens a run's and a sweep's page and finds no console error,
every image decoded and drawn, every table drawn with rows, and every link leading somewhere.

.ci/run installs chromium and chromium-driver; the test skips, saying why, only where they are
absent. The browser runs with no network, sync, updates or GPU, in a fresh profile.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote, urlparse

import pytest

import retx
from conftest import SMALL_SCENARIO, run_cli
from retx.report import write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run does)")

# What each page is checked for, in the page itself: images decoded with a size and drawn,
# tables drawn with rows, links to an element of the page or an existing file.
CHECKS = """
const images = [...document.images].map(i => ({src: i.src.slice(0, 40), alt: i.alt, complete: i.complete,
    width: i.naturalWidth, height: i.naturalHeight, shown: i.getBoundingClientRect().width}));
const tables = [...document.querySelectorAll('table')].map(t => ({rows: t.rows.length,
    shown: t.getBoundingClientRect().height}));
const links = [...document.querySelectorAll('a[href]')].map(a => ({href: a.getAttribute('href'),
    url: a.href, target: a.getAttribute('href').startsWith('#')
        ? document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1))) !== null : null}));
return {title: document.title, images, tables, links, headings: document.querySelectorAll('h2').length};
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # Never let selenium look for a driver or browser of its own on the network.
    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run's report and a sweep's (two variants x two seeds of the small scenario)."""
    folder = tmp_path_factory.mktemp("reports")
    (folder / "small.toml").write_text(SMALL_SCENARIO)
    assert run_cli("run", "small.toml", "--out", "run", "--quiet", cwd=folder).returncode == 0  # with its plots
    retx.sweep(folder / "small.toml", {"transport.cc": ["dcqcn", "hpcc"]}, seeds=2, out=folder / "sweep",
               workers=2, progress=False)
    return {"run": write_report(folder / "run"), "sweep": write_report(folder / "sweep", folder / "shared" / "sweep.html")}


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_the_report_loads_and_renders_in_chromium(browser: Any, pages: dict[str, Path], kind: str) -> None:
    page = pages[kind]
    browser.get_log("browser")  # drop anything an earlier page left
    browser.get(page.resolve().as_uri())
    found = browser.execute_script(CHECKS)
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert errors == [], f"console errors on the {kind} page: {errors}"
    assert found["title"].startswith(f"retx {kind}")
    assert found["headings"] >= 3
    assert found["images"], "a report without plots"
    for image in found["images"]:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, f"not decoded: {image}"
        assert image["shown"] > 0, f"not drawn: {image}"
    assert found["tables"]
    for table in found["tables"]:
        assert table["rows"] >= 1 and table["shown"] > 0, table
    assert found["links"], "the page's contents links are missing"
    for link in found["links"]:
        if link["href"].startswith("#"):
            assert link["target"], f"link to a missing section: {link['href']}"
        else:
            url = urlparse(link["url"])
            assert url.scheme == "file" and Path(unquote(url.path)).exists(), f"link leads nowhere: {link}"


def test_a_report_written_elsewhere_is_whole_there(browser: Any, pages: dict[str, Path]) -> None:
    # --out: the sweep's page away from its folder still shows every plot (all embedded).
    assert pages["sweep"].parent.name == "shared"
    browser.get(pages["sweep"].resolve().as_uri())
    widths = browser.execute_script("return [...document.images].map(i => i.naturalWidth)")
    assert widths and min(widths) > 0
