"""`aifabric calibrate`: readers of nccl-tests / perftest output, the fit and its held-out report on
the shipped real outputs, the calibration file, and its use by `compare` / `collective`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.calibrate import calibration as calmod
from aifabric.calibrate.fit import fit_nccl, fit_perftest
from aifabric.calibrate.model import chunk_bytes
from aifabric.calibrate.parsers import parse_measurement, parse_nccl_tests_text, parse_perftest_text
from aifabric.cli import app
from aifabric.errors import InputError

REAL = Path(__file__).parent / "fixtures" / "real"
P5 = REAL / "aws-awsome-distributed-training" / "all_reduce_perf.2x-p5.48xlarge.srun-labelled.txt"
P4DE = REAL / "aws-awsome-distributed-training" / "all_reduce_perf.2x-p4de.24xlarge.srun-labelled.txt"
EKS = REAL / "aws-awsome-distributed-training" / "all_reduce_perf.2x-p5.48xlarge.eks-mpijob.ompi-tagged.txt"
ROCE = REAL / "rocm-gpu-cluster-networking" / "ib_write_bw.bidir.roce-200g.sweep.txt"
MIB = 2**20

# nccl-tests header laid out as util.cu prints it (formats.md §2.1)
HEADER = """# nccl-tests version 2.19.6 nccl-headers=22703 nccl-library=22703
# Collective test starting: {test}
# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
{devices}
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
ROW_1M = "     1048576        262144     float     sum      -1    123.2    8.51   15.95      0    121.3    8.64   16.21      0\n"


def devices(n: int = 16, per: int = 8, name: str = "NVIDIA H100 80GB HBM3") -> str:
    return "\n".join(
        f"#  Rank {r:2d} Group  0 Pid {6899 + r:6d} on host-{r // per} device {r % per:2d} [0000:04:00] {name}"
        for r in range(n)
    )


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ---- readers -----------------------------------------------------------------------------------
def test_real_p5_rows_prefix_and_ranks_from_busbw_ratio():
    """The srun-labelled p5 table: 32 sizes 8 B–16 GiB, `0: ` stripped, 16 ranks from busbw/algbw."""
    run = parse_measurement(P5)
    assert run.kind == "nccl-tests" and run.op == "all-reduce" and run.test == "all_reduce_perf"
    assert len(run.rows) == 32 and run.rows[0].size_bytes == 8 and run.rows[-1].size_bytes == 16 * 2**30
    assert run.rows[0].time_us == 69.12 and run.rows[-1].busbw_gbps == 487.09
    assert run.rows[-1].in_place_time_us == 66109.0
    assert run.ranks == 16 and run.ranks_from == "busbw / algbw"
    assert run.transport is None and run.nodes is None


def test_real_eks_openmpi_tags_size_zero_and_ellipsis():
    """`[1,0]<stdout>:` prefixes are stripped, the size-0 row and the elided `...` line are skipped."""
    run = parse_measurement(EKS)
    assert [r.size_bytes for r in run.rows] == [2**k for k in range(26, 32)]
    assert run.rows[-1].busbw_gbps == 437.79 and run.ranks == 16


def test_real_perftest_roce_bidirectional():
    """ib_write_bw -b -a --report_gbits: 23 rows, RoCE from `Link type : Ethernet`, MTU, Gb/s."""
    run = parse_measurement(ROCE)
    assert run.kind == "perftest-bw" and run.bidirectional and run.transport == "roce"
    assert run.mtu_bytes == 4096 and run.unit == "Gb/sec" and len(run.rows) == 23
    assert run.rows[-1].values["avg_gbps"] == 204.59 and run.rows[0].size_bytes == 2


def test_header_devices_give_ranks_nodes_gpu(tmp_path):
    """`# Using devices` → ranks, hostnames (nodes) and the GPU model; the test name from the header."""
    text = HEADER.format(test="all_gather_perf", devices=devices())
    text += "     1048576         16384     float    none      -1    41.20   25.45   23.86      0    40.10   26.15   24.51      0\n"
    run = parse_nccl_tests_text(write(tmp_path, "out.txt", text))
    assert run.op == "all-gather" and run.ranks == 16 and run.nodes == 2 and run.gpu == "h100"
    assert run.hosts == ("host-0", "host-1")


@pytest.mark.parametrize(
    "row, time_us, busbw",
    [
        # -I 1: per-iteration columns after each block
        (
            "  8388608  2097152  float  sum  -1  204.8  40.96  76.80  0  190.1  220.3  219.9  3.10  "
            "201.1  41.71  78.20  0  195.0  210.0  209.0  2.2",
            204.8,
            76.80,
        ),
        # -S 1: a timestamp column
        (
            "  8388608  2097152  float  sum  -1  2026-01-02 10:11:12  204.8  40.96  76.80  0  201.1  41.71  78.20  0",
            204.8,
            76.80,
        ),
        # exponent form when the number is too wide, #wrong N/A (-c 0)
        (
            "  17179869184  4294967296  float  sum  -1  6.6e+04  259.78  487.09  N/A  6.6e+04  259.87  487.26  N/A",
            66000.0,
            487.09,
        ),
    ],
)
def test_row_variants(tmp_path, row, time_us, busbw):
    """-I / -S / exponent / N/A rows read the out-of-place time and busbw."""
    run = parse_nccl_tests_text(write(tmp_path, "all_reduce_perf.log", row + "\n"))
    assert run.rows[0].time_us == time_us and run.rows[0].busbw_gbps == busbw


def test_nccl_info_lines_transport_layout_algorithm(tmp_path):
    """NCCL_DEBUG=INFO: NET/IB …/RoCE → roce, nRanks/nNodes/localRanks, NCCL_ALGO, tuner lines;
    NET/OFI → efa; NET/IB …/IB → ib."""
    info = (
        "host-0:123:123 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "host-0:123:130 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
        "host-0:123:130 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
        "host-0:123:130 [0] NCCL INFO comm 0x55 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
        "host-0:123:130 [0] NCCL INFO 1048576 Bytes -> Algo 1 proto 2 time 57.2\n"
    )
    run = parse_nccl_tests_text(write(tmp_path, "all_reduce_perf.txt", info + ROW_1M))
    assert run.transport == "roce" and run.info.version == "2.21.5+cuda12.4"
    assert (run.info.ranks, run.info.nodes, run.info.local_ranks) == (16, 2, 8)
    assert run.info.algorithm == "ring" and run.info.tuning == ((1048576, "ring", "simple"),)
    assert run.ranks == 16 and run.ranks_from == "NCCL INFO nRanks"
    efa = "h:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa\n"
    assert parse_nccl_tests_text(write(tmp_path, "all_reduce_perf.efa", efa + ROW_1M)).transport == "efa"
    ib = "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0\n"
    assert parse_nccl_tests_text(write(tmp_path, "all_reduce_perf.ib", ib + ROW_1M)).transport == "ib"


def test_nccl_info_nic_speeds_give_the_rate_per_gpu(tmp_path):
    """NCCL INFO NIC speeds (both log formats) summed per node over GPUs per node → the layout's NIC
    rate; the size of the fitted collective follows from the file, no assumption note about it."""
    from aifabric.calibrate.fit import nccl_layout

    info = "".join(
        f"h:1:1 [0] NCCL INFO NET/IB: [{i}] mlx5_{i}:uverbs{i}:1/IB provider=Mlx5 speed=400000 context=0x1\n"
        for i in range(8)
    )
    info += "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0\n"
    info += "h:1:1 [0] NCCL INFO comm 0x55 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
    run = parse_nccl_tests_text(write(tmp_path, "all_reduce_perf.txt", info + ROW_1M))
    assert run.info.nic_speeds_mbps == (400000,) * 8 and run.transport == "ib"
    lay, how, notes = nccl_layout(run, None, None, "h100", None)
    assert lay.nic_rate_bps == 400e9 and lay.gpus_per_node == 8 and "NCCL INFO" in how["nic_rate"]
    assert not any("NIC rate" in n for n in notes)


def test_nccl_tests_json(tmp_path):
    """nccl-tests -J: results[] with out_of_place / in_place, devices[] → ranks, hosts, GPU; "nan" skipped."""
    block = {"time": 123.2, "alg_bw": 8.51, "bus_bw": 15.95, "nwrong": 0}
    doc = {
        "version": "2.19.6",
        "devices": [{"rank": r, "hostname": f"n{r // 8}", "device_info": "NVIDIA H200"} for r in range(16)],
        "results": [
            {
                "size": 1048576,
                "count": 262144,
                "type": "float",
                "redop": "sum",
                "root": -1,
                "out_of_place": block,
                "in_place": {**block, "time": 121.3, "bus_bw": 16.21},
            },
            {
                "size": 2097152,
                "count": 524288,
                "type": "float",
                "redop": "sum",
                "root": -1,
                "out_of_place": {"time": "nan", "alg_bw": "nan", "bus_bw": "nan", "nwrong": 0},
            },
        ],
    }
    run = parse_measurement(write(tmp_path, "all_reduce_perf.json", json.dumps(doc)))
    assert run.op == "all-reduce" and run.ranks == 16 and run.nodes == 2 and run.gpu == "h200"
    assert len(run.rows) == 1 and run.rows[0].in_place_busbw_gbps == 16.21


def test_perftest_units_warnings_tabs_and_latency(tmp_path):
    """MiB/sec → Gb/s (2^20 B × 8 / 1e9), warning lines between header and rows, tabs; a latency table."""
    bw = (
        "                    RDMA_Write BW Test\n Link type       : IB\n Mtu             : 4096[B]\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
        "Conflicting CPU frequency values detected: 800.000000 != 3400.000000. CPU Frequency is not max.\n"
        " 65536\t5000\t\t46775.71\t46770.31\t\t0.748325\n"
        "---------------------------------------------------------------------------------------\n"
    )
    run = parse_perftest_text(write(tmp_path, "bw.txt", bw))
    assert run.transport == "ib" and not run.bidirectional and run.unit == "MiB/sec"
    assert run.rows[0].values["avg_gbps"] == pytest.approx(46770.31 * 8 * 2**20 / 1e9)
    lat = (
        "                    Send Latency Test\n Link type       : Ethernet\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
        "   99% percentile[usec]   99.9% percentile[usec] \n"
        " 2       1000          1.61           4.87         1.65               1.68             0.08"
        "            2.03                   4.87\n"
    )
    run = parse_measurement(write(tmp_path, "lat.txt", lat))
    assert run.kind == "perftest-lat" and run.transport == "roce"
    v = run.rows[0].values
    assert (v["t_min_us"], v["t_typical_us"], v["p99_us"], v["p99_9_us"]) == (1.61, 1.65, 2.03, 4.87)


def test_perftest_efa_srd_and_rank_prefix(tmp_path):
    """EFA perftest (`Connection type : SRD`, whose Link type reads IB) is efa; `[rank 0] ` prefixes
    (Python launchers) are stripped."""
    text = (
        "[rank 0]                      Send Latency Test\n"
        "[rank 0]  Number of qps   : 1\t\tTransport type : Unknown\n"
        "[rank 0]  Connection type : SRD\t\tUsing SRQ      : OFF\n"
        "[rank 0]  Link type       : IB\n"
        "[rank 0]  #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
        "   99% percentile[usec]   99.9% percentile[usec]\n"
        "[rank 0]  2       1000          14.11          1210.34      15.78    \t       22.98       \t90.04  \t\t22.37"
        "   \t\t1210.34\n"
    )
    run = parse_measurement(write(tmp_path, "lat.txt", text))
    assert (
        run.kind == "perftest-lat" and run.transport == "efa" and run.rows[0].values["t_typical_us"] == 15.78
    )


def test_perftest_json(tmp_path):
    """perftest --out_json records (MsgSize, BW_peak, BW_average, MsgRate)."""
    rec = {"MsgSize": 65536, "n_iterations": 5000, "BW_peak": 392.38, "BW_average": 392.34, "MsgRate": 0.748}
    run = parse_measurement(write(tmp_path, "bw.json", json.dumps({"results": [rec]})))
    assert run.kind == "perftest-bw" and run.rows[0].values["avg_gbps"] == 392.34


@pytest.mark.parametrize(
    "text, needle",
    [
        ("", "no nccl-tests result rows"),
        ("hello\nworld\n", "no nccl-tests result rows"),
        (
            "#       size         count      type   redop    root     time\n  1024  256  float  sum  -1  12.0  1.0\n",
            "line 2",
        ),
        ("  1024  256  float  sum  -1  x  y  z  0\n", "line 1"),
        ("  1024  256  float  sum  -1  0.0  0.0  0.0  0  0.0  0.0  0.0  0\n", "not positive"),
        ('{"results": [{"size": 1}]}', "results[0]"),
        ("{not json", "invalid JSON"),
        (
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 65536 5000 1.0\n",
            "line 2",
        ),
    ],
)
def test_bad_input_is_one_line_naming_file_and_line(tmp_path, text, needle):
    """Broken files → one InputError naming the file (and the line when there is one)."""
    p = write(tmp_path, "bad.txt", text)
    with pytest.raises(InputError) as exc:
        parse_measurement(p)
    msg = str(exc.value)
    assert msg.startswith(str(p)) and needle in msg and "\n" not in msg


# ---- model pieces and the fit -------------------------------------------------------------------
def test_nccl_chunk_rules():
    """NVLSTree chunk (calcCollChunking): 128 KiB from 4 × ops × chunk up, 64 KiB below, 32 KiB below 1 ×."""
    ops = 16 * 8
    assert chunk_bytes("nvls-tree", "simple", 256 * MIB, ops, 2) == 128 * 1024
    assert chunk_bytes("nvls-tree", "simple", 32 * MIB, ops, 2) == 64 * 1024
    assert chunk_bytes("nvls-tree", "simple", 4 * MIB, ops, 2) == 32 * 1024
    assert chunk_bytes("nvls-tree", "simple", 256 * MIB, ops, 4) == 64 * 1024  # ≥ 4 nodes: 64 KiB cap
    assert chunk_bytes("ring", "simple", 256 * MIB, 16, 2) == 2 * MIB


def test_fit_p5_holds_out_above_256mib_and_predicts_them():
    """2 × p5: sizes > 256 MiB held out; NVLS binds so η is reported not identifiable (with a lower
    bound); the held-out busbw is predicted within 11 % (mean 8 %), and target_met says whether ≤ 10 %."""
    f = fit_nccl(parse_measurement(P5), transport="efa")
    assert [r["held_out"] for r in f.rows] == [r["size_bytes"] > 256 * MIB for r in f.rows]
    assert all(
        {"source", "quantity", "size_bytes", "measured", "model", "held_out"} <= set(r) for r in f.rows
    )
    s = f.summary()
    assert (
        s["held_out_points"] == 6
        and s["held_out_max_abs_error"] < 0.11
        and s["held_out_mean_abs_error"] < 0.08
    )
    assert s["target_met"] == (s["held_out_max_abs_error"] <= 0.10)
    assert f.parameters["nic_efficiency"]["value"] is None
    assert 0.3 < f.parameters["nic_efficiency_lower_bound"]["value"] < 1
    assert 15 < f.parameters["extra_step_latency_us"]["value"] < 45  # EFA: tens of µs per step
    assert all(r["bound"] == "nvlink" for r in f.rows if r["held_out"])


def test_fit_p4de_network_bound_identifies_nic_efficiency():
    """2 × p4de (network-bound at 50 Gb/s per GPU): η fitted on ≤ 256 MiB, held-out within 10 %.
    The measured 78 GB/s busbw is above the node's 50 GB/s of EFA, which NCCL's flat ring cannot
    reach (its busbw ≤ G × NIC rate): at 2 nodes NCCL ran the tree (S/G per NIC); fitted as tree."""
    f = fit_nccl(parse_measurement(P4DE), nic_rate_bps=50e9, gpu="h100", transport="efa", algorithm="tree")
    eta = f.parameters["nic_efficiency"]["value"]
    assert 0.7 < eta < 0.95
    s = f.summary()
    assert s["held_out_points"] == 3 and s["target_met"] and s["held_out_max_abs_error"] < 0.05


def test_tuner_lines_set_the_algorithm_per_size(tmp_path):
    """NCCL_DEBUG_SUBSYS=TUNING lines: the logged algorithm / protocol is what the fit times at that
    size (tree / Simple at 1 MiB instead of the model's ring / LL); other sizes keep the model's."""
    tuning = "h:1:1 [0] NCCL INFO 1048576 Bytes -> Algo 0 proto 2 time 80.1\n"
    p = write(tmp_path, "all_reduce_perf.txt", tuning + P5.read_text())
    f = fit_nccl(parse_measurement(p), transport="efa")
    row = {r["size_bytes"]: r for r in f.rows}
    assert (row[MIB]["algorithm"], row[MIB]["protocol"]) == ("tree", "simple")
    own = {r["size_bytes"]: r for r in fit_nccl(parse_measurement(P5), transport="efa").rows}
    assert (row[2 * MIB]["algorithm"], row[2 * MIB]["protocol"]) == (
        own[2 * MIB]["algorithm"],
        own[2 * MIB]["protocol"],
    )
    assert (own[MIB]["algorithm"], own[MIB]["protocol"]) != ("tree", "simple")
    assert "per_size" in f.layout["how"]


def test_fit_max_bytes_changes_what_is_held_out():
    """--fit-max-bytes 1 GiB holds out only 2 … 16 GiB."""
    f = fit_nccl(parse_measurement(P5), fit_max_bytes=2**30)
    assert [r["size_bytes"] for r in f.held_out] == [2**k for k in range(31, 35)]


def test_fit_perftest_plateau_efficiency_and_held_out():
    """RoCE ib_write_bw: per-direction plateau ≈ 102 Gb/s (bidirectional halved); η against a 200 G
    goodput ceiling; fitted on ≤ 64 KiB the larger sizes are predicted within 5 %."""
    f = fit_perftest(parse_measurement(ROCE), fit_max_bytes=64 * 1024, nic_rate_bps=200e9)
    assert 95 < f.parameters["achieved_gbps"]["value"] < 104
    assert f.parameters["nic_efficiency"]["value"] == pytest.approx(
        f.parameters["achieved_gbps"]["value"] / (200 * 4096 / (4096 + 64))
    )
    s = f.summary()
    assert s["held_out_points"] == 7 and s["held_out_max_abs_error"] < 0.05
    flagged = fit_perftest(parse_measurement(ROCE), transport="efa")  # the file's Link type wins
    assert flagged.transport == "roce" and any("--transport efa not used" in n for n in flagged.notes)
    whole = fit_perftest(parse_measurement(ROCE))
    assert whole.summary()["held_out_points"] == 0 and any("no point is held out" in n for n in whole.notes)
    assert whole.parameters["nic_efficiency"]["value"] is None  # no line rate, no efficiency


# ---- the calibration file and its use -----------------------------------------------------------
def _cal(params: dict) -> calmod.Calibration:
    return calmod.Calibration("cal.yaml", "x", params)


def test_calibrate_fabric_matching_other_and_missing_transport():
    """IB calibration → the IB fabric (η replaces the NIC efficiency, δ added to path latency); EFA → applied with a
    warning; a RoCE-only file leaves the IB fabric alone, with a warning."""
    from aifabric.stages.measure.network import FabricNetwork

    ib = FabricNetwork.from_measured("infiniband", 400e9, 0.9, 2.0)
    cal = _cal({"ib": {"nic_efficiency": {"value": 0.8}, "extra_step_latency_us": {"value": 10.0}}})
    out = calmod.calibrate_fabric(ib, cal)
    assert out.nic_efficiency == pytest.approx(0.8) and out.path_latency_us == pytest.approx(12.0)
    assert out.ring_step_efficiency * out.nic_efficiency == pytest.approx(0.72)  # what β uses
    assert "calibrated by cal.yaml" in out.source and not cal.warnings
    efa = _cal({"efa": {"extra_step_latency_us": {"value": 29.0}}})
    out = calmod.calibrate_fabric(ib, efa)
    assert out.path_latency_us == pytest.approx(31.0) and out.ring_step_efficiency == 0.9
    assert any("different transport" in w for w in efa.warnings)
    roce = _cal({"roce": {"nic_efficiency": {"value": 0.5}}})
    assert calmod.calibrate_fabric(ib, roce) is ib and any("no ib measurement" in w for w in roce.warnings)


def test_network_evidence_calibrated_after_measure():
    """The pipeline hook: `Calibration.apply_network` calibrates every fabric of a NetworkEvidence."""
    from aifabric.stages.measure.network import FabricNetwork, NetworkEvidence

    ev = NetworkEvidence(
        (
            FabricNetwork.from_measured("infiniband", 400e9, 1.0, 1.0),
            FabricNetwork.from_measured("roce", 400e9, 0.8, 1.5),
        )
    )
    cal = _cal({"ib": {"nic_efficiency": {"value": 0.9}}, "roce": {"nic_efficiency": {"value": 0.5}}})
    out = cal.apply_network(ev)
    assert [f.ring_step_efficiency * f.nic_efficiency for f in out.fabrics] == pytest.approx([0.9, 0.4])


def test_nic_efficiency_is_nccls_unless_calibrated():
    """The main job's collective times use the same NIC efficiency as `collective` and the step
    model's validation (0.94) on a flow-model fabric; a user's own end-to-end efficiency already
    includes the NIC's (1); β scales with it."""
    from dataclasses import replace

    from aifabric.stages.measure.network import FabricNetwork
    from aifabric.workload.collectives import NIC_EFFICIENCY

    user = FabricNetwork.from_measured("infiniband", 400e9, 0.9, 2.0)
    assert user.nic_efficiency == 1.0
    model = replace(user, nic_efficiency=NIC_EFFICIENCY)
    assert FabricNetwork.__dataclass_fields__["nic_efficiency"].default == NIC_EFFICIENCY == 0.94
    t_user = user.comm().collective_s("all-reduce", 1 << 30, 64, "network")
    t_model = model.comm().collective_s("all-reduce", 1 << 30, 64, "network")
    assert t_model > t_user and model.comm()._beta_net() == pytest.approx(0.94 * user.comm()._beta_net())


def test_file_roundtrip_and_bad_files(tmp_path):
    """build → write → load keeps the parameters; a file that is not a calibration is one clear error."""
    f = fit_nccl(parse_measurement(P5), transport="efa")
    doc = calmod.build([f], 256 * MIB, "test")
    cal = calmod.load(calmod.write(doc, tmp_path / "cal.yaml"))
    assert cal.transport == "efa"
    assert cal.value("efa", "pipeline_fill_rounds") == pytest.approx(
        f.parameters["pipeline_fill_rounds"]["value"]
    )
    assert doc["sources"][0]["quality"]["held_out_points"] == 6
    for text, needle in (("a: [", "not YAML"), ("foo: 1\n", "not an aifabric calibration file")):
        with pytest.raises(InputError, match=needle):
            calmod.load(write(tmp_path, "bad.yaml", text))
    bad = write(
        tmp_path, "eta.yaml", "aifabric_calibration: 1\nparameters: {ib: {nic_efficiency: {value: 7}}}\n"
    )
    with pytest.raises(InputError, match="NIC efficiency out of range"):
        calmod.load(bad)


@pytest.fixture(scope="module")
def runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click ≥ 8.2 keeps stderr apart already
        return CliRunner()


def test_cli_json_contract_out_file_and_report(runner, tmp_path):
    """`calibrate FILES --out --json --report`: one JSON object with fits[] (contract keys), transport,
    parameters; the YAML file and a self-contained HTML report with one chart per file."""
    out, rep = tmp_path / "cal.yaml", tmp_path / "cal.html"
    args = ["calibrate", str(P5), str(ROCE), "--out", str(out), "--json", "--report", str(rep)]
    r = runner.invoke(app, [*args, "--nic-rate", "400Gbps"])
    assert r.exit_code == 0, r.stderr
    j = json.loads(r.stdout)
    assert len(j["fits"]) == 32 + 23 and j["transport"] == "mixed"
    assert set(j["parameters"]) == {"unknown", "roce"}
    assert all(
        {"source", "quantity", "size_bytes", "measured", "model", "held_out"} <= set(x) for x in j["fits"]
    )
    assert calmod.load(out).value("roce", "achieved_gbps") > 90
    html = rep.read_text()
    assert "chart-cal-0" in html and "chart-cal-1" in html and "Plotly.newPlot" in html


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--fit-max-bytes", "lots"], "--fit-max-bytes"),
        (["--gpu", "a100"], "--gpu"),
        (["--transport", "carrier-pigeon"], "--transport"),
        (["--algorithm", "magic"], "--algorithm"),
    ],
)
def test_cli_bad_flags_exit_2_one_line(runner, tmp_path, args, needle):
    """Bad flags → exit 2 and one line on stderr naming the flag."""
    r = runner.invoke(app, ["calibrate", str(P5), "--out", str(tmp_path / "c.yaml"), *args])
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_bad_file_exit_2(runner, tmp_path):
    """A file that is not a measurement → exit 2, one line naming it."""
    bad = write(tmp_path, "notes.txt", "nothing to see\n")
    r = runner.invoke(app, ["calibrate", str(bad), "--out", str(tmp_path / "c.yaml")])
    assert r.exit_code == 2 and "notes.txt" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_collective_with_calibration_retimes_the_sweep(runner, tmp_path):
    """`collective --calibration`: the p5 fit applied to 16 H100 reproduces the calibrated model (the
    fit's model times) and warns that an EFA calibration is applied to InfiniBand."""
    cal = tmp_path / "cal.yaml"
    r = runner.invoke(app, ["calibrate", str(P5), "--out", str(cal), "--transport", "efa", "--json"])
    model = {x["size_bytes"]: x["model_time_us"] for x in json.loads(r.stdout)["fits"]}
    sweep = ["collective", "all-reduce", "--gpus", "16", "--algorithm", "auto", "--engine", "analytic"]
    r = runner.invoke(
        app, [*sweep, "--min-bytes", "256MiB", "--max-bytes", "1GiB", "--calibration", str(cal), "--json"]
    )
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [x["time_us"] for x in rows] == pytest.approx([model[x["size_bytes"]] for x in rows], rel=1e-6)
    assert "different transport" in r.stderr


def test_compare_calibration_flag_rejects_bad_file_fast(runner, tmp_path):
    """`compare --calibration` reads the file before any simulation: a bad file is exit 2, one line."""
    bad = write(tmp_path, "c.yaml", "foo: 1\n")
    r = runner.invoke(app, ["compare", "--gpus", "64", "--json", "--calibration", str(bad)])
    assert r.exit_code == 2 and "c.yaml" in r.stderr
