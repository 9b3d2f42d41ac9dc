#!/usr/bin/python3
"""s44's offline placement models (no size classes or slabs, immediate frees, 256 B granules),
beside s42's fit_policies.py:
  - two arenas by request size with 2 MiB page rounding of their sum, the wilderness (the free
    piece at the top) a best-fit candidate (W) or only for what fits no hole (H, as the heap and
    bench/fit_floor.hpp do);
  - the streams of a multi-stream trace: peak live bytes of each stream alone, their sum over the
    trace's peak, the frees made on another stream than the allocation's, and best fit with one
    arena per stream (memory never moves between streams) against one shared arena.
    /usr/bin/python3 docs/results/2026-12-07-s44/placement_models.py TRACE.csv ..."""
import bisect
import sys


def load(path):
    ops = []
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.strip().split(",")
        ops.append((f[0], int(f[1]), (int(f[2]) + 255) // 256 * 256 if f[0] == "a" else 0, f[3] if len(f) > 3 else "0"))
    return ops


def live_peak(ops, passes=2):
    live, peak, sizes = 0, 0, {}
    for _ in range(passes):
        for op, ident, size, _s in ops:
            if op == "a":
                sizes[ident] = size
                live += size
                peak = max(peak, live)
            elif ident in sizes:
                live -= sizes.pop(ident)
        live -= sum(sizes.values())
        sizes.clear()
    return peak


def footprint(ops, wild_candidate=True, passes=2, page=2 << 20):
    """Peak top of one best-fit arena (lowest address among equal pieces), rounded up to `page`."""
    free, where, top, peak = [], {}, 0, 0

    def take(size):
        nonlocal top
        best = None
        for i, (s, n) in enumerate(free):
            if not wild_candidate and s + n == top:
                continue
            if n >= size and (best is None or n < free[best][1]):
                best = i
        if best is None:
            if free and free[-1][0] + free[-1][1] == top:
                start, n = free.pop()
                top += size - n
                return start
            top += size
            return top - size
        start, n = free[best]
        if n == size:
            free.pop(best)
        else:
            free[best] = (start + size, n - size)
        return start

    def give(start, size):
        i = bisect.bisect(free, (start, 0))
        if i < len(free) and free[i][0] == start + size:
            size += free.pop(i)[1]
        if i > 0 and free[i - 1][0] + free[i - 1][1] == start:
            start, n = free.pop(i - 1)
            size += n
            i -= 1
        free.insert(i, (start, size))

    for _ in range(passes):
        for op, ident, size, _s in ops:
            if op == "a":
                where[ident] = (take(size), size)
                peak = max(peak, top)
            elif ident in where:
                give(*where.pop(ident))
        for ident in list(where):
            give(*where.pop(ident))
    return (peak + page - 1) // page * page if page else peak


def main():
    for path in sys.argv[1:]:
        ops = load(path)
        live = live_peak(ops)
        size_of = {o[1]: o[2] for o in ops if o[0] == "a"}
        row = []
        for wc in (True, False):
            tag = "W" if wc else "H"
            row.append(f"best{tag} {footprint(ops, wc) / live:.4f}")
            for t, name in ((64 << 10, "64K"), ((512 << 10) + 1, "512K+"), (1 << 20, "1M"), ((1 << 20) + 1, "1M+")):
                small = [o for o in ops if size_of.get(o[1], 0) < t]
                large = [o for o in ops if size_of.get(o[1], 0) >= t]
                both = footprint(small, wc, page=0) + footprint(large, wc, page=0)
                row.append(f"two{tag}:{name} {((both + (2 << 20) - 1) // (2 << 20) * (2 << 20)) / live:.4f}")
        print(path.rsplit("/", 1)[-1], "(footprint / live peak)", " ".join(row))
        stream_of = {o[1]: o[3] for o in ops if o[0] == "a"}
        streams = sorted(set(stream_of.values()))
        if len(streams) < 2:
            continue
        per, peak_per, cross = {}, {}, 0
        for op, ident, size, s in ops:
            if op == "a":
                per[s] = per.get(s, 0) + size
                peak_per[s] = max(peak_per.get(s, 0), per[s])
            elif ident in stream_of:
                home = stream_of[ident]
                per[home] -= size_of[ident]
                cross += s != home
        arenas = sum(footprint([o for o in ops if stream_of.get(o[1]) == s], False) for s in streams)
        print(f"  {len(streams)} streams: sum of their live peaks / live peak {sum(peak_per.values()) / live:.4f};"
              f" frees on another stream {cross}; best fit, one arena per stream {arenas / live:.4f},"
              f" one shared arena {footprint(ops, False) / live:.4f}")


if __name__ == "__main__":
    main()
