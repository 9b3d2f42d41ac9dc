#!/usr/bin/python3
"""Is transformer_lm_train's best-fit floor (floor_over_live 1.1006, bench/fit_floor.hpp) the floor of
every placement that never moves a block? A model of three offline-free placements over the traces,
replayed twice with immediate frees, in 256 B granules, no size classes or slabs, no page rounding:
  best   the smallest free piece that holds the request (lowest address among equal ones);
  first  the lowest-addressed free piece that holds it;
  two:T  two arenas, requests below T bytes and the others, each best fit with its own top; the
         footprint is the sum of both peaks (a bound: one reservation with slabs at one end and
         large extents at the other can do no better).
Prints the peak footprint over the peak live bytes per trace and placement.
    /usr/bin/python3 docs/results/2026-12-07-s42/fit_policies.py TRACE.csv ..."""
import bisect
import sys


def load(path):
    ops = []
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.strip().split(",")
        ops.append((f[0], int(f[1]), (int(f[2]) + 255) // 256 * 256 if f[0] == "a" else 0))
    return ops


def footprint(ops, first_fit=False, passes=2):
    """Peak top of the address space under best (or first) fit; free pieces sorted by address."""
    free, where, top, peak = [], {}, 0, 0

    def take(size):
        nonlocal top
        best = None
        for i, (_, length) in enumerate(free):
            if length >= size and (best is None or length < free[best][1]):
                best = i
                if first_fit:
                    break
        if best is None:  # the top: extends a free piece that ends there
            if free and free[-1][0] + free[-1][1] == top:
                start, length = free.pop()
                top += size - length
                return start
            top += size
            return top - size
        start, length = free[best]
        if length == size:
            free.pop(best)
        else:
            free[best] = (start + size, length - size)
        return start

    def give(start, size):
        i = bisect.bisect(free, (start, 0))
        if i < len(free) and free[i][0] == start + size:
            size += free.pop(i)[1]
        if i > 0 and free[i - 1][0] + free[i - 1][1] == start:
            start, length = free.pop(i - 1)
            size += length
            i -= 1
        free.insert(i, (start, size))

    for _ in range(passes):
        for op, ident, size in ops:
            if op == "a":
                where[ident] = (take(size), size)
                peak = max(peak, top)
            elif ident in where:
                give(*where.pop(ident))
        for ident in list(where):
            give(*where.pop(ident))
    return peak


def live_peak(ops, passes=2):
    live, peak, sizes = 0, 0, {}
    for _ in range(passes):
        for op, ident, size in ops:
            if op == "a":
                sizes[ident] = size
                live += size
                peak = max(peak, live)
            elif ident in sizes:
                live -= sizes.pop(ident)
        live -= sum(sizes.values())
        sizes.clear()
    return peak


def main():
    for path in sys.argv[1:]:
        ops = load(path)
        live = live_peak(ops)
        size_of = {i: s for op, i, s in ops if op == "a"}
        row = {"best": footprint(ops) / live, "first": footprint(ops, first_fit=True) / live}
        for t in (64 << 10, 1 << 20, 2 << 20):
            small = [o for o in ops if size_of.get(o[1], 0) < t]
            large = [o for o in ops if size_of.get(o[1], 0) >= t]
            row[f"two:{t >> 10}K"] = (footprint(small) + footprint(large)) / live
        print(path.rsplit("/", 1)[-1], " ".join(f"{k} {v:.4f}" for k, v in row.items()))


if __name__ == "__main__":
    main()
