"""Open the built book in headless Chromium: pages load offline and figures work.

Every page of the HTML book is opened from disk (``file://``) in Debian's Chromium, driven
by Selenium through Debian's chromedriver (never a downloaded browser). For each page:

- no console errors (``goog:loggingPrefs`` browser log, level SEVERE; see
  :func:`_console_errors` for the one plotly.js message tolerated after a slider click);
- every request the page makes (performance log, ``Network.requestWillBeSent``) is a
  ``file://`` URL inside the build folder, or inline ``data:``/``blob:``/``about:``;
- every plotly figure (``div.plotly-graph-div``) has drawn (an ``svg.main-svg``, and a
  ``canvas`` for WebGL traces);
- for every figure with a layout slider, clicking the slider's next step (as a reader would;
  plotly.js then runs the step's restyle/update/animate) changes the plotted data (the x, y,
  z arrays or the visible flags of the traces);
- for every figure with a dropdown menu (the 3-D views' point count), choosing another entry
  changes the plotted data;
- at a laptop's size (1,400 x 800 px), every analysis chapter shows its key figure (the first after
  the findings box) on the first screen: it starts above 800 px, measured once the page and its
  fonts have loaded.

Two books are checked: a fixture book (``tests/fixtures/slider_chapter.py``: synthetic,
deterministic figures with restyle, animate and WebGL sliders) built and executed in a
temporary folder, and the committed executed chapters in ``book/`` rendered (not executed)
into a temporary folder. Screenshots go to ``artifacts/screenshots/``.

Chromium and chromedriver are installed with apt-get when missing and the test runs as root;
otherwise the tests are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from fixtures.book_project import bare_remote, git_project, make_project

from lmgeometry.report.book import build_book, build_html, chapter_parameters, toc_docnames
from lmgeometry.report.toc import page_file

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--window-size=1280,1000",
    # WebGL (plotly's 3-D scatter) through the software rasterizer, since there is no GPU.
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
]
LOCAL_SCHEMES = ("data:", "blob:", "about:")
# A slow machine must not fail a test: the waits below poll page state (figures drawn, data
# replotted) until it is reached; a page slower than SLOW_S is reported as slow, and only one
# that has not drawn after GIVE_UP_S is a fault (the slowest page measured, chapter 1 at
# 1,400 px on a 2-core machine loaded by eight other jobs, drew all its figures in 55 s).
SLOW_S = 30
GIVE_UP_S = 300
# A reader's click (slider step, menu entry) that has not replotted after this long is a fault.
REPLOT_GIVE_UP_S = 60

# The analysis chapters (book/01_ to book/89_; not the introduction, scorecard or About page)
# open with a findings box.
FINDINGS_PAGE = re.compile(r"^(0[1-9]|[1-8]\d)_")
# On a laptop's first screen (width, height in px), every analysis chapter shows the answer and
# the key figure: the first figure after the findings box starts above the screen's bottom edge.
LAPTOP_SCREEN = (1400, 800)
KEY_FIGURE_PAGE = FINDINGS_PAGE


def _install_chromium() -> str | None:
    """Install Debian's chromium and chromium-driver if missing; a skip reason on failure."""
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return None
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return (
            f"{CHROMIUM} or {CHROMEDRIVER} is missing and cannot be installed here (needs root "
            "and apt-get): run `apt-get install -y chromium chromium-driver`"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in ([apt, "update", "-q"],
                    [apt, "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=600",
                     "chromium", "chromium-driver"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return (f"installing chromium failed ({' '.join(command)}, exit "
                    f"{done.returncode}): {(done.stderr or done.stdout)[-500:]}")
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        return f"apt-get installed chromium but {CHROMIUM} / {CHROMEDRIVER} are still missing"
    return None


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A headless Chromium with browser and performance logging."""
    reason = _install_chromium()
    if reason:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                               options=options)
    browser.set_page_load_timeout(60)
    browser.set_script_timeout(GIVE_UP_S + 30)  # the page script reports its own timeout
    try:
        yield browser
    finally:
        browser.quit()


_WAIT_FOR_FIGURES = """
const done = arguments[arguments.length - 1];
const deadline = Date.now() + arguments[0] * 1000;
// WebGL trace types (draw on a canvas); "heatmap" is SVG although it ends in "map"
const WEBGL = new RegExp("(3d|gl)$|^(cone|streamtube|volume|isosurface)$|mapbox|"
                         + "^(scatter|choropleth|density)map$");
const state = () => [...document.querySelectorAll("div.plotly-graph-div")].map(gd => ({
  id: gd.id,
  svg: gd.querySelectorAll("svg.main-svg").length,
  canvas: gd.querySelectorAll("canvas").length,
  gl: (gd._fullData || []).some(t => WEBGL.test(t.type)),
  sliders: ((gd.layout || {}).sliders || []).length,
  menus: ((gd.layout || {}).updatemenus || []).length,
  height: gd.offsetHeight,
}));
const ready = s => s.every(f => f.svg > 0 && (!f.gl || f.canvas > 0));
(function poll() {
  if (window.lmgDrawAll) window.lmgDrawAll();  // figures off screen are drawn on approach
  const s = state();
  if (document.readyState === "complete" && (ready(s) || Date.now() > deadline)) {
    done(s);
  } else {
    setTimeout(poll, 100);
  }
})();
"""

_WAIT_FOR_FIRST_SCREEN = """
// Until every figure in the viewport is drawn (what a reader sees first), without scrolling.
const done = arguments[arguments.length - 1];
const deadline = Date.now() + arguments[0] * 1000;
const onScreen = gd => { const r = gd.getBoundingClientRect();
                         return r.bottom > 0 && r.top < window.innerHeight; };
(function poll() {
  const shown = [...document.querySelectorAll("div.plotly-graph-div")].filter(onScreen);
  if (document.readyState === "complete"
      && (shown.every(gd => gd.querySelector("svg.main-svg")) || Date.now() > deadline)) {
    done(shown.length);
  } else {
    setTimeout(poll, 50);
  }
})();
"""

_LAYOUT = """
// What a reader would see wrong at this width: code, overflow, unnumbered or titled figures.
// folded (hide-input puts a cell in a closed <details>) is not visible
const visible = el => !el.closest("details:not([open])") && el.getClientRects().length > 0
  && getComputedStyle(el).visibility !== "hidden";
const problems = [];
const code = [...document.querySelectorAll("div.cell_input")].filter(visible);
if (code.length) problems.push(`${code.length} code cell(s) visible`);
const width = document.documentElement.clientWidth;
if (document.documentElement.scrollWidth > width + 1) {
  const wide = [...document.querySelectorAll("body *")].filter(
    el => visible(el) && el.getBoundingClientRect().right > width + 1
      && !el.closest(".lmg-scroll"));
  const names = wide.slice(0, 3).map(el => el.tagName.toLowerCase() + "." + el.className);
  problems.push(`page is ${document.documentElement.scrollWidth} px wide in a ${width} px `
                + `viewport (${names.join(", ")})`);
}
for (const gd of document.querySelectorAll("div.plotly-graph-div")) {
  const caption = gd.closest("figure") && gd.closest("figure").querySelector("figcaption");
  if (!caption || !/^Figure \\d+\\./.test(caption.textContent.trim()))
    problems.push(`figure ${gd.id} has no numbered caption`);
  if (gd.querySelector(".g-gtitle .gtitle"))
    problems.push(`figure ${gd.id} has a title inside the plot (it belongs in the caption)`);
}
for (const table of document.querySelectorAll("div.cell_output table")) {
  const caption = table.closest("figure") && table.closest("figure").querySelector("figcaption");
  if (!caption || !/^Table \\d+\\./.test(caption.textContent.trim()))
    problems.push("a table has no numbered caption");
}
return problems.concat(readingFaults(arguments[0] || [], arguments[1]));
"""

_READING = """
// Debris a reader would meet: plotly's default trace names in a legend, "nan" cells, token
// strings parsed as HTML elements, parameter names in prose, program output, a chapter without
// its findings box, and subplot titles or annotations drawn over each other.
function readingFaults(parameters, needsFindings) {
  const visible = el => !el.closest("details:not([open])") && el.getClientRects().length > 0;
  const problems = [];
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  for (const gd of document.querySelectorAll("div.plotly-graph-div")) {
    const names = [...gd.querySelectorAll(".legendtext")].map(t => t.textContent.trim());
    for (const name of names.filter(n => /^trace \\d+$/.test(n)))
      problems.push(`figure ${gd.id} has a legend entry named "${name}"`);
    const boxes = [...gd.querySelectorAll(".g-gtitle text, .annotation-text")]
      .filter(t => t.textContent.trim()).map(t => [t.textContent.trim(),
                                                   t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++)
        if (overlap(boxes[i][1], boxes[j][1]))
          problems.push(`figure ${gd.id}: "${boxes[i][0]}" overlaps "${boxes[j][0]}"`);
  }
  for (const td of document.querySelectorAll("td, th"))
    // pandas' missing values as printed; a lower-case "none" is a label (the control "none")
    if (/^(nan|NaN|NaT|<NA>|None)$/.test(td.textContent.trim()))
      problems.push(`a table cell reads "${td.textContent.trim()}"`);
  const tokens = "s, bos, eos, pad, unk, cls, sep, mask, endoftext";
  for (const el of document.querySelectorAll(
      tokens.split(", ").map(t => `div.cell_output ${t}`).join(", ")))
    problems.push(`a token string became an HTML <${el.tagName.toLowerCase()}> element `
                  + `(escape it): "${el.parentElement.textContent.trim().slice(0, 60)}"`);
  const stdout = [...document.querySelectorAll("div.cell_output .output.stream")]
    .filter(el => visible(el) && el.textContent.trim());
  if (stdout.length)
    problems.push(`program output on the page: "${stdout[0].textContent.trim().slice(0, 60)}"`);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const pattern = parameters.length
    ? new RegExp(`(^|[^A-Za-z0-9_])(${parameters.join("|")})(?![A-Za-z0-9_])`) : null;
  for (let node = walker.nextNode(); pattern && node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (el.closest("div.cell_input, script, style, nav, .bd-sidebar-primary")) continue;
    const found = node.textContent.match(pattern);
    if (found) problems.push(`parameter name ${found[2]} in the text (give its value): `
                             + `"${el.textContent.trim().slice(0, 80)}"`);
  }
  if (needsFindings && !document.querySelector(".lmg-findings"))
    problems.push("chapter page without its findings box (claims.findings_box)");
  return problems;
}
"""

_KEY_FIGURE = """
// Where the chapter's key figure (its first figure after the findings box) starts, in px from
// the top of the page, once the page and its fonts have loaded: [box found, top or null].
const done = arguments[arguments.length - 1];
const measure = () => {
  const box = document.querySelector(".lmg-findings");
  const figure = box && [...document.querySelectorAll("figure.lmg-figure")].find(
    f => box.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING);
  done([Boolean(box),
        figure ? Math.round(figure.getBoundingClientRect().top + window.scrollY) : null]);
};
const loaded = () => document.fonts.ready.then(measure);
if (document.readyState === "complete") loaded();
else window.addEventListener("load", loaded, {once: true});
"""

_PLOTTED = """
const gd = document.getElementById(arguments[0]);
// _fullData: what plotly draws, with defaults filled in (visible: undefined -> true)
return JSON.stringify(gd._fullData.map(t => [t.x, t.y, t.z, t.visible]));
"""


_SETTLE = """
// Wait two animation frames: plotly runs a slider's method in requestAnimationFrame, and
// promise rejections are reported after it.
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
"""

_WATCH_INTERRUPTS = """
const gd = document.getElementById(arguments[0]);
gd.on("plotly_animationinterrupted", () => { window.__plotlyInterrupted = true; });
"""


def _figure(driver: object, fig_id: str) -> object:
    """The figure's element, scrolled into view."""
    from selenium.webdriver.common.by import By

    gd = driver.find_element(By.ID, fig_id)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", gd)
    return gd


def _click_until_replotted(driver: object, fig_id: str, element: object, before: object,
                           what: str) -> str | None:
    """Click ``element``; None once the plotted data differs from ``before``, else a problem."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).move_to_element(element).click().perform()
    return _until_replotted(driver, fig_id, before, what)


def _report_slow(what: str, seconds: float) -> None:
    """Warn (never fail) when a page took longer than :data:`SLOW_S` to do ``what``."""
    if seconds > SLOW_S:
        warnings.warn(f"slow page: {what} took {seconds:.0f} s (over {SLOW_S} s; a loaded "
                      "machine, or a page that got heavier)", stacklevel=2)


def _until_replotted(driver: object, fig_id: str, before: object, what: str) -> str | None:
    """None once the plotted data differs from ``before``, else a problem (slow: reported)."""
    from selenium.webdriver.support.ui import WebDriverWait

    start = time.perf_counter()
    try:
        WebDriverWait(driver, REPLOT_GIVE_UP_S).until(
            lambda d: d.execute_script(_PLOTTED, fig_id) != before)
    except Exception:  # selenium's TimeoutException
        return f"{what} did not change the plotted data within {REPLOT_GIVE_UP_S} s"
    _report_slow(f"{what} on figure {fig_id}", time.perf_counter() - start)
    driver.execute_async_script(_SETTLE)
    return None


def _key_figure_problem(driver: object) -> str | None:
    """None when the page's key figure starts on a laptop's first screen (:data:`LAPTOP_SCREEN`;
    measured from the top of the page, so the window's height does not matter), else a problem."""
    box, top = driver.execute_async_script(_KEY_FIGURE)
    width, height = LAPTOP_SCREEN
    if not box:  # reported as a missing findings box (_READING)
        return None
    if top is None:
        return "no figure (figure.lmg-figure) after the findings box"
    if top >= height:
        return (f"the key figure (the first after the findings box) starts at {top} px, below a "
                f"laptop's first screen ({width} x {height} px): tighten the page head or the "
                "box (report/_ext/lmgeometry.css), or shorten the text above the figure")
    return None


def _move_slider(driver: object, fig_id: str) -> str | None:
    """Click the next step of a figure's first slider, as a reader would.

    Returns
    -------
    str or None
        What went wrong, or None when the plotted data (x, y, z, visible) changed.
    """
    from selenium.webdriver.common.by import By

    gd = _figure(driver, fig_id)
    groups = gd.find_elements(By.CSS_SELECTOR, "g.slider-group")
    if not groups:
        return "no slider drawn"
    labels = groups[0].find_elements(By.CSS_SELECTOR, "g.slider-label-group")
    if len(labels) < 2:
        return f"slider has {len(labels)} step label(s)"
    active_label = driver.execute_script(
        "const s = document.getElementById(arguments[0]).layout.sliders[0];"
        "return String(s.steps[s.active || 0].label);", fig_id)
    # plotly may draw fewer labels than steps when they crowd: pick one by its text
    others = [i for i, label in enumerate(labels) if label.text.strip() != active_label]
    if not others:
        return "every drawn slider label is the active step"
    target = others[0]
    before = driver.execute_script(_PLOTTED, fig_id)
    driver.execute_script(_WATCH_INTERRUPTS, fig_id)
    return _click_until_replotted(driver, fig_id, labels[target], before,
                                  f"clicking step {target}")


def _use_dropdown(driver: object, fig_id: str) -> str | None:
    """Open a figure's first dropdown menu and pick another entry, as a reader would.

    The chapters' 3-D views offer a point count there (and the senses views a word). Returns
    what went wrong, or None when the plotted data (x, y, z, visible) changed.
    """
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    gd = _figure(driver, fig_id)
    lists = gd.find_elements(By.XPATH, "preceding-sibling::label[@class='lmg-menu']/select")
    if lists:  # the menu drawn as a native list above the figure (plots.SELECT_MENU)
        return _use_select(driver, fig_id, lists[0])
    headers = gd.find_elements(By.CSS_SELECTOR, "g.updatemenu-header-group")
    if not headers:
        return "no dropdown drawn"
    before = driver.execute_script(_PLOTTED, fig_id)
    active = headers[0].text.split("\n")[0].strip()  # before opening: plotly redraws it
    ActionChains(driver).move_to_element(headers[0]).click().perform()
    try:
        WebDriverWait(driver, REPLOT_GIVE_UP_S).until(
            lambda d: len(gd.find_elements(By.CSS_SELECTOR, "g.updatemenu-dropdown-button")) > 1)
    except Exception:  # selenium's TimeoutException
        return "clicking the dropdown did not open it"
    buttons = [b for b in gd.find_elements(By.CSS_SELECTOR, "g.updatemenu-dropdown-button")
               if b.text.strip() != active]
    if not buttons:
        return "the dropdown offers no other entry"
    label = buttons[0].text.strip()
    return _click_until_replotted(driver, fig_id, buttons[0], before, f"choosing {label!r}")


def _use_select(driver: object, fig_id: str, element: object) -> str | None:
    """Pick the last entry of a figure's native list menu; None once the plot changed."""
    from selenium.webdriver.support.ui import Select

    menu = Select(element)
    if len(menu.options) < 2:
        return "the list offers no other entry"
    if not element.is_displayed() or element.size["width"] > driver.execute_script(
            "return document.documentElement.clientWidth"):
        return "the list is hidden or wider than the page"
    before = driver.execute_script(_PLOTTED, fig_id)
    label = menu.options[-1].text
    menu.select_by_index(len(menu.options) - 1)
    return _until_replotted(driver, fig_id, before, f"choosing {label!r} in the list")


def _console_errors(entries: list[dict], name: str, interrupted: bool) -> list[str]:
    """SEVERE browser-log entries as problems, and plotly's warning that the page has more
    WebGL figures than the browser keeps (the oldest then go blank while their data stay).

    One entry is tolerated, and only after a slider click interrupted a plotly animation:
    plotly.js rejects the interrupted ``Plotly.animate`` promise without a reason and its
    slider does not catch it, which Chromium logs as ``Uncaught (in promise) undefined``
    from plotly.min.js. It happens when a click on an animate slider is handled twice (the
    second step interrupts the first); the slider still lands on the clicked step.
    """
    problems = []
    for entry in entries:
        message = entry["message"]
        if "Too many active WebGL contexts" in message:
            problems.append(f"{name}: more WebGL figures than the browser keeps; the oldest "
                            f"go blank ({message[-80:]})")
            continue
        if entry["level"] != "SEVERE":
            continue
        if (interrupted and "plotly.min.js" in message
                and message.endswith("Uncaught (in promise) undefined")):
            continue
        problems.append(f"{name}: console error: {message}")
    return problems


def _page_weight(page: Path, urls: list[str], html_dir: Path) -> tuple[int, int]:
    """Bytes of the page's HTML, and of the HTML with every local file it requested."""
    files = {page} | {Path(unquote(urlsplit(u).path)) for u in urls
                      if u.startswith(html_dir.as_uri() + "/")}
    return page.stat().st_size, sum(f.stat().st_size for f in files if f.is_file())


def _prose_parameters(folder: Path) -> list[str]:
    """The chapters' parameter names a reader must not meet in the text (a value belongs
    there): every name with an underscore in the parameters cell of each executed chapter."""
    import nbformat

    names = set()
    for docname in toc_docnames(folder / "_toc.yml"):
        notebook = page_file(folder, docname)
        if notebook.suffix == ".ipynb":
            names |= set(chapter_parameters(nbformat.read(notebook, as_version=4), docname))
    return sorted(n for n in names if "_" in n)


def _check_book(driver: object, html_dir: Path, label: str,
                widths: tuple[int, ...] = (1400,), layout: bool = False,
                parameters: Sequence[str] = ()) -> list[str]:
    """Open every page of ``html_dir`` at each width; return the problems found.

    At the first width the figures' sliders and menus are used; at every width, with
    ``layout``, the page is checked as a reader sees it (:data:`_LAYOUT`), and at a laptop's
    width a chapter's key figure must start on the first screen (:func:`_key_figure_problem`).
    The page weight (its HTML, and everything it loaded) and the time until every figure had
    drawn are printed. ``parameters``: names that must not appear in a page's text.
    """
    problems: list[str] = []
    html_dir = html_dir.resolve()
    # every page, not the theme's template fragments under _static/
    pages = sorted(p for p in html_dir.rglob("*.html") if "_static" not in p.parts)
    assert pages, f"no HTML pages in {html_dir}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in widths:
        driver.set_window_size(width, 1000)
        for page in pages:
            problems += _check_page(driver, html_dir, page, f"{label}-{width}",
                                    interact=width == widths[0], layout=layout,
                                    parameters=parameters,
                                    key_figure=layout and width == LAPTOP_SCREEN[0])
    return problems


def _check_page(driver: object, html_dir: Path, page: Path, label: str, interact: bool,
                layout: bool, parameters: Sequence[str] = (),
                key_figure: bool = False) -> list[str]:
    """One page of :func:`_check_book`; with ``key_figure``, a chapter of
    :data:`KEY_FIGURE_PAGE` must show its key figure on a laptop's first screen."""
    problems: list[str] = []
    allowed = html_dir.as_uri() + "/"
    name = f"{page.relative_to(html_dir).as_posix()} ({label})"
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get_log("performance")  # forget what the browser did before this page
    start = time.perf_counter()
    driver.get(page.as_uri())
    first = driver.execute_async_script(_WAIT_FOR_FIRST_SCREEN, GIVE_UP_S)
    first_s = time.perf_counter() - start
    figures = driver.execute_async_script(_WAIT_FOR_FIGURES, GIVE_UP_S)
    drawn_s = time.perf_counter() - start
    _report_slow(f"{name}: drawing every figure", drawn_s)
    # loading the page: no console error at all
    problems += _console_errors(driver.get_log("browser"), name, interrupted=False)
    for fig in figures:
        if fig["svg"] == 0 or (fig["gl"] and fig["canvas"] == 0):
            problems.append(f"{name}: figure {fig['id']} did not draw ({fig})")
        if fig["height"] < 100:
            problems.append(f"{name}: figure {fig['id']} is {fig['height']} px high")
    if layout:
        needs_findings = bool(FINDINGS_PAGE.match(page.name))
        # a chapter's parameter names; the API reference names functions' parameters
        chapter = page.relative_to(html_dir).parts[0] == "book"
        problems += [f"{name}: {p}" for p in driver.execute_script(
            _READING + _LAYOUT, list(parameters) if chapter else [], needs_findings)]
        problem = _key_figure_problem(driver) if (
            key_figure and KEY_FIGURE_PAGE.match(page.name)) else None
        if problem:
            problems.append(f"{name}: {problem}")
    for key, what, act in (("sliders", "slider", _move_slider),
                           ("menus", "dropdown", _use_dropdown)):
        for fig in figures if interact else []:
            problem = act(driver, fig["id"]) if fig[key] else None
            if problem:
                problems.append(f"{name}: {what} of figure {fig['id']}: {problem}")
    shot = SCREENSHOTS / (f"{label}__{page.relative_to(html_dir).as_posix()}"
                          .replace("/", "__").removesuffix(".html") + ".png")
    driver.save_screenshot(str(shot))
    interrupted = bool(driver.execute_script("return window.__plotlyInterrupted === true;"))
    # leave the page first, so that everything it logged or requested is attributed to it
    driver.get("about:blank")
    problems += _console_errors(driver.get_log("browser"), name, interrupted)
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] != "Network.requestWillBeSent":
            continue
        url = message["params"]["request"]["url"]
        urls.append(url)
        if not (url.startswith(allowed) or url.startswith(LOCAL_SCHEMES)):
            problems.append(f"{name}: request leaves the book's file tree: {url[:200]}")
    html_bytes, total = _page_weight(page, urls, html_dir)
    print(f"[page] {name}: {html_bytes / 1e6:.2f} MB HTML, {total / 1e6:.2f} MB loaded, "
          f"usable in {first_s:.1f} s ({first} figures on the first screen), "
          f"all {len(figures)} figures drawn in {drawn_s:.1f} s")
    return problems


@pytest.mark.slow
def test_fixture_book_in_browser(driver: object, tmp_path: Path) -> None:
    """A fixture book with restyle, animate and WebGL sliders works offline; a legend click
    on a categorical 3-D view grays the other category instead of hiding it; a heatmap's
    model list redraws it with another model's matrix."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"})
    html_dir = build_book(root=project)
    problems = _check_book(driver, html_dir, "fixture", widths=(1400, 420), layout=True)
    assert not problems, "\n".join(problems)
    # the fixture's six figures were found and drawn
    driver.get((html_dir / "book" / "00_fixture.html").as_uri())
    figures = driver.execute_async_script(_WAIT_FOR_FIGURES, GIVE_UP_S)
    assert [f["sliders"] for f in figures] == [1, 1, 1, 1, 1, 0]
    assert [f["gl"] for f in figures] == [False, False, True, True, False, False]
    # what plotly draws is what the chapter computed: the 3-D helix, decoded from 16-bit steps
    drawn = driver.execute_script(
        "const t = document.getElementById(arguments[0]).data[0];"
        "return [Array.from(t.x), Array.from(t.z)];", figures[2]["id"])
    t = np.linspace(0.0, 4.0 * np.pi, 300)
    for values, expected in zip(drawn, (np.cos(t), t), strict=True):
        step = (expected.max() - expected.min()) / 65535
        np.testing.assert_allclose(values, expected, atol=step)
    assert _legend_click_colours(driver, figures[3]["id"], "first turn") == [
        "#c8c8c8", "first turn"]
    # the list menu replaced plotly's dropdown, and picking in it switches the item
    gd = _figure(driver, figures[4]["id"])
    assert not gd.find_elements("css selector", "g.updatemenu-header-group")
    assert _use_dropdown(driver, figures[4]["id"]) is None
    # hover text defined by the 3-D view and used by the list view (sent once for the page)
    texts = driver.execute_script(
        "return Array.from(arguments).map(id => document.getElementById(id).data"
        "  .map(t => Array.from(t.text || [])).flat().sort());",
        figures[3]["id"], figures[4]["id"])
    assert len(texts[0]) == 300 and texts[1] == sorted(texts[0] * 2)
    # the heatmap's model list draws the last model's matrix, on the same colour scale
    shape = ("const t = document.getElementById(arguments[0]).data[0];"
             "return [t.z.length, t.z[0].length, t.x.length, t.y.length, t.zmin, t.zmax];")
    before = driver.execute_script(shape, figures[5]["id"])
    assert _use_dropdown(driver, figures[5]["id"]) is None
    after = driver.execute_script(shape, figures[5]["id"])
    assert before[:4] == [3, 4, 4, 3] and after[:4] == [7, 6, 6, 7] and before[4:] == after[4:]


def _legend_click_colours(driver: object, fig_id: str, name: str) -> list[str]:
    """Click legend entry ``name`` of a gray-context figure: the colour of a trace of
    another category and the category the figure then highlights; a second click must
    restore both."""
    from selenium.webdriver.common.action_chains import ActionChains

    script = ("const gd = document.getElementById(arguments[0]);"
              "const other = gd.data.find(t => t.legendgroup !== arguments[1]);"
              "return [other.marker.color, gd._lmgHighlighted || null];")
    gd = _figure(driver, fig_id)
    entry = next(e for e in gd.find_elements("css selector", ".legend .traces")
                 if e.find_element("css selector", ".legendtext").text == name)
    before = driver.execute_script(script, fig_id, name)
    seen = []
    for _ in range(2):
        ActionChains(driver).move_to_element(entry.find_element(
            "css selector", ".legendtoggle")).click().perform()
        time.sleep(1.0)  # plotly waits to tell a single click from a double click
        seen.append(driver.execute_script(script, fig_id, name))
    assert seen[1] == before and before[1] is None  # the second click restores the colours
    return seen[0]


@pytest.mark.slow
def test_published_branch_in_browser(driver: object, tmp_path: Path) -> None:
    """The book as a reader gets it: published to a local bare repository with
    ``publish``, cloned, and opened from the clone's files (offline)."""
    from lmgeometry.report.publish import publish

    project = git_project(tmp_path / "project")
    build_book(root=project)
    publish(project, str(bare_remote(tmp_path / "site.git")))
    site = tmp_path / "site"
    subprocess.run(["git", "clone", "-q", "-b", "gh-pages", str(tmp_path / "site.git"),
                    str(site)], check=True)
    problems = _check_book(driver, site, "published", widths=(1400,), layout=True)
    assert not problems, "\n".join(problems)
    driver.get((site / "book" / "00_fixture.html").as_uri())
    link = driver.find_element("partial link text", "Download this build")
    archive = site / unquote(urlsplit(link.get_attribute("href")).path).rpartition("/")[2]
    assert archive.is_file() and archive.name.startswith("lmgeometry-book-")


#: The most HTML a chapter page may weigh (issue 47), its figures' data included.
PAGE_BYTES = 1_500_000


@pytest.mark.slow
def test_committed_book_in_browser(driver: object, tmp_path: Path) -> None:
    """The committed executed chapters in book/ render and work offline (no execution)."""
    missing = [d for d in toc_docnames(ROOT / "_toc.yml")
               if not page_file(ROOT, d).is_file()]  # pages/api.md: the API page
    if missing:
        pytest.fail(f"_toc.yml lists chapters that are not executed in book/: {missing}; "
                    "run `make book`")
    html_dir = build_html(ROOT, tmp_path)
    # issue 47: no chapter page over 1.5 MB of HTML (large figures travel compressed)
    heavy = {page.name: page.stat().st_size for page in (html_dir / "book").glob("*.html")
             if page.stat().st_size > PAGE_BYTES}
    assert not heavy, f"chapter pages over {PAGE_BYTES:,} bytes of HTML: {heavy}"
    problems = _check_book(driver, html_dir, "book", widths=(1400, 420), layout=True,
                           parameters=_prose_parameters(ROOT))
    assert not problems, "\n".join(problems)


def test_checker_reports_problems(driver: object, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The page checks catch an outside request, a console error, an inert slider, an inert
    dropdown, visible code, a page wider than the window, a figure without a numbered caption
    or with a title inside the plot, and a table without a numbered caption."""
    # these pages fail on purpose (a slider and menu that never replot, WebGL figures that
    # never all draw): give up after seconds, not after a loaded machine's allowance
    monkeypatch.setitem(globals(), "REPLOT_GIVE_UP_S", 3)
    monkeypatch.setitem(globals(), "GIVE_UP_S", 30)
    from lmgeometry.report._ext.plotly_offline import plotly_js_source

    (tmp_path / "_static").mkdir()
    shutil.copyfile(plotly_js_source(), tmp_path / "_static" / "plotly.min.js")
    figure = {
        "data": [{"x": [1, 2, 3], "y": [3, 1, 2], "type": "scatter"}],
        "layout": {"height": 300, "title": {"text": "a title inside the plot"},
                   "sliders": [{"active": 0, "steps": [
            {"method": "restyle", "label": "a", "args": [{"visible": [True]}]},
            {"method": "restyle", "label": "b", "args": [{"visible": [True]}]},
        ]}], "updatemenus": [{"buttons": [
            {"method": "restyle", "label": "all", "args": [{"visible": [True]}]},
            {"method": "restyle", "label": "some", "args": [{"visible": [True]}]},
        ]}]},
    }
    (tmp_path / "page.html").write_text(
        '<html><head><script src="_static/plotly.min.js"></script></head><body>'
        '<img src="http://192.0.2.1/pixel.png">'
        '<div class="cell_input">print("code")</div><div style="width: 3000px">wide</div>'
        '<div class="cell_output"><table><tr><td>1</td></tr></table></div>'
        '<div id="fig" class="plotly-graph-div"></div>'
        f'<script>Plotly.newPlot("fig", {json.dumps(figure)});'
        'console.error("broken on purpose");</script></body></html>'
    )
    problems = _check_book(driver, tmp_path, "checker", layout=True)
    assert any("request leaves the book's file tree: http://192.0.2.1/pixel.png" in p
               for p in problems), problems
    assert any("console error" in p and "broken on purpose" in p for p in problems), problems
    assert any("slider" in p and "did not change the plotted data" in p
               for p in problems), problems
    assert any("dropdown" in p and "choosing 'some' did not change the plotted data" in p
               for p in problems), problems
    (tmp_path / "gl.html").write_text(
        '<html><head><script src="_static/plotly.min.js"></script></head><body><script>'
        'for (let i = 0; i < 20; i++) { const div = document.createElement("div");'
        'div.id = "g" + i; div.className = "plotly-graph-div"; document.body.append(div);'
        'Plotly.newPlot(div, [{type: "scattergl", x: [1, 2], y: [2, 1]}],'
        '{height: 150, width: 200}); }</script></body></html>')
    problems = _check_book(driver, tmp_path, "checker", layout=True)
    assert any("more WebGL figures than the browser keeps" in p for p in problems), problems
    for expected in ("1 code cell(s) visible", "px viewport (",
                     "has no numbered caption", "has a title inside the plot",
                     "a table has no numbered caption"):
        assert any(expected in p for p in problems), (expected, problems)


def _reading_page(folder: Path, name: str, faulty: bool, head_px: int = 0) -> None:
    """A chapter page, clean or with each reading fault :data:`_READING` looks for; with
    ``head_px``, that much more page head between the findings box and the figure."""
    from lmgeometry.report._ext.plotly_offline import plotly_js_source

    (folder / "_static").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js_source(), folder / "_static" / "plotly.min.js")
    traces = [{"x": [1, 2], "y": [2, 1], "type": "scatter", "xaxis": f"x{i}", "yaxis": f"y{i}"}
              for i in ("", "2")]
    if not faulty:
        traces = [{**t, "name": n} for t, n in zip(traces, ("before", "after"), strict=True)]
    spot = [0.2, 0.2] if faulty else [0, 1]  # the two panel titles on top of each other
    figure = {"data": traces, "layout": {"width": 300, "margin": {"l": 20, "r": 20},
        "height": 300, "showlegend": True,
        "xaxis": {"domain": [0, 0.45]}, "xaxis2": {"domain": [0.55, 1]}, "yaxis2": {"anchor": "x2"},
        "annotations": [{"text": f"panel title {i}", "x": x, "y": 1.05, "xref": "paper",
                         "yref": "paper", "showarrow": False,
                         "xanchor": "center" if faulty else ("left", "right")[i]}
                        for i, x in enumerate(spot)]}}
    prose = "the first point_budget words" if faulty else "the first 1,000 words"
    output = ('<div class="output stream"><pre>every head converged: True</pre></div>'
              "<p>the sentence starts with <s> here</p>" if faulty else "")
    findings = "" if faulty else '<div class="admonition note lmg-findings">Findings</div>'
    (folder / "book").mkdir(exist_ok=True)  # a chapter page: book/NN_name.html
    (folder / "book" / name).write_text(
        '<html><head><script src="../_static/plotly.min.js"></script></head><body>'
        f'{findings}<div style="height: {head_px}px"></div><p>{prose}</p>'
        f'<div class="cell_output">{output}<figure><figcaption>Table 1. T.</figcaption>'
        f'<table><tr><th>model</th><th>control</th><th>cosine</th></tr><tr><td>a</td>'
        f'<td>none</td><td>{"nan" if faulty else "0.5"}</td></tr></table></figure>'
        '<figure class="lmg-figure"><div id="fig" class="plotly-graph-div"></div>'
        "<figcaption>Figure 1. F.</figcaption></figure></div>"
        f'<script>Plotly.newPlot("fig", {json.dumps(figure)});</script></body></html>')


def test_key_figure_check_reports_a_figure_below_a_laptops_first_screen(
        driver: object, tmp_path: Path) -> None:
    """At a laptop's width, a chapter whose first figure after the findings box starts on the
    first screen passes; one whose figure starts lower fails with the figure's position."""
    found = {}
    for head_px in (0, LAPTOP_SCREEN[1]):
        folder = tmp_path / str(head_px)
        _reading_page(folder, "01_chapter.html", faulty=False, head_px=head_px)
        found[head_px] = _check_book(driver, folder, "first-screen", widths=(1400, 420),
                                     layout=True)
    assert not found[0], "\n".join(found[0])
    assert len(found[LAPTOP_SCREEN[1]]) == 1, found
    assert re.search(r"01_chapter\.html \(first-screen-1400\): the key figure \(the first after "
                     r"the findings box\) starts at \d+ px, below a laptop's first screen",
                     found[LAPTOP_SCREEN[1]][0]), found


def test_reading_checks_pass_a_clean_page_and_catch_each_fault(driver: object,
                                                              tmp_path: Path) -> None:
    """At 420 px, a clean chapter page passes; a page with "trace N" legend entries, a
    "nan" cell, a token string parsed as an element, program output, a parameter name in
    the text, no findings box and overlapping panel titles fails with each of them."""
    for faulty in (False, True):
        folder = tmp_path / str(faulty)
        _reading_page(folder, "01_chapter.html", faulty)
        problems = _check_book(driver, folder, "reading", widths=(420,), layout=True,
                               parameters=["point_budget", "n_words"])
        if not faulty:
            assert not problems, "\n".join(problems)
    for expected in ('legend entry named "trace 0"', 'legend entry named "trace 1"',
                     'a table cell reads "nan"', "became an HTML <s> element",
                     'program output on the page: "every head converged',
                     "parameter name point_budget in the text",
                     "without its findings box",
                     '"panel title 0" overlaps "panel title 1"'):
        assert any(expected in p for p in problems), (expected, problems)
