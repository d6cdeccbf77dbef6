"""Open every page of the built book in headless Chromium and report what a reader would hit.

    python -m mhanw.pipeline check-book [build/book]      (exit 1 and a list of problems if any)

For each ``*.html`` page (and each module page of the API reference, ``api/*.html``), over the
DevTools protocol (a small client on ``websocket-client``): every image decodes (``naturalWidth > 0``), every
formula is typeset by MathJax and no ``$...$``, ``\\(...\\)`` or ``\\[...\\]``
is left in the visible text, the console shows no error and no script
throws, no request leaves the machine (only ``file:``, ``data:``, ``about:``
and ``blob:`` URLs), and every link inside the book resolves (the file
exists, and its ``#fragment`` is an ``id`` in it).  Screenshots of the front
page, of the first chapter and of the API reference (its index and first module page, at full and
phone width) go to ``<book>/screenshots/``.

Chromium is Debian's (``scripts/ensure_chromium.sh`` installs it), started
with a fresh profile and every background service off.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

LOCAL_SCHEMES = {"file", "data", "about", "blob"}
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-port=0",
    "--window-size=1280,1600",
]

# Runs in the page once it has loaded: waits for MathJax, then reports.
PAGE_REPORT = r"""
(async () => {
  const t0 = Date.now();
  const ready = () => window.MathJax && MathJax.startup && MathJax.startup.promise;
  while (document.querySelector('.math') && !ready() && Date.now() - t0 < 20000)
    await new Promise(r => setTimeout(r, 100));
  if (ready()) await MathJax.startup.promise;
  // a lazy image below the fold has not loaded yet: load it now, so that every image is checked
  await Promise.all([...document.images].map(i => { i.loading = 'eager'; return i.decode().catch(() => null); }));
  const imgs = [...document.images].map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0}));
  const math = [...document.querySelectorAll('.math')];
  const untypeset = math.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80));
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, textarea, mjx-container').forEach(e => e.remove());
  const text = clone.textContent;
  const raw = (text.match(/\$[^$\n]{1,200}\$|\\\(|\\\)|\\\[|\\\]|\\begin\{/g) || []).slice(0, 5);
  const links = [...document.querySelectorAll('a[href]')].map(a => a.href);
  return JSON.stringify({imgs, untypeset, raw, links, nmath: math.length, title: document.title});
})()
"""


#: The width of a phone held upright, px: the front page must not overflow it.
NARROW = 420
#: The longest code cell a lesson shows, in lines (longer ones belong in the chapter's module).
MAX_VISIBLE_CODE_LINES = 25
#: What a chapter's findings are called, once per chapter.
FINDINGS_TITLE = "What we found"

# Runs in a page once MathJax has typeset it: what a reader of a lesson meets.
LESSON_REPORT = r"""
(async () => {
  const ready = () => window.MathJax && MathJax.startup && MathJax.startup.promise;
  if (ready()) await MathJax.startup.promise;
  const body = document.querySelector('div.body') || document.body;
  const text = el => (el ? el.textContent : '').replace(/\s+/g, ' ').trim();
  const figures = [...body.querySelectorAll('figure.mhanw-figure')].map(f => ({
    id: f.id, caption: text(f.querySelector('.mhanw-caption-text'))}));
  const bare = [...body.querySelectorAll('div.cell_output img, div.output img')]
    .filter(i => !i.closest('figure')).map(i => (i.currentSrc || i.src).slice(-80));
  const clone = body.cloneNode(true);
  clone.querySelectorAll('.mhanw-chapter-nav, nav.contents, div.topic.contents, .headerlink').forEach(e => e.remove());
  const findings = (clone.textContent.match(new RegExp(FINDINGS, 'g')) || []).length;
  const code = [...body.querySelectorAll('div.cell div.cell_input')]
    .filter(c => !c.closest('details:not([open])'))
    .map(c => text(c.querySelector('pre')) ? c.querySelector('pre').textContent.replace(/\n+$/, '').split('\n').length : 0);
  return JSON.stringify({figures, bare, findings, code, title: document.title});
})()
""".replace("FINDINGS", json.dumps(FINDINGS_TITLE))


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Page:
    """One tab of a headless Chromium, driven over the DevTools protocol."""

    def __init__(self, binary: str | None = None, timeout: float = 60.0):
        import websocket  # websocket-client

        self.binary = binary or find_chromium()
        if not self.binary:
            raise RuntimeError("no Chromium found: run scripts/ensure_chromium.sh (Debian package chromium)")
        self.profile = tempfile.mkdtemp(prefix="mhanw-chromium-")
        self.proc = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"{self.binary} did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            target = json.load(resp)
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
        self.timeout = timeout
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, method: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = next((e for e in self.events if e["method"] == method), None)
        while seen is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {method} within the time limit")
            self.ws.settimeout(left)
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    seen = msg
        self.ws.settimeout(self.timeout)
        return seen

    def drain(self, seconds: float = 0.3) -> None:
        """Collect the events of the next ``seconds`` (late console messages)."""
        self.ws.settimeout(seconds)
        try:
            while True:
                msg = json.loads(self.ws.recv())
                if "method" in msg:
                    self.events.append(msg)
        except Exception:  # websocket timeout: nothing more for now
            pass
        self.ws.settimeout(self.timeout)

    def open(self, url: str) -> None:
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        res = self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"page script failed: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def overflow(self, width: int) -> int:
        """How many px the page is wider than a window ``width`` px wide (0: no horizontal scrolling)."""
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        try:
            self.drain(0.3)  # the layout settles
            return int(self.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
        finally:
            self.send("Emulation.clearDeviceMetricsOverride")

    def screenshot(self, path: Path, width: int = 1280, max_height: int = 6000) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        self.drain(0.3)
        metrics = self.send("Page.getLayoutMetrics")
        height = int(min(max((metrics.get("cssContentSize") or metrics["contentSize"])["height"], 800), max_height))
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        data = self.send("Page.captureScreenshot", format="png")["data"]
        self.send("Emulation.clearDeviceMetricsOverride")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(base64.b64decode(data))
        os.replace(tmp, path)

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


@dataclass
class Report:
    pages: list[str] = field(default_factory=list)
    images: int = 0
    formulas: int = 0
    links: int = 0
    problems: list[str] = field(default_factory=list)


def _events_problems(page_name: str, events: list[dict]) -> list[str]:
    out = []
    for e in events:
        m, p = e["method"], e.get("params", {})
        if m == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if urlparse(url).scheme not in LOCAL_SCHEMES:
                out.append(f"{page_name}: request leaves the machine: {url}")
        elif m == "Network.loadingFailed" and not p.get("canceled"):
            out.append(f"{page_name}: a resource failed to load: {p.get('errorText')}")
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(f"{page_name}: script error: {d.get('exception', {}).get('description') or d.get('text')}")
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            out.append(f"{page_name}: console error: {args[:200]}")
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"{page_name}: console error: {p['entry'].get('text', '')[:200]} ({p['entry'].get('url', '')})")
    return out


def _link_problem(book: Path, page_name: str, href: str, ids_cache: dict) -> str | None:
    u = urlparse(href)
    if u.scheme in ("http", "https", "mailto", "javascript"):
        return None  # a link out, followed only by the reader's choice; never loaded by the page
    if u.scheme != "file":
        return f"{page_name}: link with an unexpected scheme: {href}"
    target = Path(unquote(u.path))
    try:
        target.resolve().relative_to(book.resolve())
    except ValueError:
        return f"{page_name}: link leaves the book: {href}"
    if not target.exists():
        return f"{page_name}: broken link: {href}"
    if u.fragment and target.suffix == ".html":
        if target not in ids_cache:
            text = target.read_text(encoding="utf-8", errors="replace")
            ids_cache[target] = set(re.findall(r'\s(?:id|name)="([^"]+)"', text))
        if unquote(u.fragment) not in ids_cache[target]:
            return f"{page_name}: link to a missing anchor: {href}"
    return None


def check(book: Path, screenshots: Path | None = None, binary: str | None = None) -> Report:
    """Open every page of ``book`` and return what was found (see the module docstring)."""
    book = Path(book).resolve()
    pages = sorted(book.glob("*.html")) + sorted(book.glob("api/*.html"))  # the API reference's module pages
    if not pages:
        raise FileNotFoundError(f"no HTML pages in {book}: run `make book` first")
    chapters = [p for p in pages if re.match(r"\d\d_", p.name)]
    shots = {"index.html": [("index.png", 1280), ("index-narrow.png", NARROW)]}
    if chapters:
        shots[chapters[0].name] = [("chapter.png", 1280)]
    if (book / "api.html").exists():
        shots["api.html"] = [("api.png", 1280), ("api-narrow.png", NARROW)]
    modules = [p for p in pages if p.parent.name == "api"]
    if modules:
        shots[modules[0].relative_to(book).as_posix()] = [("api-module.png", 1280), ("api-module-narrow.png", NARROW)]
    report = Report()
    ids_cache: dict = {}
    page = Page(binary)
    try:
        for path in pages:
            name = path.relative_to(book).as_posix()
            page.open(path.as_uri())
            info = json.loads(page.evaluate(PAGE_REPORT))
            page.drain()
            report.pages.append(name)
            report.images += len(info["imgs"])
            report.formulas += info["nmath"]
            report.links += len(info["links"])
            report.problems += [f"{name}: image does not decode: {i['src'][:120]}" for i in info["imgs"] if not i["ok"]]
            report.problems += [f"{name}: formula not typeset: {t}" for t in info["untypeset"]]
            report.problems += [f"{name}: raw TeX in the text: {t}" for t in info["raw"]]
            report.problems += _events_problems(name, page.events)
            for href in dict.fromkeys(info["links"]):
                problem = _link_problem(book, name, href, ids_cache)
                if problem:
                    report.problems.append(problem)
            if screenshots is not None and name in shots:
                for shot, width in shots[name]:
                    page.screenshot(Path(screenshots) / shot, width=width)
    finally:
        page.close()
    return report


@dataclass
class PageFacts:
    """What a reader meets on one page of the book (:func:`lesson_facts`)."""

    page: str
    title: str
    figures: list[dict]  # {"id": "figure-NAME", "caption": the caption's text, "" when there is none}
    bare_images: list[str]  # images of outputs outside a captioned figure
    findings: int  # occurrences of "What we found" outside the navigation and the contents
    code_lines: list[int]  # the length of every visible code cell, in lines
    overflow: int | None = None  # px wider than a NARROW window (measured for the front page)


def lesson_facts(book: Path, binary: str | None = None) -> dict[str, PageFacts]:
    """:class:`PageFacts` of the front page and of every chapter page of ``book``, read in Chromium."""
    book = Path(book).resolve()
    pages = [book / "index.html", *sorted(book.glob("[0-9][0-9]_*.html"))]
    missing = [p.name for p in pages if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{book}: no {', '.join(missing)}: run `make book` first")
    out = {}
    page = Page(binary)
    try:
        for path in pages:
            page.open(path.as_uri())
            info = json.loads(page.evaluate(LESSON_REPORT))
            facts = PageFacts(path.name, info["title"], info["figures"], info["bare"], info["findings"], info["code"])
            if path.name == "index.html":
                facts.overflow = page.overflow(NARROW)
            out[path.name] = facts
    finally:
        page.close()
    return out


def search_titles(book: Path) -> list[str]:
    """Every title of the book's search index: the pages' and their sections' (``searchindex.js``)."""
    text = (Path(book) / "searchindex.js").read_text(encoding="utf-8")
    m = re.fullmatch(r"\s*Search\.setIndex\((.*)\)\s*", text, flags=re.S)
    if not m:
        raise ValueError(f"{book}/searchindex.js: not a Sphinx search index")
    index = json.loads(m.group(1))
    return [*index.get("titles", []), *index.get("alltitles", {})]


#: TeX a reader should never see as text: math delimiters, a control word, a brace group of a command.
RAW_TEX = re.compile(r"\$|\\[A-Za-z]+|\\[()\[\]]|[_^]\{")


def caption_problem(caption: str) -> str | None:
    """Why a figure's caption is not a sentence a reader can use, or None."""
    words = re.findall(r"[A-Za-z]{2,}", caption)
    if not caption.strip():
        return "no caption"
    if re.fullmatch(r"[\w.\-]+\.(png|pdf|svg)|\d\d_[a-z0-9_]+", caption.strip()):
        return f"the caption is a file name ({caption!r})"
    if len(words) < 4 or not caption.rstrip().endswith((".", ".)")):
        return f"the caption is not a sentence ({caption[:80]!r})"
    return None


def lesson_problems(facts: PageFacts, limit: int = MAX_VISIBLE_CODE_LINES) -> dict[str, list[str]]:
    """The reader's checks of one chapter page, by check: ``captions``, ``findings``, ``code``, ``title``."""
    name = facts.page
    out: dict[str, list[str]] = {"captions": [], "findings": [], "code": [], "title": []}
    for f in facts.figures:
        problem = caption_problem(f["caption"])
        if problem:
            out["captions"].append(f"{name}: figure {f['id'].removeprefix('figure-')}: {problem}")
    out["captions"] += [f"{name}: an image without a caption: {src}" for src in facts.bare_images]
    if facts.findings != 1:
        out["findings"].append(f"{name}: '{FINDINGS_TITLE}' appears {facts.findings} times (once expected)")
    long = [n for n in facts.code_lines if n > limit]
    if long:
        out["code"].append(
            f"{name}: {len(long)} visible code cells longer than {limit} lines ({', '.join(map(str, long))} lines)"
        )
    if RAW_TEX.search(facts.title):
        out["title"].append(f"{name}: raw TeX in the page title: {facts.title!r}")
    return out


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    book = Path(args[0] if args else "build/book")
    report = check(book, screenshots=book / "screenshots")
    print(
        f"{len(report.pages)} pages, {report.images} images, {report.formulas} formulas, {report.links} links; "
        f"screenshots in {book / 'screenshots'}"
    )
    for p in report.problems:
        print(f"*** {p}")
    return 1 if report.problems else 0
