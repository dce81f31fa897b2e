"""The ``publish`` stage: Hub-layout Parquet exports with cards, pushed as tagged versions."""
