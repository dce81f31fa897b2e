"""The pipeline declared once: the stage table, and what is made from it (dvc.yaml, runs)."""
