"""Reading a judge's JSON reply: the first JSON object or array in it, bare, in prose or in a
code fence. The toolkit's LLM layer (``pipelines.llm.structured``) and the shipped harness tasks
read replies with this one function, so the same reply gives the same answer on either side."""

from __future__ import annotations

import json
from typing import Any

STARTS = 50
"""Most ``{`` or ``[`` positions tried: a reply is not searched to its end for JSON."""


class NoJSONError(ValueError):
    """A reply that holds no JSON object or array; the message says why."""


def find_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (the first of its first :data:`STARTS`
    ``{``/``[`` positions that decodes); :class:`NoJSONError` when none does."""
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch in "{["]
    if not starts:
        raise NoJSONError("the answer contains no JSON object")
    first_error = ""
    for start in starts[:STARTS]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            first_error = first_error or f"invalid JSON: {exc.msg} at character {exc.pos}"
            continue
        except RecursionError:
            # a degenerate reply such as "[[[[..." nests deeper than the decoder can follow
            first_error = first_error or f"invalid JSON: nested too deeply at character {start}"
            continue
        return value
    raise NoJSONError(first_error)
