"""Per test module, how much the pytest process grew, from an ``AIFABRIC_TEST_RSS`` file
(tests/conftest.py): ``python scripts/rss_by_module.py FILE [N]`` prints the N modules (default 15)
whose tests raised the process's resident memory (VmRSS) and its peak (VmHWM) the most, in MiB."""

import sys


def by_module(lines):
    """{module: [VmRSS growth, VmHWM growth, VmRSS after, tests]} in kB, in run order."""
    out: dict[str, list[int]] = {}
    prev_rss = prev_hwm = None
    for line in lines:
        nodeid, rss, hwm = line.rsplit(maxsplit=2)
        rss, hwm = int(rss), int(hwm)
        mod = nodeid.split("::", 1)[0]
        row = out.setdefault(mod, [0, 0, 0, 0])
        if prev_rss is not None:
            row[0] += rss - prev_rss
            row[1] += hwm - prev_hwm
        row[2], row[3] = rss, row[3] + 1
        prev_rss, prev_hwm = rss, hwm
    return out


def main(argv):
    path, n = argv[0], int(argv[1]) if len(argv) > 1 else 15
    with open(path) as f:
        rows = by_module(f)
    peak = max((r[2] for r in rows.values()), default=0)
    print(f"{'module':45} {'+RSS':>8} {'+peak':>8} {'RSS after':>10} tests   (MiB; final peak below)")
    for mod, (d_rss, d_hwm, rss, tests) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:n]:
        print(f"{mod:45} {d_rss / 1024:8.0f} {d_hwm / 1024:8.0f} {rss / 1024:10.0f} {tests:5d}")
    with open(path) as f:
        last = f.readlines()[-1].rsplit(maxsplit=2)
    print(f"final VmRSS {int(last[1]) / 1024:.0f} MiB, VmHWM {int(last[2]) / 1024:.0f} MiB (max RSS seen {peak / 1024:.0f})")


if __name__ == "__main__":
    main(sys.argv[1:])
