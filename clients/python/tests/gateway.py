"""A real memgate gateway for the tests: `node bin/memgate.mjs serve` (needs `npm run build`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"memgate listening on (http://\S+)")


class Gateway:
    """One server process over one data file; restartable on the same port and data."""

    def __init__(self, data_dir: Path) -> None:
        self.db = data_dir / "memgate.db"
        self.log = data_dir / "gateway.log"
        self.port = 0
        self.url = ""
        self.proc: Optional[subprocess.Popen[str]] = None

    def start(self) -> "Gateway":
        if not (REPO / "dist" / "app" / "main.js").exists() and not (REPO / "dist").exists():
            raise RuntimeError("dist/ is missing: run `npm run build` in the repository first")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGATE_")}
        cmd = ["node", str(REPO / "bin" / "memgate.mjs"), "serve", "--port", str(self.port), "--data", str(self.db), "--log-level", "warn"]
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=open(self.log, "a"), text=True)
        line = self._first_line(timeout=30)
        match = LISTENING.search(line)
        if not match:
            self.stop()
            raise RuntimeError(f"gateway did not start: {line!r}; log: {self.log.read_text()[-2000:]}")
        self.url = match.group(1)
        self.port = int(self.url.rsplit(":", 1)[1])
        return self

    def _first_line(self, timeout: float) -> str:
        assert self.proc and self.proc.stdout
        out: list = []
        reader = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        return out[0] if out else ""

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, sig: int = signal.SIGKILL) -> None:
        """Stop (a crash by default) and start again on the same port and data file."""
        self.stop(sig)
        self.start()
