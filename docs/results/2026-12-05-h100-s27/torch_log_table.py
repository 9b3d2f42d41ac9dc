# The workloads' figures from torch.log's lines (call c's workloads.json was never written: the
# torch part was cut at its 250 s limit in round 2). Round 1 is whole: every allocator once.
# Usage: torch_log_table.py torch.log
import re, sys
rows = {}  # (allocator, round) -> workload -> (median ms, MiB over baseline)
rnd = None
for line in open(sys.argv[1]):
    m = re.match(r'-- workloads.py --allocator=(\S+)(?: --variant=(\S+))? \(round (\d+)\)', line)
    if m:
        rnd = int(m.group(3)); continue
    m = re.match(r'(\S+): (\w+): \d+ steps, .* median ([\d.]+) ms, .* ([\d.]+) MiB over baseline', line)
    if m and rnd is not None:
        rows.setdefault((m.group(1), rnd), {})[m.group(2)] = (float(m.group(3)), float(m.group(4)))
wl = ['lm_train', 'cnn_varbatch', 'lm_infer_varseq', 'mlp_4stream']
r1 = {a: v for (a, r), v in rows.items() if r == 1}
exp, base = r1['torch-expandable'], r1['torch']
print('Round 1, MiB over the process baseline (x torch-expandable) | median step ms (x torch):\n')
print('| allocator | ' + ' | '.join(wl) + ' |'); print('|---' * (len(wl) + 1) + '|')
for a, v in r1.items():
    print(f'| {a} | ' + ' | '.join(f'{v[w][1]:,.0f} ({v[w][1] / exp[w][1]:.3f}) / {v[w][0]:.2f} ({v[w][0] / base[w][0]:.3f})' for w in wl) + ' |')
print('\nRound 2 (cut; no torch, torch-expandable or cudaMallocAsync): ' + '; '.join(
    f"{a} lm_train {v['lm_train'][0]:.2f} ms {v['lm_train'][1]:,.0f} MiB" for (a, r), v in rows.items() if r == 2))
