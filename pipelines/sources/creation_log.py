"""Page creation times from a MediaWiki logging dump (``*-pages-logging.xml.gz``).

Only ``create`` entries at or after ``since`` are kept, so memory grows with the number of pages
created inside the window, not with the size of the log. A page with no entry there was created
earlier, under another title (a move), or before creation logging began; the wiki stage records
it as ``created_unknown`` rather than guessing from its title.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

from pipelines.errors import SourceFormatError
from pipelines.sources.wiki_dump import local, open_maybe_compressed, parse_timestamp


def read_creation_log(path: Path, since: datetime) -> dict[str, datetime]:
    """Map page title to its earliest creation time at or after ``since``."""
    created: dict[str, datetime] = {}
    with open_maybe_compressed(path) as stream:
        try:
            for _, elem in ET.iterparse(stream, events=("end",)):
                if local(elem.tag) != "logitem":
                    continue
                fields = {local(child.tag): (child.text or "") for child in elem}
                elem.clear()
                if fields.get("type") != "create" or not fields.get("logtitle"):
                    continue
                stamp = parse_timestamp(fields["timestamp"])
                title = fields["logtitle"]
                if stamp >= since and (title not in created or stamp < created[title]):
                    created[title] = stamp
        except ET.ParseError as exc:
            line, column = exc.position
            raise SourceFormatError(
                f"{path}: malformed XML at line {line}, column {column}: {exc}"
            ) from exc
        except ValueError as exc:
            raise SourceFormatError(f"{path}: bad <timestamp> in a <logitem>: {exc}") from exc
    return created
