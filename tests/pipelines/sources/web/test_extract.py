import multiprocessing
import os
import signal
import time

import pytest
from pydantic import ValidationError

from pipelines.sources.web.extract import Extraction, ExtractSettings, extract_many, extract_one

ARTICLE = [
    "The Valdra harbour authority confirmed on Tuesday that the old grain quay will close for "
    "eighteen months while engineers rebuild the sea wall that partly collapsed in the January "
    "storms, forcing the ferry company to move its evening sailings to the northern berth.",
    "Harbour master Ilse Provan told a packed public meeting that divers had found cracks running "
    "the full length of the wall, and that the cost of the repairs was now estimated at forty-two "
    "million crowns, nearly double the figure given to the council in the spring.",
    "Fishing crews who land their catch at the grain quay will be offered moorings in the inner "
    "basin, and the authority promised a temporary ice plant before the autumn season begins. "
    "Several skippers said the inner basin was too shallow for the larger trawlers at low tide.",
]
BOILERPLATE = [
    "We use cookies to improve your experience",
    "Accept all cookies",
    "Manage preferences",
    "Opinion &amp; Analysis",
    "Opinion & Analysis",
    "Subscribe to our newsletter",
    "Related articles",
    "Ferry fares rise for the third year running",
    "New lighthouse keeper appointed at Skarn Point",
    "This is typical of the council, they never listen",
    "My grandfather worked on that quay for forty years",
    "Valdra Herald Media Group",
    "Privacy policy",
    "Contact the newsroom",
]

NEWS_PAGE = f"""<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<title>Grain quay to close for sea wall rebuild | Valdra Herald</title>
<meta property="og:title" content="Grain quay to close for sea wall rebuild">
<meta property="og:type" content="article">
<meta property="article:published_time" content="2026-03-17T09:30:00Z">
</head>
<body>
<div id="cookie-consent" class="cookie-banner">
  <p>We use cookies to improve your experience and to show you relevant advertising.</p>
  <button>Accept all cookies</button> <button>Manage preferences</button>
</div>
<header class="site-header">
  <a class="logo" href="/">The Valdra Herald</a>
  <nav class="main-nav"><ul>
    <li><a href="/news">News</a></li><li><a href="/business">Business</a></li>
    <li><a href="/opinion">Opinion &amp; Analysis</a></li><li><a href="/sport">Sport</a></li>
    <li><a href="/weather">Weather</a></li>
  </ul></nav>
  <form class="newsletter"><label>Subscribe to our newsletter</label><input type="email"></form>
</header>
<main>
<article class="story">
  <h1>Grain quay to close for sea wall rebuild</h1>
  <p class="byline">By Mara Lindqvist, <time datetime="2026-03-17">17 March 2026</time></p>
  <p>{ARTICLE[0]}</p>
  <p>{ARTICLE[1]}</p>
  <h2>Moorings for the fishing fleet</h2>
  <p>{ARTICLE[2]}</p>
</article>
<aside class="related">
  <h3>Related articles</h3>
  <ul>
    <li><a href="/news/ferry-fares">Ferry fares rise for the third year running</a></li>
    <li><a href="/news/lighthouse">New lighthouse keeper appointed at Skarn Point</a></li>
  </ul>
</aside>
<section id="comments" class="comments">
  <h3>Reader comments (2)</h3>
  <div class="comment"><p class="author">harbourwatcher</p>
    <p>This is typical of the council, they never listen to the people who actually use the
    harbour every single day of the year.</p></div>
  <div class="comment"><p class="author">old_salt</p>
    <p>My grandfather worked on that quay for forty years and it was falling apart even then.</p>
  </div>
</section>
</main>
<footer class="site-footer">
  <p>&copy; 2026 Valdra Herald Media Group. All rights reserved.</p>
  <ul><li><a href="/privacy">Privacy policy</a></li><li><a href="/contact">Contact the newsroom</a></li></ul>
</footer>
</body>
</html>
"""


def _page(words: int, marker: str) -> str:
    body = " ".join(f"{marker}w{i}" for i in range(words))
    return (
        f"<html lang='en'><head><title>{marker}</title></head><body>"
        f"<article><h1>{marker}</h1><p>{body}.</p></article></body></html>"
    )


def misbehaving_extractor(
    doc_id: str, html: str, url: str, settings: ExtractSettings
) -> Extraction:
    """Hangs on 'hang', exits on 'crash', segfaults on 'segv', raises on 'raise'; else echoes."""
    if doc_id == "hang":
        time.sleep(3600)
    if doc_id == "crash":
        os._exit(1)
    if doc_id == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if doc_id == "raise":
        raise RuntimeError("bad page")
    return Extraction(doc_id=doc_id, status="ok", text=html, word_count=len(html.split()))


def test_news_page_keeps_the_article_and_drops_menu_banner_related_comments_footer():
    result = extract_one("news", NEWS_PAGE, "https://www.valdra-herald.example/news/grain-quay")

    assert result.status == "ok", result.reason
    for paragraph in ARTICLE:
        assert paragraph in result.text
    for boilerplate in BOILERPLATE:
        assert boilerplate not in result.text, boilerplate
    assert result.title == "Grain quay to close for sea wall rebuild"
    assert result.date == "2026-03-17"
    assert result.language == "en-GB"
    assert result.word_count == len(result.text.split()) >= 50


def test_news_page_keeps_comments_when_asked():
    settings = ExtractSettings(include_comments=True)
    result = extract_one("news", NEWS_PAGE, "", settings)
    assert "My grandfather worked on that quay" in result.text


def test_short_page_is_too_short_and_keeps_its_text():
    result = extract_one("short", _page(12, "brief"), "https://x.example/brief")
    assert result.status == "too_short"
    assert result.reason == "13 words, under min_words 50"
    assert "briefw11" in result.text
    assert result.word_count == 13


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        ("", "empty document"),
        ("   \n", "empty document"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "not parseable as HTML"),
        (
            "<html><head><title>x</title></head><body><nav></nav></body></html>",
            "no main text found",
        ),
    ],
)
def test_empty_or_garbage_document_is_extract_failed(html, reason):
    result = extract_one("bad", html, "")
    assert result.status == "extract_failed"
    assert result.reason == reason
    assert result.text == ""


def test_many_keeps_input_order_with_two_workers():
    sizes = [400, 60, 900, 70, 300, 55, 800, 65, 200, 75] * 2
    docs = [(f"d{i}", _page(n, f"m{i}x"), f"https://x.example/{i}") for i, n in enumerate(sizes)]
    docs[5] = ("d5", "", "")

    results = list(extract_many(docs, ExtractSettings(workers=2, batch_docs=4)))

    assert [r.doc_id for r in results] == [d[0] for d in docs]
    assert results[5].status == "extract_failed"
    for i, result in enumerate(results):
        if i != 5:
            assert result.status == "ok", result.reason
            assert f"m{i}xw0" in result.text


def test_many_reads_the_input_lazily():
    read: list[int] = []

    def docs():
        for i in range(30):
            read.append(i)
            yield (f"d{i}", _page(60, f"p{i}x"), "")

    results = extract_many(docs(), ExtractSettings(workers=2, batch_docs=5))
    first = next(results)
    assert first.doc_id == "d0"
    assert len(read) <= 6  # one batch, plus the one read after the first result was ready
    assert [r.doc_id for r in results] == [f"d{i}" for i in range(1, 30)]


@pytest.mark.parametrize("workers", [1, 2])
def test_hanging_and_crashing_documents_fail_alone_and_the_rest_go_on(workers):
    ids = [f"d{i}" for i in range(12)]
    ids[3], ids[5], ids[7], ids[9] = "hang", "segv", "crash", "raise"
    docs = [(doc_id, f"text of {doc_id}", "") for doc_id in ids]
    settings = ExtractSettings(workers=workers, timeout_s=1)

    results = list(extract_many(docs, settings, extractor=misbehaving_extractor))

    # the hang was cut at its 1 s limit (the reason says so); no wall-clock bound is asserted,
    # which a loaded machine would break without anything being wrong
    assert [r.doc_id for r in results] == ids
    by_id = {r.doc_id: r for r in results}
    assert by_id["hang"].status == "extract_failed"
    assert by_id["hang"].reason == "timeout after 1s"
    assert by_id["crash"].status == "extract_failed"
    assert by_id["crash"].reason == "worker died (exit code 1)"
    assert by_id["segv"].status == "extract_failed"
    assert by_id["segv"].reason == f"worker died (exit code {-signal.SIGSEGV})"
    assert by_id["raise"].status == "extract_failed"
    assert by_id["raise"].reason == "extractor raised RuntimeError: bad page"
    others = [r for r in results if r.doc_id not in {"hang", "segv", "crash", "raise"}]
    assert all(r.status == "ok" and r.text == f"text of {r.doc_id}" for r in others)


def test_stopping_early_leaves_no_worker_behind():
    docs = ((f"d{i}", _page(60, f"p{i}x"), "") for i in range(100))
    results = extract_many(docs, ExtractSettings(workers=2))
    next(results)
    results.close()
    assert not [p for p in multiprocessing.active_children() if p.name == "benchsmith-extract"]


def test_settings_forbid_unknown_keys_and_zero_workers():
    with pytest.raises(ValidationError, match="Extra inputs"):
        ExtractSettings(min_word=10)
    with pytest.raises(ValidationError):
        ExtractSettings(workers=0)


def test_chinese_pages_are_measured_in_characters_and_say_so() -> None:
    sentence = "暴雨持续了三天，河水漫过堤坝，淹没了低洼地区的农田和房屋。"
    page = (
        "<html lang='zh'><head><title>洪水</title></head><body><article><h1>洪水</h1>"
        f"<p>{sentence * 6}</p></article></body></html>"
    )
    done = extract_one("zh", page, "https://news.example/zh", ExtractSettings())
    assert (done.status, done.length_unit) == ("ok", "characters")
    assert done.word_count == len("洪水") + len(sentence) * 6  # the heading and the text
    short = extract_one("zh", page, "https://news.example/zh", ExtractSettings(min_words=500))
    assert short.status == "too_short"
    assert short.reason == f"{done.word_count} characters, under min_words 500"
    english = extract_one(
        "en",
        page.replace("lang='zh'", "lang='en'").replace(sentence, "Rain fell. "),
        "https://news.example/en",
        ExtractSettings(min_words=1),
    )
    assert english.length_unit == "words"
