"""Strata's own state is private: folders 0700, files 0600, whatever the process umask.

Caches and logs hold document text (LLM prompts and replies, server logs), and state files hold ports
and passwords, so nothing Strata creates is readable by other local users.

>>> import tempfile, stat
>>> root = Path(tempfile.mkdtemp())
>>> oct(stat.S_IMODE(private_dir(root / "a" / "b").stat().st_mode))
'0o700'
>>> oct(stat.S_IMODE(write_private(root / "a" / "f.json", "{}").stat().st_mode))
'0o600'
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kg.errors import StrataError

__all__ = ["PRIVATE_UMASK", "owned_dir", "private_dir", "private_file", "write_private"]

PRIVATE_UMASK = 0o077


def private_dir(path: Path) -> Path:
    """``path`` as a folder only this user can enter (0700), its missing parents made 0700 too; an existing
    folder is closed if it was open."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(0o700)
    return path


def owned_dir(path: Path, what: str = "folder") -> Path:
    """``path`` as a real folder (not a link) owned by this user and closed to everyone else (0700), for
    folders that files from clients are written into (uploads, MCP texts): a link planted at that name, or
    another user's folder, is refused with :class:`StrataError` instead of written through."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise StrataError(f"{what} {path} is not a folder owned by this user; remove it or choose another")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


def private_file(path: Path) -> Path:
    """``path`` created empty if missing, and made 0600 (for files another library opens, e.g. SQLite)."""
    private_dir(path.parent)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    path.chmod(0o600)
    return path


def write_private(path: Path, text: str) -> Path:
    """``text`` written to ``path`` (0600, in a 0700 folder), replacing it whole."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    tmp.replace(path)
    return path
