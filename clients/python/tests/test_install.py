"""`pip install ./clients/python` works offline with Debian's packages (setuptools, websockets, msgpack)."""

import shutil
import subprocess
import venv
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def test_pip_installs_the_package_into_a_venv(tmp_path):
    # A copy, so the build's files (build/, *.egg-info) never land in the worktree.
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    # The venv sees Debian's pip and setuptools through the system site-packages; --no-index: nothing is downloaded.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation", "--quiet", str(source)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    probe = subprocess.run([str(python), "-c", "import memgate; print(memgate.__file__); print(sorted(memgate.ERROR_CODES))"], capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    location, codes = probe.stdout.splitlines()
    assert location.startswith(str(tmp_path / "venv")) and "not_found" in codes
