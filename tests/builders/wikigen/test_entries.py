import pyarrow as pa

from builders.wikigen.entries import assign_split, build_entry, event_id
from builders.wikigen.records import ENTRY_SCHEMA, DocumentCount, Entry, WebDocument
from tests.support.records import make_article


def test_split_is_stable_and_close_to_the_fraction():
    keys = [f"wiki.example:{i}" for i in range(4000)]
    splits = [assign_split(k, 7, 0.25) for k in keys]
    assert 0.22 < splits.count("test") / len(keys) < 0.28
    # adding events never moves an existing one
    assert [assign_split(k, 7, 0.25) for k in keys[:100]] == splits[:100]
    assert [assign_split(k, 8, 0.25) for k in keys[:100]] != splits[:100]


def test_entry_keeps_ok_documents_and_counts_every_status():
    article = make_article(page_id=42)
    key = event_id(article)
    assert key == "wiki.example:42"
    docs = [
        WebDocument(
            key,
            "d1",
            "human",
            "https://a.example/1",
            "c1",
            "ok",
            "",
            text="Text one.",
            word_count=2,
        ),
        WebDocument(key, "d2", "human", "https://a.example/2", "c2", "dead", "HTTP 404"),
        WebDocument(
            key, "d3", "search", "https://b.example/3", "c3", "ok", "", text="Two.", word_count=1
        ),
        WebDocument(key, "d4", "search", "https://b.example/4", "c4", "too_short", "12 words"),
    ]
    entry = build_entry(article, docs, seed=1, test_fraction=0.5)
    assert [d.doc_id for d in entry.documents] == ["d1", "d3"]
    assert entry.document_counts == [
        DocumentCount("human", "dead", 1),
        DocumentCount("human", "ok", 1),
        DocumentCount("search", "ok", 1),
        DocumentCount("search", "too_short", 1),
    ]
    assert entry.split in ("train", "test")
    assert entry.outline == article.outline
    # the row matches the schema, and reads back as the same record
    table = pa.Table.from_pylist([entry.to_row()], schema=ENTRY_SCHEMA)
    assert Entry.from_row(table.to_pylist()[0]) == entry
