#!/usr/bin/env python3
"""Fails when a lockfile pins a crate version its registry has yanked.

    tools/check-yanked.py Cargo.lock guests/Cargo.lock

Reads each lockfile's packages from crates.io and asks the registry's sparse index (cargo's
default one, unless CARGO_REGISTRIES_CRATES_IO_INDEX names another)
whether each pinned version is yanked. cargo builds a yanked version that a lockfile pins without
a word, and cargo-deny and cargo-audit read yanks only alongside the RustSec advisory database,
fetched from GitHub, which CI machines here cannot reach; the index is what both consult.
Exit status: 0 when none is yanked, 1 when one is (each printed), 2 when the index cannot be read.
"""
from __future__ import annotations

import json
import os
import sys
import tomllib
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
INDEX = os.environ.get("CARGO_REGISTRIES_CRATES_IO_INDEX", "sparse+https://index.crates.io/").removeprefix(
    "sparse+").rstrip("/")


def index_path(name: str) -> str:
    """The path of a crate's file in a sparse index."""
    name = name.lower()
    if len(name) <= 2:
        return f"{len(name)}/{name}"
    if len(name) == 3:
        return f"3/{name[0]}/{name}"
    return f"{name[:2]}/{name[2:4]}/{name}"


def yanked_versions(name: str) -> set[str]:
    with urllib.request.urlopen(f"{INDEX}/{index_path(name)}", timeout=30) as answer:
        entries = [json.loads(line) for line in answer.read().decode().splitlines() if line]
    return {entry["vers"] for entry in entries if entry.get("yanked")}


def main(lockfiles: list[str]) -> int:
    pinned: set[tuple[str, str]] = set()
    for lockfile in lockfiles:
        with open(lockfile, "rb") as f:
            for package in tomllib.load(f).get("package", []):
                if package.get("source") == CRATES_IO:
                    pinned.add((package["name"], package["version"]))
    names = sorted({name for name, _ in pinned})
    try:
        with ThreadPoolExecutor(max_workers=16) as pool:
            yanked = dict(zip(names, pool.map(yanked_versions, names)))
    except (urllib.error.URLError, OSError) as e:
        print(f"check-yanked: cannot read the index {INDEX}: {e}", file=sys.stderr)
        return 2
    found = sorted((name, version) for name, version in pinned if version in yanked[name])
    for name, version in found:
        print(f"check-yanked: {name} {version} is yanked; `cargo update -p {name}` moves off it", file=sys.stderr)
    print(f"check-yanked: {len(pinned)} pinned versions of {len(names)} crates, {len(found)} yanked", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["Cargo.lock"]))
