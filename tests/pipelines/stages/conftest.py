"""The stage tests' session fixtures shared with the publish tests: the snapshot's stage outputs
(the wikigen_baselines tests read the dense vectors their RR run cached)."""

from tests.pipelines.publish.conftest import publish_data  # noqa: F401
