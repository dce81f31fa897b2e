"""The publish tests' session fixtures: the snapshot's stage outputs and their Hub export."""

from tests.pipelines.publish.conftest import hub_export, publish_data  # noqa: F401
