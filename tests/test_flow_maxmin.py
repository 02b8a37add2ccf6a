"""Max-min fairness (progressive filling): classic examples with known answers."""

import numpy as np
import pytest

from aifabric.flow.maxmin import jain_index, max_min_rates


def test_linear_network_long_flow_gets_half():
    """Linear network (Bertsekas & Gallager): one flow crosses links A, B, C (capacity 1 each),
    one short flow per link. Max-min gives every flow 1/2."""
    ef = [0, 0, 0, 1, 2, 3]
    el = [0, 1, 2, 0, 1, 2]
    r = max_min_rates(ef, el, np.ones(3), 4)
    assert r == pytest.approx([0.5, 0.5, 0.5, 0.5])


def test_two_bottlenecks_known_answer():
    """Link a (10) carries flows 0, 1; link b (4) carries flows 1, 2. b fills first at 2 each, then
    flow 0 takes the rest of a: rates (8, 2, 2)."""
    r = max_min_rates([0, 1, 1, 2], [0, 0, 1, 1], np.array([10.0, 4.0]), 3)
    assert r == pytest.approx([8.0, 2.0, 2.0])


def test_textbook_four_flow_example():
    """Capacities (1, 1, 2) — flows: 0 on {0}, 1 on {0, 1}, 2 on {1, 2}, 3 on {2}. Level 1/2 fills
    link 0 (flows 0, 1) and then link 1 gives flow 2 the other 1/2; flow 3 takes 2 − 1/2 = 1.5."""
    ef = [0, 1, 1, 2, 2, 3]
    el = [0, 0, 1, 1, 2, 2]
    r = max_min_rates(ef, el, np.array([1.0, 1.0, 2.0]), 4)
    assert r == pytest.approx([0.5, 0.5, 0.5, 1.5])


def test_weight_two_equals_two_flows():
    """An aggregate with weight 2 on a link gets the per-flow rate of two separate flows."""
    r_agg = max_min_rates([0, 1], [0, 0], np.array([3.0]), 2, entry_weight=[2.0, 1.0])
    r_sep = max_min_rates([0, 1, 2], [0, 0, 0], np.array([3.0]), 3)
    assert r_agg[0] == pytest.approx(r_sep[0]) and r_agg[1] == pytest.approx(r_sep[2])


def test_inactive_flows_get_zero_and_free_capacity():
    """Inactive flows get rate 0 and do not take a share."""
    r = max_min_rates([0, 1], [0, 0], np.array([1.0]), 2, active=np.array([True, False]))
    assert r == pytest.approx([1.0, 0.0])


def test_jain_index_extremes():
    """Jain's index is 1 for equal shares and 1/n when one flow takes everything."""
    assert jain_index(np.ones(5)) == pytest.approx(1.0)
    assert jain_index(np.array([1.0, 0, 0, 0])) == pytest.approx(0.25)
