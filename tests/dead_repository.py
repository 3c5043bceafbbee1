"""A scenario whose JVM packages resolve from a repository nobody serves: a real package-resolution
failure (Ivy meets a closed port on 127.0.0.1, with an empty cache of its own)."""

from __future__ import annotations

import socket
from pathlib import Path

import yaml

HUDI_SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "hudi_small.yaml"


def dead_repository_scenario(tmp_path: Path) -> tuple[Path, int]:
    """``hudi_small.yaml`` with Apache Hudi's bundle to resolve from a closed port; (its path, the port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(f'<ivysettings><settings defaultResolver="dead"/><resolvers><ibiblio name="dead" '
                        f'm2compatible="true" root="http://127.0.0.1:{port}/maven2/"/></resolvers></ivysettings>')
    doc = yaml.safe_load(HUDI_SMALL.read_text())
    doc["spark"]["conf"] = {"spark.jars.ivy": str(tmp_path / "ivy"), "spark.jars.ivySettings": str(settings)}
    path = tmp_path / "dead-repo.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path, port
