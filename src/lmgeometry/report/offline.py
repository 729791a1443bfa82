"""Is a built book offline-clean? Everything in its HTML that would load from another host.

:func:`external_references` scans the built pages and style sheets; the book pipeline
(:func:`lmgeometry.report.book.build_html`) and publishing (:mod:`lmgeometry.report.publish`)
both refuse a tree where it finds anything. A leaf that imports nothing from the package,
so that neither of the two imports the other for it. Also importable from
:mod:`lmgeometry.report.book`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["external_references"]


class _ReferenceScanner(HTMLParser):
    """Collect attributes of an HTML page that make a browser fetch a URL."""

    FETCHING = {"src", "href", "data", "poster", "srcset", "action", "formaction", "background"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        values = dict(attrs)
        for name, value in attrs:
            if not value:
                continue
            if name == "href" and tag == "a":
                continue  # a plain hyperlink: the reader decides to follow it
            if name in self.FETCHING:
                if name == "srcset":
                    urls = [part.strip().split(" ")[0] for part in value.split(",")]
                else:
                    urls = [value.strip()]
                self.found += [f"<{tag} {name}={u!r}>" for u in urls if _is_external(u)]
            elif name == "style":
                self.found += [f"<{tag} style: {u}>" for u in _css_urls(value)]
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh":
            target = (values.get("content") or "").partition("url=")[2].strip()
            if _is_external(target):
                self.found.append(f"<meta refresh to {target!r}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found += [f"<style>: {u}" for u in _css_urls(data)]


def _is_external(url: str) -> bool:
    url = url.strip().lower()
    if url.startswith("//"):
        return True
    scheme = re.match(r"^([a-z][a-z0-9+.-]*):", url)
    return bool(scheme) and scheme.group(1) not in {"data", "blob", "javascript", "about",
                                                    "mailto", "file"}


_CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)""", re.IGNORECASE)


def _css_urls(text: str) -> list[str]:
    return [u for u in _CSS_URL.findall(text) if _is_external(u)]


def external_references(html_dir: Path) -> list[str]:
    """Everything in a built HTML tree that would load from outside the file tree.

    Scans every ``.html`` page (attributes that fetch: ``src``, ``href`` of anything but
    ``<a>``, ``srcset``, ``data``, inline styles, ``<style>``, meta refresh) and every
    ``.css`` file (``url(...)``, ``@import``). Plain hyperlinks (``<a href>``) are allowed.
    JavaScript is not scanned; the browser test watches the requests a page really makes.

    Parameters
    ----------
    html_dir : pathlib.Path
        The built HTML (``_build/html``).

    Returns
    -------
    list of str
        ``"relative/file: what"`` for every external reference; empty when offline-clean.
    """
    problems: list[str] = []
    for path in sorted(html_dir.rglob("*")):
        if path.suffix == ".html":
            scanner = _ReferenceScanner()
            scanner.feed(path.read_text(errors="replace"))
            found = scanner.found
        elif path.suffix == ".css":
            found = _css_urls(path.read_text(errors="replace"))
        else:
            continue
        problems += [f"{path.relative_to(html_dir)}: {item}" for item in found]
    return problems
