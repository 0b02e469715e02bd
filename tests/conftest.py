import os
import shutil
import tempfile

import pytest

pytest_plugins = ["pytester"]

# Never touch the user's real store: every audit the tests run (in this process
# or in the subprocesses they spawn, which inherit the environment) keeps its
# chunks and history in a store private to this test session.
_STORE_DIR = tempfile.mkdtemp(prefix="audit-test-store-")
os.environ["AUDIT_STORE"] = os.path.join(_STORE_DIR, "store.sqlite")
os.environ.pop("AUDIT_SCHEDULER", None)


@pytest.fixture(scope="session", autouse=True)
def _private_store():
    yield os.environ["AUDIT_STORE"]
    shutil.rmtree(_STORE_DIR, ignore_errors=True)
