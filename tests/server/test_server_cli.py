"""`giants serve` refuses bad settings and a taken port before it starts Redis."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client_cli.cli", "serve", "--data-dir", str(tmp_path / "data"), *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log-level", "verbose"], "--log-level must be one of"),
        (["--port", "70000"], "--port must be 0..65535"),
        (["--port", "eighty"], "port has an invalid value"),
        (["--default-deadline", "-5"], "--default-deadline must be"),
    ],
)
def test_bad_settings_exit_2_before_redis_starts(tmp_path: Path, args: list[str], message: str) -> None:
    result = serve(tmp_path, *args)
    assert result.returncode == 2, result
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not (tmp_path / "data").exists()  # the embedded Redis never started


def test_a_taken_port_is_refused_before_redis_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve(tmp_path, "--host", "127.0.0.1", "--port", str(port))
    assert result.returncode == 1, result
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "data").exists()
