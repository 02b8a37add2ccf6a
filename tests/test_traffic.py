"""Traffic generators and flow-file readers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aifabric.errors import InputError
from aifabric.workload import traffic

ROOT = Path(__file__).resolve().parents[1]
HOSTS = np.arange(16)


def test_permutation_is_a_seeded_derangement():
    """Every host sends once and receives once, never to itself; same seed → same draw."""
    a = traffic.permutation(HOSTS, 1000, seed=7)
    assert sorted(a["src"]) == sorted(a["dst"]) == list(range(16))
    assert (a["src"] != a["dst"]).all()
    assert a.equals(traffic.permutation(HOSTS, 1000, seed=7))
    assert not a.equals(traffic.permutation(HOSTS, 1000, seed=8))


def test_incast_and_all_to_all_shapes():
    """incast: N senders other than the receiver; all-to-all: n(n-1) ordered pairs."""
    inc = traffic.incast(HOSTS, 5, 3, 100)
    assert (inc["dst"] == 3).all() and 3 not in set(inc["src"]) and len(inc) == 5
    a2a = traffic.all_to_all(HOSTS[:5], 100)
    assert len(a2a) == 20 and (a2a["src"] != a2a["dst"]).all()
    with pytest.raises(InputError, match="senders"):
        traffic.incast(HOSTS, 16, 0, 100)


@pytest.mark.parametrize("name,mean", [("websearch", 1_711_250), ("fb_hadoop", 120_421)])
def test_shipped_cdf_means_match_their_headers(name, mean):
    """The packaged CDFs have the mean flow sizes their files state (within 2 %)."""
    assert traffic.cdf_mean(traffic.read_cdf(name)) == pytest.approx(mean, rel=0.02)


def test_poisson_offers_the_requested_load():
    """Offered bytes per host ≈ load × rate × duration (within 15 % over 64 hosts)."""
    cdf = traffic.read_cdf("fb_hadoop")
    dur = 2 * 10**9  # 2 ms
    df = traffic.poisson(np.arange(64), 0.3, cdf, dur, 100e9, seed=1)
    offered = df["size_bytes"].sum() * 8 / (dur / 1e12) / 64
    assert offered == pytest.approx(0.3 * 100e9, rel=0.15)
    assert (df["src"] != df["dst"]).all() and df["start_ps"].is_monotonic_increasing


def test_reads_peer_flow_files():
    """The shipped ns-3 flow.txt and htsim .cm peer files agree on the incast32 flows."""
    a = traffic.read_hpcc_flows(ROOT / "scenarios/peer/flow_incast32.txt")
    b = traffic.read_htsim_cm(ROOT / "scenarios/peer/incast32to1_128_2MB.cm")
    assert len(a) == len(b) == 32
    assert list(a["src"]) == list(b["src"]) and (a["dst"] == 0).all()
    assert a.attrs["start_offset_ps"] == 2 * 10**12 and (a["start_ps"] == 0).all()


@pytest.mark.parametrize(
    "text,where",
    [
        ("2\n1 0 3 100 8000 2.0\n", "line 1"),
        ("1\n1 0 3 100 x 2.0\n", "line 2"),
        ("1\n1 0 3\n", "line 2"),
    ],
)
def test_bad_hpcc_flow_file_names_file_and_line(tmp_path, text, where):
    """A malformed flow.txt raises InputError naming the file and (where possible) the line."""
    f = tmp_path / "flow.txt"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        traffic.read_hpcc_flows(f)
    assert str(f) in str(e.value) and where in str(e.value)


def test_bad_htsim_cm_names_file_and_line(tmp_path):
    """A .cm connection without a size, or a garbage line, names the file and line."""
    f = tmp_path / "x.cm"
    f.write_text("Nodes 4\nConnections 1\n0->1 id 1 start 0\n")
    with pytest.raises(InputError, match="line 3"):
        traffic.read_htsim_cm(f)
    f.write_text("Nodes 4\nhello world\n")
    with pytest.raises(InputError, match=str(f) + ".*line 2"):
        traffic.read_htsim_cm(f)


def test_qp_split_makes_independently_hashed_qps():
    """fabric.qp_split: k turns each flow into k QPs with new ids (own source ports), sizes summing
    to the original, parent_id naming the flow; the packet engine carries parent_id through."""
    from aifabric.scenario import scenario_from_dict
    from aifabric.sim import simulate
    from aifabric.topology import from_spec
    from aifabric.workload.traffic import flows_for

    sc = scenario_from_dict(
        {
            "topology": {"kind": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2},
            "fabric": {"qp_split": 4},
            "workload": {"kind": "permutation", "flow_size": "100001B"},
            "sim": {"until": "10ms"},
        }
    )
    topo = from_spec(sc.topology)
    df = flows_for(sc, topo)
    assert len(df) == 16 and df["id"].tolist() == list(range(16))
    assert df.groupby("parent_id")["size_bytes"].sum().tolist() == [100001] * 4
    res = simulate(sc, flows=df, topology=topo)
    assert res.summary["completed_flows"] == 16
    assert sorted(set(res.flows["parent_id"])) == [0, 1, 2, 3]
    assert res.flows["sport"].nunique() == 16


def test_htsim_cm_start_is_picoseconds(tmp_path):
    """csg-htsim's ConnectionMatrix::load keeps `start` as picoseconds (its old header-less format
    read µs): 'start 2500000' is 2.5 µs."""
    f = tmp_path / "x.cm"
    f.write_text("Nodes 4\nConnections 2\n0->1 id 1 start 0 size 4000\n2->3 id 2 start 2500000 size 4000\n")
    df = traffic.read_htsim_cm(f)
    assert df["start_ps"].tolist() == [0, 2_500_000]
