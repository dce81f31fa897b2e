"""Agreement of the configured judge with human-labelled verdicts (``benchsmith judge-check``).

Each judge is asked exactly as its metric asks it, through the ``llm`` settings, with the same
prompt, answer model and rule:

- ``summhay-coverage`` (:func:`pipelines.evaluation.summhay.judge_ask`): a summary's bullets and
  one reference insight; the judge answers full, partial or none and the covering bullet.
- ``wikigen-entails`` (:func:`pipelines.evaluation.wikigen.entails_ask`): a cited document and one
  sentence; the judge answers whether the document entails the sentence.
- ``wikigen-rubric`` (:func:`pipelines.evaluation.wikigen_judges.judge_articles`): an article
  and one of WikiGenBench's six judged dimensions; the judges score it on the dimension's scale
  (0-5 or 1-5), once per article and judge call (:mod:`.wikigen_rubric`).

The report has accuracy and Cohen's kappa over the answered verdicts, precision, recall, F1 and
counts per label, the confusion matrix (rows human, columns judge), and every failed judge answer
with its reason (failed answers are left out of the agreement, never silently). For SummHay it
also has *linking*, the share of verdicts where judge and human name the same covering bullet
(the citation score reads that bullet's citations), and the instance-level Pearson correlation
of the coverage scores (full 1, partial 0.5, none 0) and the judge's mean bias, as SummHay's
judge benchmark reports them. For ``wikigen-rubric`` the report is per dimension: n, exact and
within-one agreement, Spearman's rho, quadratic-weighted kappa over the whole scale, the mean
judge-minus-human bias, and the failed answers.

The modules: :mod:`.verdicts` (the verdicts read), :mod:`.labels` (reading a file, in SummHay's
released layout, :mod:`.summhay_file`, or benchsmith's JSONL, :mod:`.jsonl`), :mod:`.agreement`
(the statistics), :mod:`.check` (asking the judge; :mod:`.wikigen_rubric` for the rubric
scores) and :mod:`.report` (JSON and tables).
"""

from pipelines.evaluation.judge_check.check import check_file, judge_client, run_check
from pipelines.evaluation.judge_check.labels import read_labels
from pipelines.evaluation.judge_check.report import print_report, write_report
from pipelines.evaluation.judge_check.verdicts import LabelFile, LabelFileError

__all__ = [
    "LabelFile",
    "LabelFileError",
    "check_file",
    "judge_client",
    "print_report",
    "read_labels",
    "run_check",
    "write_report",
]
