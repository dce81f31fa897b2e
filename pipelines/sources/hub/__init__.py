"""Datasets on the Hugging Face Hub (or in local folders) read as benchmark items."""
