"""Units are parsed once: sizes → bytes, rates → bit/s, times → ps."""

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.units import UnitError, parse_length_m, parse_rate, parse_size, parse_time, serialisation_ps


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4000B", 4000),
        ("100KB", 100_000),
        ("2MB", 2_000_000),
        ("1GB", 10**9),
        ("1KiB", 1024),
        ("32MiB", 32 * 2**20),
        ("1GiB", 2**30),
        ("1.5KB", 1500),
        (4096, 4096),
    ],
)
def test_sizes_decimal_and_binary(text, expected):
    """KB/MB/GB are powers of 1000 and KiB/MiB/GiB powers of 1024, as interface.md says."""
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("400Gbps", 400 * 10**9),
        ("100Gb/s", 100 * 10**9),
        ("25Mbps", 25 * 10**6),
        ("1.6Tbps", 1600 * 10**9),
    ],
)
def test_rates(text, expected):
    """Rates parse to bit/s."""
    assert parse_rate(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1us", 10**6),
        ("1.5us", 1_500_000),
        ("0.001ms", 10**6),
        ("130ns", 130_000),
        ("2s", 2 * 10**12),
        ("7ps", 7),
    ],
)
def test_times(text, expected):
    """Times parse to integer picoseconds."""
    assert parse_time(text) == expected


@pytest.mark.parametrize("bad", ["4 parsecs", "Gbps", "", "1e", True, None, [1]])
def test_bad_values_raise_unit_error_with_allowed(bad):
    """Unreadable values raise UnitError naming what is allowed."""
    with pytest.raises(UnitError) as exc:
        parse_size(bad)
    assert "KiB" in exc.value.allowed


def test_rate_requires_unit():
    """A bare number is not a rate: users must say bps/Gbps."""
    with pytest.raises(UnitError):
        parse_rate(400)


def test_length():
    """Cable lengths in m or km."""
    assert parse_length_m("5m") == 5.0
    assert parse_length_m("2km") == 2000.0


def test_serialisation_exact_at_800g():
    """One 4064 B packet at 800 Gb/s takes exactly 40.64 ns = 40640 ps."""
    assert serialisation_ps(4064, 800 * 10**9) == 40_640
    assert serialisation_ps(4064, 100 * 10**9) == 325_120


@given(st.integers(min_value=0, max_value=10**15))
def test_size_roundtrip_bytes(n):
    """Any integer byte count written with B parses back to itself."""
    assert parse_size(f"{n}B") == n


@given(st.text(max_size=20))
def test_fuzz_never_crashes(text):
    """Arbitrary text either parses or raises UnitError — nothing else."""
    for fn in (parse_size, parse_rate, parse_time):
        with contextlib.suppress(UnitError):
            fn(text)
