"""aifabric diagnose: counter readers on real public samples, the topology port map, the rules on
hand-made counters, the simulated-run exporter round trip, the CLI's exit codes and the closed loop
over the risk library (slow)."""

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.diagnose import build, diagnose, diagnose_counters, load_fabric
from aifabric.diagnose.readers import read_counters
from aifabric.errors import InputError

HERE = Path(__file__).parent
FIX = HERE / "fixtures" / "diagnose"
REAL = HERE / "fixtures" / "real"
SCEN = HERE.parent / "scenarios"


def _by(scrape, device, port, counter, prio=None):
    return [
        s.value
        for s in scrape.samples
        if (s.device, s.port, s.counter, s.prio) == (device, port, counter, prio)
    ]


def test_node_exporter_sample_parses():
    """node_exporter's infiniband collector output (real): bytes, rate (Gb/s) and link state per NIC port."""
    sc = read_counters(FIX / "node_exporter.infiniband.prom")
    assert sc.format == "prometheus"
    dev = "node_exporter.infiniband"  # no instance label: the file names the host
    assert _by(sc, dev, "rocep1s0f0/1", "tx_bytes") == [2.2447376952e10]
    assert _by(sc, dev, "rocep1s0f0/1", "rate_gbps") == [200.0]
    assert _by(sc, dev, "rocep1s0f1/1", "oper_up") == [0.0]


def test_sonic_show_pfc_counters_sample_parses():
    """SONiC `show pfc counters` (real, with thousands separators): Rx / Tx frames per priority."""
    sc = read_counters(FIX / "sonic-utilities.show_pfc_counters.txt")
    dev = "sonic-utilities.show_pfc_counters"
    assert _by(sc, dev, "Ethernet0", "pfc_rx_frames", 0) == [1200.0]
    assert _by(sc, dev, "Ethernet8", "pfc_tx_frames", 3) == [813.0]
    assert len(sc.samples) == 3 * 8 * 2


def test_perfquery_sample_parses():
    """perfquery -x (real): PortXmitData in 4-byte words becomes bytes; PortXmitWait in ticks."""
    sc = read_counters(FIX / "infiniband_exporter.perfquery_x.txt")
    assert _by(sc, "lid:1719", "1", "tx_bytes") == [36298026860928 * 4]
    assert _by(sc, "lid:1719", "2", "xmit_wait_ticks") == [36510964.0]


def test_unreadable_counter_file_is_one_input_error(tmp_path):
    """A file in no known format is one InputError naming the file and the formats allowed."""
    bad = tmp_path / "x.txt"
    bad.write_text("hello world\n")
    with pytest.raises(InputError, match="not a counter snapshot"):
        read_counters(bad)


def test_cli_bad_counters_exit_2_one_line(tmp_path):
    """diagnose with a bad counter file exits 2 with one 'error:' line and no traceback."""
    bad = tmp_path / "x.txt"
    bad.write_text("hello world\n")
    r = CliRunner().invoke(
        app, ["diagnose", "--topology", str(SCEN / "pause-storm.yaml"), "--counters", str(bad)]
    )
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in r.output


def test_counters_of_another_fabric_are_refused():
    """Counters whose ports are all absent from the topology are bad input, not a healthy fabric."""
    with pytest.raises(InputError, match="no counter matches a port"):
        diagnose(SCEN / "pause-storm.yaml", [FIX / "infiniband_exporter.perfquery_x.txt"])


def test_ibnetdiscover_ports_resolve():
    """A real ibnetdiscover dump: a switch port by number and a CA by host name resolve to one link."""
    fm = load_fabric(REAL / "nvidia-topograph" / "ibnetdiscover-ndr-example.out.txt")
    sw = "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"
    p = fm.resolve(sw, "1")
    assert p is not None and p.peer == "a08-p1-dgx-04-c01" and p.peer_label == "mlx5_5/1"
    assert fm.resolve("a08-p1-dgx-04-c01", "mlx5_5/1").peer == sw


LLDP = [
    {"device": "leaf1", "port": "Ethernet0", "peer": "h1", "peer_port": "eth0", "rate_gbps": 400},
    {"device": "leaf1", "port": "Ethernet4", "peer": "h2", "peer_port": "eth0", "rate_gbps": 400},
    {"device": "leaf1", "port": "Ethernet8", "peer": "spine1", "peer_port": "Ethernet0", "rate_gbps": 400},
    {"device": "spine1", "port": "Ethernet0", "peer": "leaf1", "peer_port": "Ethernet8", "rate_gbps": 400},
]


def _lldp(tmp_path) -> Path:
    p = tmp_path / "lldp.json"
    p.write_text(json.dumps(LLDP))
    return p


def test_slow_receiver_from_host_ethtool(tmp_path):
    """A host whose NIC held its leaf port 30 % of a 1 s interval (ethtool tx_prio3_pause_duration)
    is a slow receiver at that host."""
    c = tmp_path / "h2.txt"
    c.write_text(
        "# interval: 1\nadmin@h2:~$ ethtool -S eth0\nNIC statistics:\n     tx_prio3_pause: 900\n"
        "     tx_prio3_pause_duration: 300000\n"
    )
    out = diagnose(_lldp(tmp_path), [c])
    kinds = {(f["kind"], f["location"]) for f in out["findings"]}
    assert ("slow-receiver", "h2") in kinds
    f = next(f for f in out["findings"] if f["kind"] == "slow-receiver")
    assert f["evidence"]["held_ratio"] == pytest.approx(0.3)


def test_two_scrapes_give_increase_and_interval(tmp_path):
    """Two Prometheus scrapes with timestamps: the increase between them over their time difference."""
    for name, t, v in (("a.prom", 1_000_000, 1000), ("b.prom", 1_010_000, 5000)):
        (tmp_path / name).write_text(
            f'node_ethtool_tx_prio3_pause_duration{{instance="h1",device="eth0"}} {v * 1000} {t}\n'
        )
    fm = load_fabric(_lldp(tmp_path))
    fc = build(fm, [read_counters(tmp_path / "a.prom"), read_counters(tmp_path / "b.prom")])
    assert fc.interval_s == pytest.approx(10.0)
    e = fc.egress[("leaf1", "Ethernet0")]
    assert e.held_ratio(fc.interval_s) == pytest.approx(4000 * 1000 * 1e-6 / 10.0)


def test_link_down_and_degraded(tmp_path):
    """A port reported down is link-down (error); one reporting less than its rate is link-degraded."""
    c = tmp_path / "leaf1.prom"
    c.write_text(
        'sai_port_oper_status{device="leaf1",interface="Ethernet8"} 0\n'
        'sai_port_speed_gbps{device="leaf1",interface="Ethernet4"} 200\n'
    )
    fm = load_fabric(_lldp(tmp_path))
    findings, _ = diagnose_counters(build(fm, [read_counters(c)], 1.0))
    got = {(f.kind, f.location, f.severity) for f in findings}
    assert ("link-down", "leaf1:Ethernet8", "error") in got
    assert ("link-degraded", "leaf1:Ethernet4", "warning") in got


def test_no_interval_is_said(tmp_path):
    """One scrape with no interval anywhere: the time ratios are reported as not checked."""
    c = tmp_path / "h2.txt"
    c.write_text("admin@h2:~$ ethtool -S eth0\nNIC statistics:\n     tx_prio3_pause_duration: 300000\n")
    out = diagnose(_lldp(tmp_path), [c])
    assert out["interval_s"] is None and out["not_checked"]


def test_simulated_pause_storm_is_found(tmp_path):
    """scenarios/pause-storm.yaml (leaf0 injects PAUSE 2 us every 10 us): its exported Prometheus
    counters, read back by diagnose, name a pause storm at leaf0 and nothing at another switch."""
    out_file = tmp_path / "c.prom"
    r = CliRunner().invoke(
        app,
        [
            "simulate",
            str(SCEN / "pause-storm.yaml"),
            "--counters",
            "prometheus",
            "--counters-out",
            str(out_file),
            "--no-progress",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        app, ["diagnose", "--topology", str(SCEN / "pause-storm.yaml"), "--counters", str(out_file), "--json"]
    )
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    storms = [f for f in out["findings"] if f["kind"] == "pause-storm"]
    assert [f["location"] for f in storms] == ["leaf0"]
    assert storms[0]["evidence"]["pause_ratio_max"] == pytest.approx(0.2, abs=0.02)


def test_simulate_counters_flags_go_together(tmp_path):
    """--counters without --counters-out is bad input (exit 2)."""
    r = CliRunner().invoke(app, ["simulate", str(SCEN / "pause-storm.yaml"), "--counters", "prometheus"])
    assert r.exit_code == 2


def test_report_draws_the_hot_port(tmp_path):
    """--report writes an HTML page naming the finding's location."""
    c = tmp_path / "h2.txt"
    c.write_text(
        "# interval: 1\nadmin@h2:~$ ethtool -S eth0\nNIC statistics:\n     tx_prio3_pause_duration: 300000\n"
    )
    rep = tmp_path / "r.html"
    r = CliRunner().invoke(
        app, ["diagnose", "--topology", str(_lldp(tmp_path)), "--counters", str(c), "--report", str(rep)]
    )
    assert r.exit_code == 1
    page = rep.read_text()
    assert "<svg" in page and "slow-receiver" in page


@pytest.mark.validation
def test_drift_on_a_real_nccl_tests_run():
    """2 x p5.48xlarge all_reduce_perf (real): measured busbw is the file's largest size's, the model's
    the collective model's; their ratio is inside the model's +-10 % band."""
    from aifabric.diagnose.drift import measured, model_busbw

    run, meas, size = measured(
        REAL / "aws-awsome-distributed-training" / "all_reduce_perf.2x-p5.48xlarge.srun-labelled.txt"
    )
    assert meas == pytest.approx(487.09) and size == 16 * 2**30
    model, assumed = model_busbw(run, size)
    assert assumed["ranks"] == 16
    assert abs(meas / model - 1) <= 0.10


@pytest.mark.slow
@pytest.mark.validation
def test_closed_loop_names_library_faults():
    """Every risk-library fault with a counter signature is named at its location from exported
    Prometheus counters: precision and recall >= 0.9 on RoCE and on InfiniBand."""
    from aifabric.diagnose.closed_loop import closed_loop

    r = closed_loop("prometheus")
    for tech, f in r["fabrics"].items():
        assert f["precision"] >= 0.9 and f["recall"] >= 0.9, (tech, f)
        assert f["faults_with_signature"] >= 5
    assert r["pass"]
    assert not math.isnan(r["fabrics"]["roce"]["precision"])


@pytest.mark.slow
def test_explained_by_resimulates_the_library_fault():
    """A pause-storm finding is costed by re-simulating the library's pfc-storm on the RoCE testbed:
    a positive communication slowdown and the busbw it alone would leave (below 1)."""
    from aifabric.diagnose.drift import explain

    (part,) = explain(["pause-storm", "pause-storm"], "roce")
    assert part["library_fault"] == "pfc-storm"
    assert part["comm_slowdown"] > 0 and 0 < part["busbw_ratio_alone"] < 1


def test_drift_only_without_counters():
    """--job alone: the drift object, no findings, exit 0 when inside the band."""
    job = REAL / "aws-awsome-distributed-training" / "all_reduce_perf.2x-p5.48xlarge.srun-labelled.txt"
    r = CliRunner().invoke(app, ["diagnose", "--job", str(job), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["findings"] == [] and set(out["drift"]) >= {"measured", "model", "ratio", "explained_by"}
