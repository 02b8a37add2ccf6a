"""The simulate page's table of latency values (docs/commands/simulate.md) graded by source matches the data files it quotes: every
``latency.*`` value of defaults.yaml and every switch ``latency_ns`` of catalog.yaml appears with
its number, source tag and grade (H / M / L / estimate), and no row names a value the data lack."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "aifabric" / "data"
GRADE = {"high": "H", "medium": "M", "low": "L", "estimate": "estimate (no source)"}


def _fmt(v) -> str:
    if isinstance(v, list):
        return "–".join(str(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k} {x}" for k, x in v.items())
    return str(v)


def _readme_rows() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "commands" / "simulate.md").read_text(encoding="utf-8")
    start = text.index("| value | number | source | grade |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        line = line.strip()
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_defaults_latency_rows_match_defaults_yaml():
    rows = _readme_rows()
    lat = yaml.safe_load((DATA / "defaults.yaml").read_text(encoding="utf-8"))["latency"]
    for key, v in lat.items():
        name = f"`latency.{key}`"
        assert name in rows, f"the latency table lacks {name}"
        number, source, grade = rows[name]
        assert number == f"{_fmt(v['value'])} {v['unit']}", name
        assert source == (v.get("source") or "—"), name
        assert grade == GRADE[v["confidence"]], name
    named = {k for k in rows if k.startswith("`latency.")}
    assert named == {f"`latency.{k}`" for k in lat}, "the latency table names a value defaults.yaml lacks"


def test_catalog_switch_latency_rows_match_catalog_yaml():
    rows = _readme_rows()
    switches = yaml.safe_load((DATA / "catalog.yaml").read_text(encoding="utf-8"))["switches"]
    seen = set()
    for sw in switches:
        if sw.get("latency_ns") is None:
            continue
        row = next(
            (
                k
                for k in rows
                if k.startswith("catalog `latency_ns` of") and sw["id"] in re.split(r"[ ,]+", k)
            ),
            None,
        )
        assert row is not None, f"the latency table lacks switch {sw['id']}"
        number, source, grade = rows[row]
        assert number == f"{sw['latency_ns']} ns", sw["id"]
        assert source == (sw.get("latency_source") or "—"), sw["id"]
        assert grade == GRADE[sw["latency_confidence"]], sw["id"]
        seen.add(sw["id"])
    listed = {
        i
        for k in rows
        if k.startswith("catalog `latency_ns` of")
        for i in k.removeprefix("catalog `latency_ns` of").replace(",", " ").split()
    }
    assert listed == seen


def test_engine_defaults_row_is_true():
    """The packet engine's own per-hop and NIC defaults are what the table says."""
    from aifabric.scenario import FabricSpec

    f = FabricSpec()
    assert f.switch_latency == 0 and f.nic_latency == 0 and f.nic_efficiency is None
    rows = _readme_rows()
    assert rows["packet engine `fabric.switch_latency` default"][0] == "0 ns"
