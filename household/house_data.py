"""Loading ProcTHOR house dicts and finding the data files that hold them.

Houses live one JSON object per line in (optionally gzipped) ``.jsonl`` files; the house index is
the 0-based line number, as in ProcTHOR's published splits. Package data ships the dev split and
the asset database; larger sets (test, small_1000) are read from a data directory given by flag,
``WORLDMIND_DATA_DIR`` or the checkout's ``../shared/data/procthor``.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from household.errors import HouseError  # defined there so house_limits can raise it without a cycle
from household.input_files import check_input_file, unique_keys

PACKAGE_DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass
class HouseFileReport:
    """What loading a houses file found: the houses and the lines that could not be parsed."""

    path: Path
    houses: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "file:line: reason"


def data_dirs(extra: str | os.PathLike[str] | None = None) -> list[Path]:
    """Search order for data files: explicit dir, $WORLDMIND_DATA_DIR, package data, shared data."""
    dirs: list[Path] = []
    if extra:
        dirs.append(Path(extra))
    env = os.environ.get("WORLDMIND_DATA_DIR")
    if env:
        dirs.extend(Path(p) for p in env.split(os.pathsep) if p)
    dirs.append(PACKAGE_DATA_DIR)
    dirs.append(Path(__file__).resolve().parents[2] / "shared" / "data" / "procthor")
    return dirs


def resolve_data_file(name: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> Path:
    """A path (absolute, or with a folder in it) is used as given; a bare file name is looked up
    in the data folders (``data_dirs``) and then in the working directory, so a stray copy in the
    working directory never shadows the data set."""
    path = Path(name)
    if path.is_absolute() or len(path.parts) > 1:
        if not path.exists():
            raise FileNotFoundError(f"houses file {path} does not exist")
        return path
    searched = data_dirs(data_dir) + [Path.cwd()]
    for d in searched:
        if (d / path).exists():
            return d / path
    raise FileNotFoundError(
        f"houses file {str(name)!r} not found in {', '.join(str(d) for d in searched)}; "
        "pass --data-dir or set WORLDMIND_DATA_DIR to the folder holding the ProcTHOR files"
    )


# Limits on what a houses file may hold (a ProcTHOR house line is 0.1-1 MB, nested about 10 deep):
# a damaged or hostile file (/dev/zero, a 100k-deep nesting) gets an error naming the limit, not
# unbounded memory or a RecursionError.
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 64


def _open_text(path: Path):
    check_input_file(path, "a houses file")
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def _open_binary(path: Path) -> BinaryIO:
    check_input_file(path, "a houses file")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]  # GzipFile is a binary file object
    return open(path, "rb")


def iter_house_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(0-based line, text) of every line. A line longer than MAX_LINE_BYTES, bytes that are not
    UTF-8, or a damaged/truncated gzip stream raise HouseError naming the file and line."""
    lineno = 0
    try:
        with _open_binary(path) as fh:
            while True:
                raw = fh.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    return
                if len(raw) > MAX_LINE_BYTES:
                    raise HouseError(f"{path}:{lineno + 1}: line longer than {MAX_LINE_BYTES} bytes "
                                     "(the limit for one house); is this a houses file?")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise HouseError(f"{path}:{lineno + 1}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
                yield lineno, line
                lineno += 1
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise HouseError(f"{path}:{lineno + 1}: damaged or truncated gzip data after {lineno} good line(s) "
                         f"({type(exc).__name__}: {exc})") from None


def _depth_ok(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``value`` nests at most ``limit`` deep (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return True


def parse_house_line(path: Path, lineno: int, line: str) -> dict[str, Any]:
    """One house line; its ``id`` defaults to ``<file>#<line>``. Errors name file:line."""
    try:
        house = json.loads(line, object_pairs_hook=unique_keys)  # a key twice: named, not last-wins
    except RecursionError:
        raise HouseError(f"{path}:{lineno + 1}: malformed house JSON (nested deeper than the parser allows; "
                         f"the limit for a house is {MAX_JSON_DEPTH})") from None
    except ValueError as exc:
        raise HouseError(f"{path}:{lineno + 1}: malformed house JSON ({exc})") from None
    if not isinstance(house, dict):
        raise HouseError(f"{path}:{lineno + 1}: malformed house JSON (line is not a JSON object)")
    if not _depth_ok(house):
        raise HouseError(f"{path}:{lineno + 1}: malformed house JSON (nested deeper than {MAX_JSON_DEPTH})")
    from household.house_limits import check_size

    check_size(house, f"{path}:{lineno + 1}")  # a 1,000-room line is refused before anything is built from it
    house.setdefault("id", f"{path.name}#{lineno}")
    return house


def load_houses_file(path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> HouseFileReport:
    """Load every house in a file. A malformed line is reported (file:line) and skipped, never
    fatal; list positions then no longer match line numbers, but each house's ``id`` does
    (``<file>#<line>``), and ``load_house`` looks houses up by line."""
    resolved = resolve_data_file(path, data_dir)
    report = HouseFileReport(resolved)
    try:
        for lineno, line in iter_house_lines(resolved):
            if not line.strip():
                continue
            try:
                report.houses.append(parse_house_line(resolved, lineno, line))
            except HouseError as exc:
                report.errors.append(str(exc))
    except HouseError as exc:  # the file itself is damaged from here on: keep what was read
        report.errors.append(str(exc))
    return report


def load_house(path: str | os.PathLike[str], index: int, data_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The house on 0-based line ``index``; its ``id`` is set to ``<file>#<index>`` if absent."""
    resolved = resolve_data_file(path, data_dir)
    for lineno, line in iter_house_lines(resolved):
        if lineno == index:
            return parse_house_line(resolved, lineno, line)
    raise HouseError(f"{resolved}: no house at index {index}")


def load_asset_database(path: str | os.PathLike[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    resolved = Path(path) if path else PACKAGE_DATA_DIR / "asset-database.json.gz"
    with _open_text(resolved) as fh:
        return json.load(fh)


def load_receptacle_frequencies(path: str | os.PathLike[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    resolved = Path(path) if path else PACKAGE_DATA_DIR / "receptacles.json"
    with _open_text(resolved) as fh:
        return json.load(fh)
