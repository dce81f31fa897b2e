"""Synthesis through the LLM layer: the steps that ask a model to write benchmark items."""
