"""LV-Eval-style sets: QA items, mixup contexts at length levels, CFI, KPR and the AK metric."""
