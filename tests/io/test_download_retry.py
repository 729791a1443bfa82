"""A download that fails once is tried again (issue 49, item 5: downloads had no retry; now a
pooch registry with ``retry_if_failed``), and the file is still checked by its sha256."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lmgeometry.io import datafiles, paths

BODY = b"word1\tword2\t7.5\n"


@pytest.fixture
def flaky_server():
    """A local server whose first GET answers 503 and whose later GETs serve ``BODY``."""
    hits: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            hits.append(1)
            if len(hits) == 1:
                self.send_error(503, "busy")
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/pairs.txt", hits
    finally:
        server.shutdown()


def test_a_failed_download_is_retried_and_checked(flaky_server, tmp_path, monkeypatch):
    url, hits = flaky_server
    monkeypatch.delenv(paths.MIRROR_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    entry = datafiles._Entry(name="pairs", dataset="d", path="d/pairs.txt", url=url,
                             sha256=hashlib.sha256(BODY).hexdigest(), size=len(BODY))
    target = tmp_path / "cache" / "data" / entry.path
    target.parent.mkdir(parents=True)
    datafiles._download(entry, target)
    assert len(hits) == 2 and target.read_bytes() == BODY
    assert datafiles.DOWNLOAD_RETRIES >= 1
    # the same server's content under another checksum is refused, after the retries
    wrong = datafiles._Entry(name="x", dataset="d", path="d/x.txt", url=url, sha256="0" * 64,
                             size=len(BODY))
    with pytest.raises(datafiles.ChecksumMismatch, match="checksum mismatch"):
        datafiles._download(wrong, tmp_path / "cache" / "data" / wrong.path)
    assert len(hits) == 2 + 1 + datafiles.DOWNLOAD_RETRIES
