from dataclasses import dataclass, replace

from builders.wikigen.documents import PENDING, candidates, content_hash, mark_text_duplicates
from builders.wikigen.records import ExternalLink, Reference
from tests.support.records import make_article


@dataclass
class _Hit:
    query: str
    rank: int
    url: str
    title: str = ""
    snippet: str = ""


def _canonical(url: str) -> str:
    return url.lower().rstrip("/")


def _excluded(url: str) -> bool:
    return "wikipedia.example" in url


def test_human_documents_come_first_and_search_repeats_are_duplicates():
    article = make_article(
        references=[
            Reference("a", "Cite A", "https://news.example/a"),
            Reference("b", "Cite B", ""),  # a book: no URL, no document
        ],
        external_links=[ExternalLink("https://agency.example/page", "Agency page")],
    )
    hits = [
        _Hit("q", 1, "https://NEWS.example/a/"),
        _Hit("q", 2, "https://en.wikipedia.example/wiki/X"),
        _Hit("q", 3, "https://other.example/story", "Story", "snippet"),
    ]
    docs = candidates("ev", article, hits, _canonical, _excluded)
    assert [(d.origin, d.status) for d in docs] == [
        ("human", PENDING),
        ("human", PENDING),
        ("search", "duplicate"),
        ("search", "mirror"),
        ("search", PENDING),
    ]
    assert docs[0].cite_text == "Cite A"
    assert "human" in docs[2].reason
    assert (docs[4].rank, docs[4].query, docs[4].snippet) == (3, "q", "snippet")
    assert len({d.doc_id for d in docs}) == len(docs)


def test_doc_ids_are_stable_across_runs():
    article = make_article(references=[Reference("a", "A", "https://news.example/a")])
    first = candidates("ev", article, [], _canonical, _excluded)
    again = candidates("ev", article, [], _canonical, _excluded)
    assert first[0].doc_id == again[0].doc_id
    assert candidates("other", article, [], _canonical, _excluded)[0].doc_id != first[0].doc_id


def test_same_text_under_two_urls_keeps_the_first():
    article = make_article(
        references=[
            Reference("a", "A", "https://a.example/x"),
            Reference("b", "B", "https://b.example/y"),
        ]
    )
    docs = candidates("ev", article, [], _canonical, _excluded)
    same = content_hash("Flood   waters ROSE.")
    assert same == content_hash("flood waters rose.")
    docs = [replace(d, status="ok", content_hash=same) for d in docs]
    marked = mark_text_duplicates(docs)
    assert [d.status for d in marked] == ["ok", "duplicate"]
    assert "https://a.example/x" in marked[1].reason


def test_a_malformed_url_is_kept_as_an_error():
    def strict(url: str) -> str:
        if ":8o80" in url:
            raise ValueError(f"malformed URL {url}: bad port")
        return _canonical(url)

    article = make_article(
        references=[
            Reference("a", "A", "http://example.com:8o80/"),
            Reference("b", "B", "http://example.com:8o80/"),
            Reference("c", "C", "https://c.example/"),
        ]
    )
    docs = candidates("ev", article, [], strict, _excluded)
    assert [d.status for d in docs] == ["error", "duplicate", PENDING]
    assert "http://example.com:8o80/" in docs[0].reason
    assert len({d.doc_id for d in docs}) == 3
