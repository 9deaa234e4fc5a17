"""Input files are regular files of a sane size, checked before they are opened.

A FIFO blocks ``open()`` for ever, ``/dev/zero`` (or a symbolic link to it) yields gigabytes in
seconds, and a file of several gigabytes given where a 5 kB episode is expected fills memory
before any parser can complain. Every reader of a user-named file asks ``check_input_file``
first; the error names the file and says what it is instead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from household.errors import InputError

MB = 1024 * 1024


class NotARegularFile(InputError):
    """The path is a device, FIFO, socket or folder where a file is read, or is too large."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_input_file(path: str | os.PathLike[str], what: str, max_bytes: int | None = None) -> Path:
    """``path`` if it (after symbolic links) is a regular file of at most ``max_bytes``; raises
    NotARegularFile naming the file otherwise. A missing file is left to the caller's open
    (its own message says which file it wanted)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return p
    except OSError as exc:
        raise NotARegularFile(f"{p}: cannot be read as {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        link = f" (a link to {os.path.realpath(p)})" if p.is_symlink() else ""
        raise NotARegularFile(f"{p}{link}: {_kind(st.st_mode)}, not a regular file; {what} is read from regular files only")
    if max_bytes is not None and st.st_size > max_bytes:
        raise NotARegularFile(f"{p}: {st.st_size:,} bytes, more than {what} may be ({max_bytes:,} bytes)")
    return p


class DuplicateKeyError(ValueError):
    """A JSON object in an input file gives one key twice."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's ``object_pairs_hook`` for every JSON file a user hands us (episodes, houses, experience
    pools, LLM configs): a key given twice is an error naming it (issue 32), not a silent "last one
    wins" that makes the file say two things (an edited checklist next to the old one)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"duplicate key {key!r} in one JSON object")
        out[key] = value
    return out


def load_yaml_unique_keys(text: str) -> Any:
    """``yaml.safe_load``, except that a key given twice in one mapping is a DuplicateKeyError
    naming it and its line, as ``unique_keys`` does for JSON: PyYAML silently keeps the last one
    (an LLM config or a rosbag2 metadata.yaml that says two things). Never echoes a value."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader: Any, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {key!r} in one mapping (line {key_node.start_mark.line + 1})")
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
