"""aifabric serve: its command line (bad input, --host warning) and its JSON API — a what-if on a measured
job re-runs only risk → decide, bad values get one message each naming their control, a job change
streams its stage events and can be cancelled, a client has one computation at a time, a study is
chosen by index only, and the exported scenario is one ``compare`` reads."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from aifabric.scenario import AdvisorSpec
from serve_support import SCENARIO, answer, call, env, free_port, running


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    p = tmp_path_factory.mktemp("serve") / "job.yaml"
    p.write_text(SCENARIO)
    return p


@pytest.fixture(scope="module")
def server(scenario):
    with running(str(scenario)) as (url, _proc):
        yield url


@pytest.fixture(scope="module")
def base(server):
    code, a = answer(server, call(server, "/api/state")[1]["request"])
    assert code == 200, a
    return a["result"]


def _serve(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "aifabric", "serve", *args]
    return subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=120)


def test_bad_command_lines_are_one_line_exit_2(tmp_path, scenario):
    bad = tmp_path / "bad.yaml"
    bad.write_text("advisor: {gpus: 64, colour: blue}\n")
    cases = {
        "missing.yaml": [str(tmp_path / "missing.yaml")],
        "colour": [str(bad)],
        "--port": [str(scenario), "--port", "70000"],
        "--study": [str(scenario), "--study", str(tmp_path)],
    }
    for what, args in cases.items():
        out = _serve(*args, *([] if "--port" in args else ["--port", str(free_port())]))
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2, (what, out.stderr)
        assert len(lines) == 1 and lines[0].startswith("error:") and what in lines[0], (what, lines)
        assert "Traceback" not in out.stderr


def test_other_host_warns(scenario):
    port = free_port()
    cmd = [sys.executable, "-m", "aifabric", "serve", str(scenario), "--host", "0.0.0.0", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env(), stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert first.startswith("warning: --host 0.0.0.0") and "other machines" in first


def test_page_is_self_contained(server):
    code, html = call(server, "/", raw=True)
    assert code == 200 and "Plotly" in html and "<script src" not in html and "/api/whatif" in html


def _price_control(result: dict) -> dict:
    """The control of the RoCE design's switch price (an SN5600 on the default H100 design)."""
    return next(c for c in result["controls"] if c["name"].startswith("assumptions.price.switch.roce"))


def test_price_whatif_runs_only_risk_and_decide(server, base):
    ctl = _price_control(base)
    assert ctl["item"] == "sn5600" and ctl["unit_price_usd"] > 0 and ctl["break_even"] is not None
    past = ctl["break_even"] * (0.95 if ctl["break_even"] < ctl["base"] else 1.05)
    name = ctl["name"].split(".", 1)[1]
    code, a = answer(server, {"advisor": {}, "assumptions": {name: past}})
    assert code == 200 and a["result"]["how"]["stages"] == ["risk", "decide"], a
    moved = a["result"]["numbers"]["recommendation"]
    assert moved["design"] == ctl["design_then"] != base["numbers"]["recommendation"]["design"]
    again = next(c for c in a["result"]["controls"] if c["name"] == ctl["name"])
    assert again["value"] == past and again["range"] == ctl["range"]  # the range before the override


def test_bad_values_one_message_each_naming_the_control(server):
    body = {
        "advisor": {"gpus": -4, "team_expertise": "guru", "colour": "blue"},
        "assumptions": {"price.switch.roce-400g": 0, "storage.placement": "moon", "nope": 1, "tuning": "x"},
    }
    code, a = call(server, "/api/whatif", body)
    assert code == 422
    got = {e["control"]: e["message"] for e in a["errors"]}
    want = {
        "advisor.gpus",
        "advisor.team_expertise",
        "advisor.colour",
        "assumptions.price.switch.roce-400g",
        "assumptions.storage.placement",
        "assumptions.nope",
        "assumptions.tuning",
    }
    assert set(got) == want, got
    assert "none, some or expert" in got["advisor.team_expertise"]
    assert "separate, on-fabric" in got["assumptions.storage.placement"]
    for raw in (b"{not json", b"[1, 2]"):
        code, a = call(server, "/api/whatif", raw)
        assert code == 422 and a["errors"][0]["control"] == "request"
    code, text = call(server, "/api/tasks/nope", raw=True)
    assert code == 404 and "Traceback" not in text


def _first_event(url: str, task: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/tasks/{task}/events", timeout=300) as r:
        for line in r:
            if line.startswith(b"data:"):
                return json.loads(line[5:])
    raise AssertionError("no event")


def test_job_change_streams_progress_one_run_per_client_and_cancels(server, base):
    code, a = call(server, "/api/whatif", {"advisor": {"gpus": 96}, "assumptions": {}}, client="jobs")
    assert code == 202 and a["running"], a
    ev = _first_event(server, a["task"])
    assert ev["text"] and ev["elapsed_s"] >= 0
    code, busy = call(server, "/api/whatif", {"advisor": {}, "assumptions": {}}, client="jobs")
    assert code == 409 and "running" in busy["errors"][0]["message"]
    code, other = answer(server, {"advisor": {"budget": "low"}, "assumptions": {}}, client="other")
    assert code == 200 and other["result"]["how"]["stages"] == ["risk", "decide"]
    code, c = call(server, "/api/cancel", {}, client="jobs")
    assert code == 200 and c["cancelled"]
    deadline = time.monotonic() + 600
    while (t := call(server, f"/api/tasks/{a['task']}")[1])["running"]:
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert t.get("cancelled") and "result" not in t, t  # stopped at its next stage event


def test_studies_by_index_only(server):
    for body in ({"index": 0}, {"index": "../../etc"}, {"index": -1}, [1]):
        code, a = call(server, "/api/study", body)
        assert code == 422 and a["errors"][0]["control"] == "study", (body, a)


def test_exported_scenario_is_the_whatif(server, base):
    body = {
        "advisor": {"team_expertise": "expert"},
        "assumptions": {"tuning": "tuned", "price.nic.infiniband": 1.1},
    }
    code, text = call(server, "/api/export/scenario", body, raw=True)
    assert code == 200
    sc = yaml.safe_load(text)
    assert sc["assumptions"] == {"tuning": "tuned", "price.nic.infiniband": 1.1}
    assert AdvisorSpec(**sc["advisor"]) == AdvisorSpec(gpus=64, team_expertise="expert")
    code, html = call(server, "/api/export/report", body, raw=True)
    assert code == 200 and "id='recommendation'" in html and "chart-tornado" in html
    code, a = call(server, "/api/export/report", {"advisor": {"gpus": 4096}, "assumptions": {}})
    assert code == 422 and "apply this what-if" in a["errors"][0]["message"]  # not measured: no surprise run


def test_front_key_ignores_the_weighing_questions():
    from aifabric.serve.session import Base, WhatIf, front_key

    b = Base("x", None, AdvisorSpec(gpus=64))
    one = front_key(b, WhatIf(AdvisorSpec(gpus=64), {}))
    assert one == front_key(
        b, WhatIf(AdvisorSpec(gpus=64, team_expertise="none", budget="low"), {"tuning": "tuned"})
    )
    assert one != front_key(b, WhatIf(AdvisorSpec(gpus=128), {}))
    assert one != front_key(b, WhatIf(AdvisorSpec(gpus=64, host_link_media="optics"), {}))
