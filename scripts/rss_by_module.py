"""Where the pytest process's memory goes, from an ``AIFABRIC_TEST_RSS`` file (tests/conftest.py):
``python scripts/rss_by_module.py FILE [N]`` prints the N test modules (default 12) whose tests grew
the process's resident memory (VmRSS) the most, and the N tests that raised its peak (VmHWM), in MiB."""

import sys


def rows(path):
    """(nodeid, VmRSS kB, VmHWM kB) per line, in run order (the first line: the session's start)."""
    with open(path) as f:
        for line in f:
            nodeid, rss, hwm = line.rsplit(maxsplit=2)
            yield nodeid, int(rss), int(hwm)


def main(argv):
    path, n = argv[0], int(argv[1]) if len(argv) > 1 else 12
    mods: dict[str, list[int]] = {}  # module -> [VmRSS growth, VmHWM growth, VmRSS after, tests]
    peaks = []  # (VmHWM growth, nodeid, VmHWM after)
    prev = None
    for nodeid, rss, hwm in rows(path):
        mod = nodeid.split("::", 1)[0]
        if prev is not None:
            row = mods.setdefault(mod, [0, 0, 0, 0])
            row[0] += rss - prev[0]
            row[1] += hwm - prev[1]
            row[2], row[3] = rss, row[3] + 1
            peaks.append((hwm - prev[1], nodeid, hwm))
        prev = (rss, hwm)
    mib = 1024
    print(f"{'module':44} {'+RSS':>7} {'+peak':>7} {'RSS after':>9} tests")
    for mod, (d_rss, d_hwm, rss, tests) in sorted(mods.items(), key=lambda kv: -kv[1][0])[:n]:
        print(f"{mod:44} {d_rss / mib:7.0f} {d_hwm / mib:7.0f} {rss / mib:9.0f} {tests:5d}")
    print("\ntests that raised the peak (VmHWM), MiB:")
    for d_hwm, nodeid, hwm in sorted(peaks, reverse=True)[:n]:
        if d_hwm > 0:
            print(f"  +{d_hwm / mib:6.0f} to {hwm / mib:6.0f}  {nodeid}")
    most = max((r[2] for r in mods.values()), default=0)
    print(f"\nafter the last test: VmRSS {prev[0] / mib:.0f} MiB, peak VmHWM {prev[1] / mib:.0f} MiB")
    print(f"largest VmRSS after a module: {most / mib:.0f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
