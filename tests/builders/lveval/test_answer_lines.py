"""The template answerer reads sentences line by line, from lines it keeps, and finds exactly
the sentences (and tokens) of splitting the whole context at once."""

from __future__ import annotations

import random
import re
from pathlib import Path

from builders.lveval.responders import _PASSAGE_HEADER, _line_sentences, _sentence_tokens, answer
from builders.text import sentence_lines, sentences, tokens

ROOT = Path(__file__).resolve().parents[3]
PIECES = ["Storm hit. ", "[1]", " [2, 3]", "\n", "\n[4] Next.", "On 5 March the levee broke. ",
          "Dr. Fahr said so. ", "北京。", "”", "\n\n", " e.g. the ", "(x) ", "  ", "\t",
          "The council met in Varnholm.", "About 40 people were killed. ", "3 p.m. on Friday"]  # fmt: skip


def test_a_texts_sentences_are_its_lines_sentences_unless_a_line_opens_with_a_citation() -> None:
    rng = random.Random(30)
    split = 0
    for _ in range(400):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        lines = sentence_lines(text)
        whole = [text[a:b] for a, b in sentences(text)]
        if lines is None:
            assert re.search(r"(?:\n|[。！？][”’」』）]*)\s*\[\s*\d", text)  # a break, then [n]
            continue
        split += 1
        assert [line[a:b] for line in lines for a, b in sentences(line)] == whole
    assert split > 100
    assert sentence_lines("Storm hit.\n[4] Next.") is None
    assert sentence_lines("Storm hit. [4]\nNext.") == ["Storm hit. [4]", "Next."]


def test_answers_read_the_whole_contexts_sentences_with_lines_kept_or_not() -> None:
    xml = (ROOT / "snapshot" / "wiki" / "export.xml").read_text(encoding="utf-8")
    prose = re.sub(r"<[^>]+>", " ", xml)
    rng = random.Random(7)
    contexts = []
    for _ in range(60):
        at = rng.randrange(len(prose) - 4_000)
        noise = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        contexts.append(f"### Passage 1\n{prose[at : at + 3_000]}\n\n### Passage 2\n{noise}")
    for _ in range(2):  # the second time, every line is kept from the first
        for context in contexts:
            text = _PASSAGE_HEADER.sub("\n", context)
            whole = [(text[a:b], frozenset(tokens(text[a:b]))) for a, b in sentences(text)]
            assert _sentence_tokens(text) == whole
    assert _line_sentences.cache_info().hits > 0
    context = "### Passage 1\nThe storm passed.\n[1] On 5 March the levee broke near Imre."
    assert answer({"question": "When did the levee break?", "context": context}) == "5 March"
