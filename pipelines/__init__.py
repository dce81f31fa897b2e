"""Everything that touches the outside world: sources, stages and the CLI."""

__version__ = "0.1.0"
