"""comparison.html: configurations side by side, figures against each configuration's limits, the
price, the recommendation first; escaped; and in headless chromium (as tests/integration/
test_report_browser.py does) no sideways overflow at 420 px or 1,400 px, no console error, nothing
fetched, the recommendation on the first screen."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from cutover_prep.comparison.model import ComparisonInput, ComparisonResult
from cutover_prep.comparison.page import render_page
from cutover_prep.comparison.result import comparison_document
from cutover_prep.pricing.book import PriceBook
from tests.unit.test_comparison_result import BASE, findings


def html_of(doc: dict) -> str:
    """The page of comparison.json as written (and as a test changed it)."""
    return render_page(ComparisonResult.model_validate(doc))


def document(**changes: Any) -> dict:
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    c = ComparisonInput.model_validate(raw, strict=True)
    return comparison_document(c, {"gp2": findings([2950], scale=8), "io1": findings([2900], scale=8)}, {},
                               pricing=PriceBook(client=None), local=True,
                               cleanup={"deleted": ["emulated volume of gp2", "emulated volume of io1"], "left": []})


def test_the_page_shows_each_configuration_against_its_limits_and_the_recommendation_first():
    html = html_of(document())
    assert html.index('id="recommendation"') < html.index('id="cards"')
    assert "Recommended: io1" in html
    assert 'id="config-gp2"' in html and 'id="config-io1"' in html
    assert "the gp2 burst limit of 3,000 IOPS" in html and "the gp2 baseline of 300 IOPS" in html
    assert "the 3,000 provisioned IOPS" in html
    assert "$0.0878" in html and "$0.5001" in html
    assert "shipped price file (dated" in html and "Left: 0" in html
    assert "not proven its own" not in html  # nothing kept: no line
    assert "slowed 8.0×" in html


def test_the_page_names_what_the_cleanup_kept_as_not_its_own():
    doc = document()
    doc["cleanup"]["not_ours"] = ["customer-copy"]
    assert "not proven its own: customer-copy." in html_of(doc)


def test_names_and_reasons_are_escaped():
    doc = document()
    doc["recommendation"]["why"] = "<script>alert(1)</script>"
    doc["configurations"][0]["why"] = "<img src=x onerror=alert(1)>"
    html = html_of(doc)
    assert "<script>alert" not in html and "<img src=x" not in html and "&lt;script&gt;" in html


def test_a_comparison_without_recommendation_or_figures_still_renders():
    doc = document(targets={"min_read_iops": 99_999})
    doc["configurations"][1].update(status="FAILED", read_iops=None, read_mib_per_s=None, limits={"known": False})
    html = html_of(doc)
    assert "No recommendation" in html and "FAILED" in html


# -- in the browser ------------------------------------------------------------------------------------
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
from tests.integration.test_report_browser import ARGS, CHROMIUM, LAYOUT  # noqa: E402

browser_only = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (make browser)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no chromium (make browser)")
    with sync_api.sync_playwright() as playwright:
        b = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@browser_only
@pytest.mark.parametrize("width", [420, 1400])
def test_in_chromium_nothing_overflows_sideways_and_the_recommendation_is_first(browser, tmp_path, width):
    path = tmp_path / "comparison.html"
    doc = document()
    doc["configurations"][0]["why"] += " " + "averyveryverylongunbrokenword" * 6  # must wrap, not widen the page
    path.write_text(html_of(doc), encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    console, errors, requests = [], [], []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(path.as_uri(), wait_until="load")
        layout = page.evaluate(LAYOUT)
        assert layout["page"] <= width, f"the page is {layout['page']} px wide at {width} px"
        assert layout["tables"] == []
        assert console == [] and errors == []
        assert requests == [path.as_uri()]
        assert page.evaluate("document.body.firstElementChild.id") == "recommendation"
        box = page.locator("header#recommendation").bounding_box()
        assert box["y"] + box["height"] <= 900
        cards = page.locator("section.card").evaluate_all("els => els.map(e => e.getBoundingClientRect().right)")
        assert len(cards) == 2 and max(cards) <= width + 0.5
    finally:
        context.close()
