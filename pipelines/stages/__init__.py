"""Stage entry points: one function per stage in dvc.yaml."""
