"""Decide-only what-ifs of ``aifabric serve``: how long the page waits after moving an assumption.

    .venv/bin/python bench/serve_whatif.py [GPUS] [--http]

Loads the GPUS-H100 Llama-3 70B training job (default 256), answers the scenario once (the first four
stages measured and kept, as the server does on its first page view), then times what-ifs that only
re-weigh — prices across the RoCE switch price's range and past its break-even, storage placement,
tuning state, misconfiguration probability, expertise, budget — each the whole answer the page gets
(risk → decide → the verdict across the categorical assumptions, the result dict, the report's HTML
sections and charts, the controls). ``--http`` times the same requests through a running server
(``aifabric serve`` on a free port, POST /api/whatif). Prints one Markdown table and the median.
"""

from __future__ import annotations

import statistics
import sys
import time

WHATIFS = (
    ("RoCE switch price x0.95", {}, {"price.switch.roce-400g": 0.95}),
    ("RoCE switch price x0.85", {}, {"price.switch.roce-400g": 0.85}),
    ("RoCE switch price x0.70 (past break-even)", {}, {"price.switch.roce-400g": 0.70}),
    ("RoCE switch price x0.60", {}, {"price.switch.roce-400g": 0.60}),
    ("IB transceiver price x1.4", {}, {"price.transceiver.infiniband": 1.4}),
    ("storage on the compute fabric", {}, {"storage.placement": "on-fabric"}),
    ("both fabrics tuned", {}, {"tuning": "tuned"}),
    ("misconfiguration probability 0.3", {}, {"misconfiguration_probability": 0.3}),
    ("team expertise none", {"team_expertise": "none"}, {}),
    ("budget low, growth 2x", {"budget": "low", "growth": "2x"}, {}),
    (
        "storage on-fabric + switch x0.70",
        {},
        {"storage.placement": "on-fabric", "price.switch.roce-400g": 0.7},
    ),
)


def in_process(gpus: int) -> list[tuple[str, float, str, str]]:
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec
    from aifabric.serve.app import Server
    from aifabric.serve.session import Base, Workspace, parse
    from aifabric.serve.tasks import Task

    srv = Server(Workspace(Base("bench", None, AdvisorSpec(gpus=gpus)), load_catalog(None)))
    t0 = time.perf_counter()
    first = srv.answer(parse(srv.ws.base, {}), Task("bench", "bench"))
    rows = [
        ("first answer (measures the job)", time.perf_counter() - t0, "+".join(first["how"]["stages"]), "")
    ]
    for label, adv, ass in WHATIFS:
        t = time.perf_counter()
        v = srv.answer(parse(srv.ws.base, {"advisor": adv, "assumptions": ass}), Task("bench", "bench"))
        rec = v["numbers"]["recommendation"]
        rows.append((label, time.perf_counter() - t, "+".join(v["how"]["stages"]), rec["design"]))
    return rows


def over_http(gpus: int) -> list[tuple[str, float, str, str]]:
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from serve_support import answer, running

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "job.yaml"
        p.write_text(f"name: bench\nadvisor: {{gpus: {gpus}}}\n")
        with running(str(p)) as (url, _proc):
            t0 = time.perf_counter()
            answer(url, {"advisor": {}, "assumptions": {}})
            rows = [("first answer (measures the job)", time.perf_counter() - t0, "all", "")]
            for label, adv, ass in WHATIFS:
                t = time.perf_counter()
                code, a = answer(url, {"advisor": adv, "assumptions": ass})
                assert code == 200, a
                rec = a["result"]["numbers"]["recommendation"]
                rows.append(
                    (label, time.perf_counter() - t, "+".join(a["result"]["how"]["stages"]), rec["design"])
                )
    return rows


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    gpus = int(args[0]) if args else 256
    rows = (over_http if "--http" in sys.argv else in_process)(gpus)
    print(f"| what-if ({gpus} H100) | seconds | stages run | recommended |\n|---|---|---|---|")
    for label, s, stages, rec in rows:
        print(f"| {label} | {s:.3f} | {stages} | {rec} |")
    decide = [s for _l, s, _st, _r in rows[1:]]
    print(f"\ndecide-only what-ifs: median {statistics.median(decide):.3f} s, max {max(decide):.3f} s")


if __name__ == "__main__":
    main()
