"""Pure construction and scoring logic over records: no network, no files."""
