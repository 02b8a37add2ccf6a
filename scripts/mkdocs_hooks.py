"""mkdocs hooks: the generated reference pages (scripts/docs_reference.py) join the site on every
build, and nav entries for pages that other work adds (listed in OPTIONAL) are dropped, with a
note, while those pages do not exist yet."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))

import docs_reference  # noqa: E402

log = logging.getLogger("mkdocs.hooks.aifabric")
OPTIONAL = {
    "serve.md",
    "placed-traffic.md",
    "training-model.md",
    "front.md",
    "report.md",
    "ultra-ethernet.md",
}


def _prune(items: list, docs_dir: Path) -> list:
    out = []
    for item in items:
        if isinstance(item, dict):
            ((title, value),) = item.items()
            if isinstance(value, list):
                value = _prune(value, docs_dir)
                if not value:
                    continue
            elif value in OPTIONAL and not (docs_dir / value).exists():
                log.info("nav: %s is not written yet, left out", value)
                continue
            out.append({title: value})
        else:
            out.append(item)
    return out


def on_config(config):
    config["nav"] = _prune(config["nav"], Path(config["docs_dir"]))
    return config


def on_files(files, config):
    for name, make in docs_reference.PAGES.items():
        files.append(File.generated(config, name, content=make()))
    return files
