"""The web side: search, fetching and archiving pages, replaying the archive, extracting text."""
