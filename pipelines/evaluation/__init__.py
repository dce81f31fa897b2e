"""Evaluation through the LLM layer: summarizers and judges run on built benchmarks."""
