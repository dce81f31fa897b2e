"""L-Eval-style evaluation: exact match, F1, ROUGE and length-instruction prompts."""
