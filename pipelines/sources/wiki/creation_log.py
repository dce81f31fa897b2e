"""Page creation times from a MediaWiki logging dump (``*-pages-logging.xml.gz``).

Only ``create`` entries at or after ``since`` are kept, so memory grows with the number of pages
created inside the window, not with the size of the log. A page with no entry there was created
earlier, under another title (a move), or before creation logging began; the wiki stage records
it as ``created_unknown`` rather than guessing from its title.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pipelines.sources.wiki.xml_source import XmlSource, local, parse_timestamp


def read_creation_log(path: Path, since: datetime) -> dict[str, datetime]:
    """Map page title to its earliest creation time at or after ``since``.

    A ``create`` item without a readable ``<timestamp>`` is a :class:`SourceFormatError` naming
    the file, the log id and the line.
    """
    created: dict[str, datetime] = {}
    root = None
    with XmlSource(path, events=("start", "end")) as xml:
        for event, elem in xml:
            if root is None:
                root = elem
            if event == "start" or local(elem.tag) != "logitem":
                continue
            fields = {local(child.tag): (child.text or "") for child in elem}
            root.clear()  # finished items must not pile up under the root
            if fields.get("type") != "create" or not fields.get("logtitle"):
                continue
            try:
                stamp = parse_timestamp(fields.get("timestamp", ""))
            except ValueError as exc:
                raise xml.fail(f"log item {fields.get('id', '?')}: bad timestamp ({exc})") from exc
            title = fields["logtitle"]
            if stamp >= since and (title not in created or stamp < created[title]):
                created[title] = stamp
    return created
