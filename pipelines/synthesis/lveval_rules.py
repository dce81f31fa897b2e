"""LV-Eval's replacement rules on disk, in the reviewed-rules format (JSONL of ``orig``, ``repl``,
``scope``): the proposed rules the stage writes, and the reviewed rules it reads back."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from builders.lveval import kpr
from builders.lveval.settings import LVEvalSettings
from pipelines.errors import ParamsError


def read_rules(path: Path) -> list[kpr.Rule]:
    """Rules from a JSONL file in the reviewed-rules format; errors name the file and line."""
    return kpr.parse_rules(path.read_text(encoding="utf-8").splitlines(), str(path))


def reviewed_rules(settings: LVEvalSettings, root: Path) -> list[kpr.Rule]:
    """The reviewed rules file, if set; errors name the setting and the line. The file is
    checked when params.yaml is loaded; a relative path (settings built in code) is taken from
    ``root``."""
    if settings.kpr.rules_file is None:
        return []
    path = root / settings.kpr.rules_file
    try:
        return read_rules(path)
    except OSError as exc:
        raise ParamsError(f"[lveval -> kpr -> rules_file] {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ParamsError(f"[lveval -> kpr -> rules_file] {exc}") from None


def write_rules(path: Path, proposed: Mapping[str, Sequence[kpr.Rule]]) -> None:
    """Every item's proposed rules (by ``qa_id``), scoped to that item, one JSON line each."""
    with path.open("w", encoding="utf-8") as rules_out:
        for qa_id, rules in proposed.items():
            for rule in rules:
                line = {"orig": rule.orig, "repl": rule.repl, "scope": qa_id}
                rules_out.write(json.dumps(line, ensure_ascii=False) + "\n")


def set_rules(path: Path, rules: Sequence[kpr.Rule]) -> None:
    """Put ``rules`` into the reviewed rules file ``path``: each replaces the rule of the same
    original (any case) and scope, or is added; the file is rewritten whole (a temporary file
    renamed over it), so the lveval stage never reads half of it."""
    kept = read_rules(path) if path.is_file() else []
    new = {(r.orig.lower(), r.scope): r for r in rules}
    merged = [new.pop((r.orig.lower(), r.scope), r) for r in kept] + list(new.values())
    lines = [json.dumps({"orig": r.orig, "repl": r.repl, "scope": r.scope}, ensure_ascii=False)
             for r in merged]  # fmt: skip
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    os.replace(scratch, path)
