"""aifabric verify-build: the cabled fabric against the plan (issue 29). Mutations of the plan's
expected ibnetdiscover / LLDP and of a real NDR fabric's dump (NVIDIA topograph fixture) are each
found, with their cost to rail-local traffic; a clean fabric reports nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ibnet_mutations as mut
from aifabric.build.expected import placeholder_guid
from aifabric.build.verify import verify_build
from aifabric.cli import run

REAL = Path(__file__).parent / "fixtures/real/nvidia-topograph/ibnetdiscover-ndr-example.out.txt"
LONE_CA = Path(__file__).parent / "fixtures/real/nvidia-topograph/ibnetdiscover-isolated-ca.out.txt"


def sid(name: str) -> str:
    return "S-" + placeholder_guid(name)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """A 1,024-GPU IB and RoCE build folder."""
    out = tmp_path_factory.mktemp("vb") / "b"
    assert run(["plan", "--gpus", "1024", "--json", "--build", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def ib_text(build):
    return next(build.glob("infiniband-*/expected.ibnetdiscover")).read_text()


def _check(build, tmp_path, text, cost=False, name="found.txt"):
    p = tmp_path / name
    p.write_text(text)
    return verify_build(build, p, "ibnetdiscover", cost=cost)


def test_clean_fabric_matches(build, capsys):
    """The plan's own expected ibnetdiscover verifies with exit 0 and no differences."""
    f = next(build.glob("infiniband-*/expected.ibnetdiscover"))
    assert run(["verify-build", str(build), "--ibnetdiscover", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["differences"] == []


def test_swap_across_rails_found_and_costed(build, tmp_path, ib_text):
    """Two servers' rail-0 and rail-1 cables exchanged at the leaves: one 'swapped' difference,
    exit 1, and the swap moves rail traffic above the leaf (flow model)."""
    text = mut.swap(ib_text, (sid("leaf-su01-r0"), 1), (sid("leaf-su01-r1"), 2))
    r = _check(build, tmp_path, text, cost=True)
    (d,) = r["differences"]
    assert d["kind"] == "swapped" and {d["a"], d["b"]} == {"node001:mlx5_0/1", "node002:mlx5_1/1"}
    assert "swap" in d["fix"] and d["rail_traffic_moved"] > 0
    assert r["summary"]["rail_traffic"]["all_differences"]["rail_traffic_moved"] == d["rail_traffic_moved"]


def test_dropped_link_found(build, tmp_path, ib_text):
    """A missing uplink is one 'missing' difference naming both ends and the part to install."""
    r = _check(build, tmp_path, mut.drop(ib_text, (sid("spine-01"), 1)))
    (d,) = r["differences"]
    assert d["kind"] == "missing" and d["b"] == "spine-01:1" and "fiber-mmf-mpo" in d["fix"]


def test_speed_downgrade_found_and_slows_the_ring(build, tmp_path, ib_text):
    """A host link up at HDR instead of NDR: 'wrong-speed'; the ring step takes twice as long."""
    r = _check(build, tmp_path, mut.retag(ib_text, (sid("leaf-su01-r0"), 4), "4xNDR", "4xHDR"), cost=True)
    (d,) = r["differences"]
    assert (d["kind"], d["expected"], d["found"]) == ("wrong-speed", "4xNDR", "4xHDR")
    assert d["rail_step_slowdown"] == pytest.approx(2.0, rel=0.01)


def test_width_downgrade_found(build, tmp_path, ib_text):
    """A link up on 2 of 4 lanes is 'wrong-width'."""
    r = _check(build, tmp_path, mut.retag(ib_text, (sid("spine-02"), 3), "4xNDR", "2xNDR"))
    assert [d["kind"] for d in r["differences"]] == ["wrong-width"]


def test_cable_on_wrong_port_found(build, tmp_path, ib_text):
    """A host cable moved to an unused port of another rail's leaf: 'wrong-port' naming the
    planned port, the leaf it landed on and the plan's rail."""
    lines = ib_text.split("\n")
    ix = mut.index(lines)
    i, _ = ix[(sid("leaf-su01-r0"), 5)]
    host_line = lines[i]
    text = mut.drop(ib_text, (sid("leaf-su01-r0"), 5))
    leaf1 = sid("leaf-su01-r1")
    blk = text.index(f'Switch\t64 "{leaf1}"')
    end = text.index("\n\n", blk)
    text = text[:end] + "\n" + host_line.replace("[5]", "[60]", 1) + text[end:]
    r = _check(build, tmp_path, text)
    (d,) = r["differences"]
    assert d["kind"] == "wrong-port" and d["b"] == "leaf-su01-r0:5"
    assert "leaf-su01-r1" in d["found"] and "rail 0" in d["found"]


def test_silent_switch_is_no_answer(build, tmp_path, ib_text):
    """A switch absent from the dump is one 'no-answer' difference, not one per link."""
    r = _check(build, tmp_path, mut.silence(ib_text, sid("spine-03")))
    assert [(d["kind"], d["a"]) for d in r["differences"]] == [("no-answer", "spine-03")]


def test_plan_json_as_plan(build, tmp_path, capsys, ib_text):
    """PLAN may be a plan --json file (re-planned): the expected fabric verifies clean."""
    assert (
        run(["plan", "--gpus", "1024", "--technology", "ib", "--json", "--build", str(tmp_path / "b")]) == 0
    )
    pj = tmp_path / "plan.json"
    pj.write_text(capsys.readouterr().out)
    found = tmp_path / "f.txt"
    found.write_text(ib_text)
    assert verify_build(pj, found, "ibnetdiscover", cost=False)["differences"] == []


def test_real_dump_verifies_against_itself():
    """The real NDR fabric (40 switches, 582 CAs) against a plan derived from it: no differences."""
    r = verify_build(REAL, REAL, "ibnetdiscover", cost=False)
    assert r["match"] and r["summary"]["planned_links"] == r["summary"]["found_links"] > 1000


@pytest.mark.parametrize(
    "mutate, kind",
    [
        (lambda t: mut.swap(t, ("S-2c5eab0300b87b40", 1), ("S-2c5eab0300b87bc0", 1)), "swapped"),
        (lambda t: mut.drop(t, ("S-2c5eab0300b87b40", 35)), "missing"),
        (lambda t: mut.retag(t, ("S-2c5eab0300b87b40", 2), "4xNDR", "4xHDR"), "wrong-speed"),
    ],
    ids=["swap", "drop", "downgrade"],
)
def test_real_dump_mutations_found(tmp_path, mutate, kind):
    """Each mutation of the real dump is found as exactly one difference of its kind."""
    p = tmp_path / "m.txt"
    p.write_text(mutate(REAL.read_text()))
    r = verify_build(REAL, p, "ibnetdiscover", cost=False)
    assert [d["kind"] for d in r["differences"]] == [kind]


def test_real_swap_between_leaves_costed(tmp_path):
    """On the real fabric, two hosts' cables exchanged between two leaves move rail traffic
    above the leaf (> 0) and cut nothing off."""
    p = tmp_path / "m.txt"
    p.write_text(mut.swap(REAL.read_text(), ("S-2c5eab0300b87b40", 1), ("S-2c5eab0300b87bc0", 1)))
    (d,) = verify_build(REAL, p, "ibnetdiscover")["differences"]
    assert d["rail_traffic_moved"] > 0 and d["rail_traffic_unroutable"] == 0


def test_isolated_ca_answers_nothing():
    """The real lone-CA dump against the real fabric: every planned device is 'no-answer'."""
    r = verify_build(REAL, LONE_CA, "ibnetdiscover", cost=False)
    kinds = {d["kind"] for d in r["differences"]}
    assert kinds == {"no-answer"} and len(r["differences"]) >= 40


def test_mapping_file_renames_hosts(build, tmp_path, ib_text):
    """Hostnames that differ from the plan's verify clean through a plan,found mapping file."""
    text = ib_text.replace('"node001 mlx5_', '"gpu-a01 mlx5_')
    m = tmp_path / "map.csv"
    m.write_text("plan,found\nnode001,gpu-a01\n")
    f = tmp_path / "f.txt"
    f.write_text(text)
    assert verify_build(build, f, "ibnetdiscover", m, cost=False)["match"]
    assert not verify_build(build, f, "ibnetdiscover", cost=False)["match"]


def test_lldp_clean_and_swapped(build, tmp_path):
    """LLDP: the expected neighbours verify clean; two leaf ports' neighbours exchanged on both
    ends are one 'swapped' difference."""
    src = next(build.glob("roce-*/expected-lldp.json"))
    assert verify_build(build, src, "lldp", cost=False)["match"]
    doc = json.loads(src.read_text())
    ifs = doc["leaf-su01-r0"]["lldp"]["interface"]
    (p0, n0), (p1, n1) = next(iter(ifs[0].items())), next(iter(ifs[1].items()))
    assert list(n0["chassis"]) == ["node001"] and list(n1["chassis"]) == ["node002"]
    ifs[0], ifs[1] = {p0: n1}, {p1: n0}
    for host, port, new in (("node001", "mlx5_0", p1), ("node002", "mlx5_0", p0)):
        for entry in doc[host]["lldp"]["interface"]:
            if port in entry:
                entry[port]["port"]["id"]["value"] = new
    f = tmp_path / "l.json"
    f.write_text(json.dumps(doc))
    r = verify_build(build, f, "lldp", cost=False)
    assert [d["kind"] for d in r["differences"]] == ["swapped"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--ibnetdiscover", "nope.txt"], "nope.txt"),
        ([], "--ibnetdiscover/--lldp"),
        (["--lldp", "BAD"], "JSON"),
    ],
    ids=["missing-file", "no-source", "bad-json"],
)
def test_bad_input_is_one_line_exit_2(build, tmp_path, capsys, args, needle):
    """Bad input: exit 2 and one error line naming the file or option."""
    if "BAD" in args:
        bad = tmp_path / "bad.json"
        bad.write_text("{not json")
        args = ["--lldp", str(bad)]
    assert run(["verify-build", str(build), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
