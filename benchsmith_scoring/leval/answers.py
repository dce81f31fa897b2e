"""L-Eval's per-task answer extraction, before exact match (its ``Evaluation/auto_eval.py``).

L-Eval reduces both sides of a closed-ended item to a short answer first, and the rule depends on
the task (picked by a substring of the task name, as L-Eval picks it from the file name):

- option tasks (coursera, quality, tpo): the reference's first word without anything but A-D
  ("(A) Element of surprise" -> "A"); the prediction's first A-D capital, or for coursera, where
  several options may be right, a sorted set of letters (``option_prediction``);
- gsm: the number after "The answer is", else the last word with a digit, as digits up to a "."
- codeU: the reference with commas, quotes, backslashes and ".0" removed; from the prediction the
  words after "the final output", else its last words, as many as the reference has plus 3;
- sci_fi: "True [fact: False]" splits into a loyalty and a fact answer, each "true"/"false";
- other tasks (topic_retrieval_longchat, open-ended ones): the texts unchanged.

The rules are restated here, with their quirks (the capital A of "Answer" is an option), so
that scores equal L-Eval's; nothing is imported from L-Eval.
"""

from __future__ import annotations

import re

OPTIONS = "ABCD"
OPTION_TASKS = ("coursera", "quality", "tpo")
FALLBACK_OPTION = "A"  # L-Eval's guess when nothing can be read
NO_ANSWER = "None"  # what an empty option prediction becomes
JUDGE_ERROR = "<error>"

_ANSWER_IS = re.compile(r"The answer is (\S+)")
# A capital letter directly followed by whitespace, "." or ")": "A.", "(C) ", "B\n".
_STANDALONE_CAPITAL = re.compile(r"[A-Z](?=[\s.)])")
_SPACES = re.compile(r"\s+")
_FACT = "[fact:"
# Phrases dropped from a codeU prediction, in this order ("is" also inside words).
_CODE_FILLERS = (
    "will be",
    "of the code",
    "is",
    "would be",
    "the value of",
    "the result of",
    "printed",
)
_FINAL_OUTPUT = "the final output"


def is_option_task(task: str) -> bool:
    """Whether L-Eval reads task's answers as option letters."""
    return any(name in task for name in OPTION_TASKS)


def option_reference(reference: str) -> str:
    """The A-D letters of the reference's first word, or "A" when it has none."""
    words = reference.split()
    if not words:
        raise ValueError("an option reference is empty (L-Eval's code fails on it too)")
    return _only_options(words[0]) or FALLBACK_OPTION


def option_prediction(response: str, multiple: bool) -> str:
    """The option letters L-Eval reads from a response; ``multiple`` for coursera."""
    if not response.strip():
        return NO_ANSWER
    if response in OPTIONS:  # "A", "BC", "ABCD": a run of the options in order
        return response
    if not multiple:
        first = next((c for c in response if c in OPTIONS), None)
        if first is not None:
            return first
    return _option_set(response)


def _only_options(text: str) -> str:
    return "".join(c for c in text if c in OPTIONS)


def _leading_options(text: str) -> str:
    end = 0
    while end < len(text) and text[end] in OPTIONS:
        end += 1
    return text[:end]


def _first_option_run(text: str) -> str:
    start = next((i for i, c in enumerate(text) if c in OPTIONS), len(text))
    return _leading_options(text[start:])


def _option_set(response: str) -> str:
    """Coursera's reading: a leading run of letters, else capitals standing alone."""
    lead = _leading_options(response)
    if len(lead) > 1:
        return "".join(sorted(set(lead)))
    rest = response[len(lead) :].split("Question")[0]
    letters = _only_options(lead + "".join(_STANDALONE_CAPITAL.findall(rest)))
    if letters:
        return "".join(sorted(set(letters)))
    return _first_option_run(rest) or FALLBACK_OPTION


def math_answer(text: str) -> str:
    """The digits of the answer (up to a decimal point): after "The answer is", else of the
    last word with a digit in the first paragraph; "" when there is none."""
    match = _ANSWER_IS.search(text)
    if match:
        word = match.group(1)
    else:
        words = text.split("\n\n")[0].split(" ")
        word = next((w for w in reversed(words) if any(c.isdigit() for c in w)), "")
    digits = []
    for c in word.split(".")[0]:
        if c.isdigit():
            digits.append(c)
    return "".join(digits)


def code_reference(text: str) -> str:
    """A codeU output with whitespace collapsed and commas, quotes, backslashes, ".0" dropped."""
    text = _SPACES.sub(" ", text)
    for dropped in (",", "'", "\\", ".0"):
        text = text.replace(dropped, "")
    for spaced, joined in (("] [", "]["), ("[ [", "[["), ("] ]", "]]")):
        text = text.replace(spaced, joined)
    return text


def code_prediction(response: str, reference: str) -> str:
    """The words of a codeU response that should hold the output: after "the final output",
    else at its end; as many as the reference's words plus 3."""
    keep = len(reference.split()) + 3
    text = code_reference(response)
    for filler in _CODE_FILLERS:
        text = text.replace(filler, "")
    if _FINAL_OUTPUT in text:
        words = _SPACES.split(text.split(_FINAL_OUTPUT)[-1])[:keep]
    else:
        words = _SPACES.split(text)[-keep:]
    return " ".join(words)


def judge_reference(text: str) -> tuple[str, str]:
    """sci_fi's "True [fact: False]" as lower-case (loyalty, fact) answers."""
    parts = text.lower().split(_FACT)
    if len(parts) < 2:
        raise ValueError(f"a sci_fi answer needs {_FACT!r} (L-Eval's code fails without it)")
    return parts[0].strip(), parts[1][:-1].strip()  # [:-1]: the closing bracket


def judge_prediction(response: str) -> tuple[str, str]:
    """The (loyalty, fact) verdicts of a sci_fi response: "true", "false" or "<error>"."""
    loyalty, fact = judge_reference(response)
    return _verdict(loyalty), _verdict(fact)


def _verdict(text: str) -> str:
    for word in text.split():
        if "true" in word:
            return "true"
        if "false" in word:
            return "false"
    return JUDGE_ERROR
