"""The scorers and baseline prompts every benchsmith export ships, under ``scoring/``.

A harness (lm-evaluation-harness, Inspect AI) imports this package from the export without
installing benchsmith, and the toolkit imports the very same code to score its own baselines.
It needs only the standard library; Chinese AK scoring imports jieba, ROUGE imports
rouge-score, and rendering a prompt imports jinja2, each only when used.

- :mod:`.lveval`: LV-Eval's AK metric (``readme`` and ``reference_code`` modes).
- :mod:`.leval`: L-Eval's exact match, F1, ROUGE and length instruction.
- :mod:`.summhay`: SummHay's bullets, citations and pooled coverage, citation and joint scores.
- :mod:`.wikigen`: WikiGenBench's article parsing, citation scores and entailment reader;
  :mod:`.wikigen_judges`: its writing and informativeness judges' variables and readers.
- :mod:`.text`: the answer normalisation and token F1 they share; :mod:`.sentences`: the
  sentence splitter (NLTK's Punkt, imported when used); :mod:`.replies`: a reply's JSON.
- :mod:`.prompts`: the prompts the cards' baselines were produced with.
- :mod:`.harness`: the functions the generated lm-evaluation-harness tasks call.
- :mod:`.tokens`: token counts in an evaluated model's tokenizer (OpenAI encodings import
  bpe-openai, a ``tokenizer.json`` imports tokenizers, each only when used).
"""
