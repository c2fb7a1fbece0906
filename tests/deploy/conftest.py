"""Fixtures of the deployment tests: the rendered overlays and the compose file.

Nothing here starts a process or touches the network: the overlays are rendered by
kustomize_lite (a test compares it with the kustomize binary where one exists).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helper modules beside this file
    sys.path.insert(0, str(HERE))

import deploy_objects  # noqa: E402


@pytest.fixture(scope="session")
def rendered() -> dict[str, deploy_objects.Rendered]:
    return deploy_objects.render_all()


@pytest.fixture(scope="session")
def compose() -> dict:
    return deploy_objects.load_compose()
