"""Named entities of section headings, for STORM's heading entity recall.

STORM tags headings with flair's ``ner`` model (``flair/ner-english``: CoNLL-03's persons,
locations, organisations and miscellaneous names), which flair downloads from the Hugging Face
Hub. No package registry ships that model, nor a first-party copy of another English NER model
(the spaCy pipelines found on PyPI are re-uploads by third parties, of a different model), so:

- ``capitalised`` (the default) is an offline **stand-in**, not NER: the runs of capitalised
  words in a heading (:class:`CapitalisedSpans`). Its figures are not STORM's.
- ``flair`` is STORM's own tagger (:class:`FlairTagger`): it needs ``pip install flair`` and
  the model, from the Hub (``BENCHSMITH_HUB_DOWNLOADS=1``) or a local ``.pt`` file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pipelines import hub_downloads
from pipelines.embed.models import ModelError
from pipelines.extras import installed

FLAIR_MODEL = "ner"
"""The flair model STORM loads (``Classifier.load('ner')``, i.e. ``flair/ner-english``)."""

FLAIR_PIN = "flair==0.13.0"
"""The flair release STORM's requirements pin."""

TAGGERS = ("capitalised", "flair")
"""The entity taggers by setting name."""


class EntityTagger(Protocol):
    """Entity spans of many short texts at once, one list per text."""

    name: str

    def spans(self, texts: Sequence[str]) -> list[list[str]]: ...


_TOKEN = re.compile(r"[^\W_][\w'’&.-]*")
_LINKING = frozenset(
    {"a", "an", "and", "at", "by", "de", "del", "der", "di", "du", "for", "from", "in", "la"}
    | {"le", "of", "on", "or", "the", "to", "van", "von", "with"}
)
"""Words that end a run even when capitalised ("Battle Of Hastings" in a Title Case outline)."""


class CapitalisedSpans:
    """The stand-in tagger: maximal runs of capitalised words (a number may continue a run,
    as in "Apollo 11"), split at punctuation and at linking words (:data:`_LINKING`).

    English Wikipedia headings are in sentence case, so a lone capitalised first word says
    nothing ("Early life") and is dropped, unless it is an acronym ("NATO response"); a run of
    two or more at the start is kept ("United States response"). Known misses: a heading that
    is a single name ("France"), lowercase names, and names joined by a linking word ("Battle of
    Hastings" gives "Hastings")."""

    name = "capitalised-spans (stand-in, not NER)"

    def spans(self, texts: Sequence[str]) -> list[list[str]]:
        """The capitalised runs of each text, in order."""
        return [self.runs(text) for text in texts]

    @staticmethod
    def runs(text: str) -> list[str]:
        """The capitalised runs of one heading, per the rule above."""
        found: list[str] = []
        run: list[str] = []
        run_start = end = 0
        for i, match in enumerate(_TOKEN.finditer(text)):
            word = match[0]
            word = word[:-1] if word.endswith(".") and word.count(".") == 1 else word
            joined = bool(run) and not text[end : match.start()].strip()
            named = word[0].isupper() and word.lower() not in _LINKING
            if named or (joined and word[0].isdigit()):
                if not joined:
                    CapitalisedSpans._close(run, run_start, found)
                    run, run_start = [], i
                run.append(word)
            else:
                CapitalisedSpans._close(run, run_start, found)
                run = []
            end = match.end()
        CapitalisedSpans._close(run, run_start, found)
        return found

    @staticmethod
    def _close(run: list[str], start: int, found: list[str]) -> None:
        lone_opening = start == 0 and len(run) == 1 and not run[0].isupper()
        if run and not lone_opening:
            found.append(" ".join(run))


class FlairTagger:
    """STORM's tagger: flair's sequence tagger, one heading at a time as STORM predicts, every
    span of every label kept."""

    def __init__(self, model: str = FLAIR_MODEL):
        if not installed("flair"):
            raise ModelError(
                f"heading entities 'flair' need the flair package: pip install '{FLAIR_PIN}'"
            )
        if not Path(model).exists() and not hub_downloads.allowed():
            raise ModelError(
                f"flair loads its {model!r} model from the Hugging Face Hub and Hub downloads "
                f"are off: set {hub_downloads.ENV}=1, or give the path of a local model file"
            )
        from flair.nn import Classifier

        self.name = f"flair/{model}"
        self.tagger = Classifier.load(model)

    def spans(self, texts: Sequence[str]) -> list[list[str]]:
        """The ``ner`` spans of each text (an empty text has none, as STORM skips it)."""
        from flair.data import Sentence

        out: list[list[str]] = []
        for text in texts:
            if not text:
                out.append([])
                continue
            sentence = Sentence(text)
            self.tagger.predict(sentence)
            out.append([span.text for span in sentence.get_spans("ner")])
        return out


def entity_tagger(name: str) -> EntityTagger:
    """The tagger of a setting value (:data:`TAGGERS`); ``ValueError`` naming the choices."""
    if name == "capitalised":
        return CapitalisedSpans()
    if name == "flair":
        return FlairTagger()
    raise ValueError(f"unknown heading entity tagger {name!r}: choose one of {', '.join(TAGGERS)}")
