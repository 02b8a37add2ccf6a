"""PFC deadlock check: cycles in the buffer dependency graph from the routes."""

from __future__ import annotations

import pytest

from aifabric.audit import audit_files
from aifabric.audit.deadlock import dependency_graph, find_cycles
from aifabric.errors import InputError
from aifabric.topology import fat_tree, ring

G = 10**9
# Two ToR–agg failures in different pods: each forces a down-up bounce; together they close a loop
FAT_TREE_FAILURES = ["tor0-agg0", "tor2-agg3"]


def test_ring_shortest_path_has_a_cycle():
    """4 switches in a ring with shortest-path ECMP: 2-hop paths both ways → a cycle per direction
    naming the ingress buffers in order."""
    cycles, _ = find_cycles(ring(4, 1, 100 * G, 10**6), "ecmp")
    assert len(cycles) == 2
    assert set(cycles[0].switches) == {"sw0", "sw1", "sw2", "sw3"}
    assert "sw1<-sw0" in cycles[1].buffers


def test_ring_of_three_has_no_cycle():
    """3 switches: every shortest path crosses one inter-switch link, so nothing waits in a loop."""
    assert find_cycles(ring(3, 1, 100 * G, 10**6), "ecmp")[0] == []


def test_fat_tree_up_down_and_ecmp_are_deadlock_free():
    """A healthy k=4 fat-tree: no cycle with up-down or with shortest-path ECMP (they coincide)."""
    t = fat_tree(4, 100 * G, 10**6)
    assert find_cycles(t, "up-down")[0] == []
    assert find_cycles(t, "ecmp")[0] == []


def test_fat_tree_failure_bounce_creates_cycle():
    """After failing tor0-agg0 and tor2-agg3, shortest paths bounce down-up (agg→tor→agg) and the
    dependency graph has a cycle through both pods; up-down routing on the same failures has none."""
    t = fat_tree(4, 100 * G, 10**6)
    cycles, failed = find_cycles(t, "ecmp", FAT_TREE_FAILURES)
    assert failed.num_links == t.num_links - 2
    assert cycles, "expected a cycle"
    tors = {s for c in cycles for s in c.switches if s.startswith("tor")}
    assert tors & {"tor1", "tor3"}  # the bounce ToRs of the two pods
    assert find_cycles(t, "up-down", FAT_TREE_FAILURES)[0] == []


def test_single_failure_bounce_alone_is_acyclic():
    """One failure adds bounce paths but no loop of dependencies in a k=4 fat-tree."""
    assert find_cycles(fat_tree(4, 100 * G, 10**6), "ecmp", ["tor0-agg0"])[0] == []


def test_dependency_graph_nodes_are_switch_ingress_priority():
    """Nodes are (switch, ingress link, priority); hosts never appear as buffers."""
    t = ring(4, 1, 100 * G, 10**6)
    g = dependency_graph(t, "ecmp", priority=4)
    assert g.number_of_nodes() > 0
    assert all(t.node_tier[v] > 0 and p == 4 for v, _link, p in g.nodes)


def test_unknown_failed_link_is_input_error():
    """Failing a link that does not exist → InputError naming --fail-link."""
    with pytest.raises(InputError, match="--fail-link"):
        find_cycles(fat_tree(4, 100 * G, 10**6), "ecmp", ["tor0-core3"])


def test_audit_files_reports_cycle_as_error_finding():
    """audit_files with a ring topology spec → pfc-deadlock-cycle error and deadlock: true."""
    r = audit_files([], topology="ring:4")
    assert r.deadlock["deadlock"] is True and r.exit_code() == 1
    assert {f.rule for f in r.findings} == {"pfc-deadlock-cycle"}
    r2 = audit_files([], topology="fat-tree:4", routing="up-down", failed_link=FAT_TREE_FAILURES)
    assert r2.deadlock["deadlock"] is False and r2.exit_code() == 0
