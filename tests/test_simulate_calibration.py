"""`aifabric simulate --calibration FILE`: the fitted NIC efficiency and perftest latency of the
scenario's transport reach the packet engine (fabric.nic_efficiency / fabric.nic_latency); another
transport's file is applied with a warning; NCCL software terms are named as not applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.calibrate import calibrate_scenario, load
from aifabric.cli import app
from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
ROCE_BW = ROOT / "tests/fixtures/real/rocm-gpu-cluster-networking/ib_write_bw.bidir.roce-200g.sweep.txt"
SCENARIO = """name: cal
seed: 1
topology: {kind: star, hosts: 2, link_rate: 200Gbps, link_delay: 1us}
fabric: {technology: roce, mtu: 4000B, header: 64B, switch_buffer: 32MiB,
         pfc: {enabled: true, mode: static}, congestion_control: none}
workload: {kind: incast, senders: 1, receiver: 1, flow_size: 4MB}
sim: {until: 10ms}
"""


@pytest.fixture(scope="module")
def runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click ≥ 8.2 keeps stderr apart already
        return CliRunner()


@pytest.fixture(scope="module")
def roce_cal(tmp_path_factory, runner):
    d = tmp_path_factory.mktemp("cal")
    out = d / "cal-roce.yaml"
    r = runner.invoke(
        app,
        ["calibrate", str(ROCE_BW), "--nic-rate", "200Gbps", "--fit-max-bytes", "64KiB", "--out", str(out)],
    )
    assert r.exit_code == 0, r.output
    return out


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_simulate_applies_the_fitted_nic_efficiency(runner, roce_cal, tmp_path):
    """The real 200G RoCE perftest (98.3 Gb/s per direction, η = 0.499) halves the lone flow's rate."""
    sc = _write(tmp_path, "s.yaml", SCENARIO)
    plain = runner.invoke(app, ["simulate", str(sc), "--json", "--no-progress"])
    cal = runner.invoke(app, ["simulate", str(sc), "--json", "--no-progress", "--calibration", str(roce_cal)])
    assert plain.exit_code == 0 and cal.exit_code == 0, cal.output
    a, b = json.loads(plain.stdout), json.loads(cal.stdout)
    eta = b["engine"]["calibration"]["nic_efficiency"]
    assert eta == pytest.approx(0.499, abs=0.002)
    assert b["engine"]["calibration"]["transport"] == "roce"
    assert "calibration" not in a["engine"]
    fa, fb = a["flows"][0]["fct_us"], b["flows"][0]["fct_us"]
    # 4 MB at 200G is ~163 µs of wire time + a few µs of path: the ratio is close to 1/η
    assert fb / fa == pytest.approx(1 / eta, rel=0.03)
    assert "different transport" not in cal.stderr


def test_other_transport_warns_and_nccl_terms_are_named(runner, tmp_path):
    cal = _write(
        tmp_path,
        "efa.yaml",
        "aifabric_calibration: 1\ntransport: efa\nparameters:\n"
        "  efa: {nic_efficiency: {value: 0.9}, extra_step_latency_us: {value: 5.0}}\n",
    )
    sc = _write(tmp_path, "s.yaml", SCENARIO)
    r = runner.invoke(app, ["simulate", str(sc), "--json", "--no-progress", "--calibration", str(cal)])
    assert r.exit_code == 0, r.output
    assert "measured on efa, applied to the roce fabric (a different transport)" in r.stderr
    assert "extra_step_latency_us is an NCCL software term" in r.stderr
    assert json.loads(r.stdout)["engine"]["calibration"]["nic_efficiency"] == 0.9


def test_perftest_latency_becomes_nic_latency(tmp_path):
    """A measured one-way latency of 3 µs over one switch, against the engine's 2 × (1 µs + 64+2 B at
    200G) = 2.00528 µs, leaves 0.99472 µs for two NICs: 0.49736 µs each; the flow's FCT grows by the
    four NIC crossings of data out and ACK back (2 × 0.497 µs each way)."""
    cal = load(
        _write(
            tmp_path,
            "lat.yaml",
            "aifabric_calibration: 1\nparameters: {roce: {nic_latency_us: {value: 3.0}}}\n",
        )
    )
    import yaml

    sc = scenario_from_dict(yaml.safe_load(SCENARIO))
    sc2, applied = calibrate_scenario(sc, cal)
    assert applied["engine_one_way_us"] == pytest.approx(2.00528, abs=1e-5)
    assert sc2.fabric.nic_latency == 497360
    assert sc.fabric.nic_latency == 0  # the original is untouched
    fa = simulate(sc).flows["fct_us"].iloc[0]
    fb = simulate(sc2).flows["fct_us"].iloc[0]
    assert fb - fa == pytest.approx(4 * 0.49736, abs=0.01)


def test_bad_calibration_file_is_one_line(runner, tmp_path):
    sc = _write(tmp_path, "s.yaml", SCENARIO)
    bad = _write(
        tmp_path, "bad.yaml", "aifabric_calibration: 1\nparameters: {roce: {nic_efficiency: {value: 3}}}\n"
    )
    r = runner.invoke(app, ["simulate", str(sc), "--calibration", str(bad)])
    assert r.exit_code == 2
    assert "NIC efficiency out of range" in r.output + (r.stderr or "")
    assert "Traceback" not in r.output


@pytest.mark.parametrize(
    "field, value", [("nic_efficiency", 0), ("nic_efficiency", 1.5), ("nic_latency", "-1us")]
)
def test_bad_nic_fields_are_one_line(field, value):
    import yaml

    from aifabric.errors import InputError

    d = yaml.safe_load(SCENARIO)
    d["fabric"][field] = value
    with pytest.raises(InputError) as e:
        scenario_from_dict(d)
    assert f"fabric.{field}" in str(e.value) and "\n" not in str(e.value).strip()
