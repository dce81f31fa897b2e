"""The contamination probe's report in the cards of the datasets it probes."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from pipelines.settings import Params
from tests.pipelines.publish.conftest import publish_settings
from tests.support.snapshot import ROOT


def test_the_probe_s_report_appears_in_the_cards_it_concerns(
    publish_data: Path, params: Params, tmp_path: Path
):
    from pipelines.stages.contamination import run_contamination
    from pipelines.stages.publish import run_publish

    data = tmp_path / "data"
    data.mkdir()
    for stage in publish_data.iterdir():  # the shared outputs, read only
        (data / stage.name).symlink_to(stage)
    settings = params.contamination.model_copy(update={"cutoff": date(2026, 5, 31)})
    run_contamination(
        settings,
        qa=data / "lveval" / "qa.parquet",
        entries=data / "wikigen" / "entries.parquet",
        out=data / "contamination",
        llm=params.llm,
        ak=params.lveval_baselines,
    )
    report = json.loads((data / "contamination" / "contamination.json").read_text())
    assert report["flagged"] == [] and report["probed"]["lveval"] > 0
    out = tmp_path / "publish"
    names = ["wikigenbench", "summhay", "lveval"]
    run_publish(publish_settings(tmp_path, datasets=names), data=data, out=out, root=ROOT,
                params_file=ROOT / "params.yaml")  # fmt: skip
    for name in names:
        card = (out / name / "README.md").read_text()
        probed = name in report["probed"]
        assert ("## Contamination probe (closed-book)" in card) is probed, name
        if probed:
            assert "Declared knowledge cutoff: **2026-05-31**" in card
            assert f"| {report['probed'][name]} | 0 |" in card  # probed, none failed
