import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gateway import Gateway  # noqa: E402


@pytest.fixture(scope="session")
def gateway(tmp_path_factory):
    """One gateway shared by the tests that only talk to it (each uses its own agent and user ids)."""
    gw = Gateway(tmp_path_factory.mktemp("memgate")).start()
    yield gw
    gw.stop()


@pytest.fixture
def own_gateway(tmp_path):
    """A gateway of the test's own, for tests that stop or restart it."""
    gw = Gateway(tmp_path).start()
    yield gw
    gw.stop()
