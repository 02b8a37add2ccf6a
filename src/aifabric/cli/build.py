"""``plan --build DIR`` (and ``compare --build DIR``): the build artefacts of planned fabrics."""

from __future__ import annotations

from pathlib import Path

from aifabric.errors import InputError


def load_layout(path: Path | None) -> dict | None:
    """The ``--layout`` file: a YAML/JSON mapping of layout assumption → value."""
    if path is None:
        return None
    import yaml

    from aifabric.memory import read_text

    try:
        doc = yaml.safe_load(read_text(path, "layout file"))
    except yaml.YAMLError as exc:
        raise InputError("not YAML", file=str(path), value=str(exc).split("\n")[0]) from None
    if not isinstance(doc, dict):
        raise InputError(
            "expected a mapping of layout keys", file=str(path), allowed="rack_width_m: 0.6, ..."
        )
    return doc


def build_plans(
    plans: list, catalog, folder: Path, layout_file: Path | None, sized: bool, common: dict | None = None
):
    """Size each plan's lengths by its layout (``sized``), build and write the artefacts; return
    (the plans as built, a short summary per fabric)."""
    from aifabric.build.artefacts import write_build
    from aifabric.build.cables import build_cable_plan, check_buildable
    from aifabric.build.sizing import sized_for_layout

    overrides = load_layout(layout_file)
    for fp in plans:
        check_buildable(fp)
    if sized:
        tco = (common or {}).get("tco_inputs")
        plans = [sized_for_layout(fp, catalog, overrides, tco) for fp in plans]
    builts = [build_cable_plan(fp, catalog, overrides) for fp in plans]
    manifests = write_build(folder, builts, catalog)
    summary = [
        {
            "folder": m["folder"],
            "technology": m["technology"],
            "design_label": m["design_label"],
            "counts": m["counts"],
            "checks": m["checks"],
            "conflicts": len(m["conflicts"]),
            "conflict_examples": m["conflicts"][:3],
            "files": len(m["files"]),
        }
        for m in manifests
    ]
    return plans, summary


def print_build(summary: list[dict]) -> None:
    import typer

    for b in summary:
        c = b["counts"]
        ok = b["checks"]["cables_match_bom"] and b["checks"]["transceivers_match_bom"]
        typer.echo(
            f"build ({b['technology']}, {b['design_label']}): {b['folder']} — {b['files']} files, "
            f"{c['cables']:,} cables for {c['links']:,} links, {c['switches']} switches, {c['servers']} servers, "
            f"{c['racks']} racks; cables and transceivers {'match' if ok else 'DIFFER FROM'} the BOM"
        )
        for cls, v in b["checks"]["lengths"].items():
            typer.echo(
                f"  {cls}: runs {v['layout_min_m']:g}–{v['layout_max_m']:g} m (order up to "
                f"{v['layout_max_ordered_m']:g} m; BOM priced {v['bom_length_m']:g} m)"
            )
        if b["conflicts"]:
            typer.echo(
                f"  {b['conflicts']} conflict(s), e.g. {b['conflict_examples'][0]} (all in build.json)",
                err=True,
            )
