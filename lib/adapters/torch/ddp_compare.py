#!/usr/bin/env python3
"""Data-parallel training of workloads.py's transformer LM (lm_config: 6 layers, width 512, 8 heads)
on two GPUs: torchrun, NCCL, one process per GPU, DistributedDataParallel, once with PyTorch's
caching allocator and once with libcudapool_torch.so, then the two runs compared: the losses of every
rank must be identical (the allocator decides only where tensors live), and the step time and device
memory per rank are reported beside each other.

  torchrun --standalone --nproc_per_node=2 ddp_compare.py --allocator=torch --out=ddp_torch.json
  torchrun --standalone --nproc_per_node=2 ddp_compare.py --allocator=cudapool \\
      --lib=libcudapool_torch.so --out=ddp_cudapool.json
  python3 ddp_compare.py --compare ddp_torch.json ddp_cudapool.json --out=ddp.json

Memory per rank: the peak of (total - free) from torch.cuda.mem_get_info (cudaMemGetInfo), sampled
after every step, which counts every allocator (and NCCL's buffers) alike, and the same before the
first step (the baseline: context, NCCL, the model). The compare mode exits 1 when the losses differ.

NVLink multicast stays off: NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and
NVSHMEM_DISABLE_NVLS=1 are set here before torch is imported (and are expected in the environment of
torchrun too, .ci/gpu-suite multi).
"""
import argparse
import json
import os
import statistics
import sys
import time

for _name, _value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_name] = _value
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_compare  # noqa: E402  (build_model, make_data, install_allocator, make_deterministic)
import workloads  # noqa: E402  (lm_config, one_hot_loss)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    train_compare.add_run_arguments(p, steps=100, warmup=10)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=16, help="sequences per rank and step")
    p.add_argument("--out", help="result JSON (written by rank 0), or the combined JSON (--compare)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two result JSONs")
    args = p.parse_args(argv)
    train_compare.check_run_arguments(p, args)
    return args


def used_bytes(torch, dev):
    free, total = torch.cuda.mem_get_info(dev)
    return total - free


def train(args):
    import torch  # after the environment above
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    train_compare.install_allocator(args, torch)  # before anything touches CUDA
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    train_compare.make_deterministic(torch, args.seed)

    cfg = workloads.lm_config(argparse.Namespace(seed=args.seed), seq=args.seq, batch=args.batch)
    model = train_compare.build_model(cfg, torch).to(dev)  # initialised on the CPU: equal on every rank
    ddp = DistributedDataParallel(model, device_ids=[local_rank])
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3, weight_decay=0.01)
    data = train_compare.make_data(cfg, torch, batches=8 * world)  # rank r takes batches r, r + world, ...
    vocab_ids = torch.arange(cfg.vocab, device=dev)
    mask = torch.triu(torch.ones(cfg.seq, cfg.seq, dtype=torch.bool, device=dev), diagonal=1)

    torch.cuda.synchronize(dev)
    dist.barrier()
    baseline = used_bytes(torch, dev)
    peak = baseline
    losses, step_ms = [], []
    for i in range(args.steps):
        start = time.perf_counter()
        seq = data[(i * world + rank) % len(data)].to(dev)
        logits = ddp((seq[:, :-1].unsqueeze(-1) == vocab_ids).float(), mask)
        loss = workloads.one_hot_loss(logits, seq[:, 1:], vocab_ids)
        del logits
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP all-reduces the gradients (NCCL)
        opt.step()
        losses.append(loss.item())  # synchronizes the step
        step_ms.append((time.perf_counter() - start) * 1e3)
        peak = max(peak, used_bytes(torch, dev))

    rank_result = {
        "rank": rank,
        "device": local_rank,
        "gpu": torch.cuda.get_device_name(dev),
        "losses": losses,
        "step_ms_median": statistics.median(step_ms[args.warmup:]),
        "step_ms": step_ms,
        "baseline_used_bytes": baseline,
        "peak_used_bytes": peak,
        "peak_over_baseline_bytes": peak - baseline,
    }
    gathered = [None] * world
    dist.all_gather_object(gathered, rank_result)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        result = {
            "allocator": args.allocator,
            "lib": os.path.abspath(args.lib) if args.allocator == "cudapool" else None,
            "world_size": world,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "model": dict(vars(cfg), optimizer="AdamW", lr=1e-3, dtype="float32", parallel="DistributedDataParallel"),
            "steps": args.steps,
            "warmup": args.warmup,
            "ranks": gathered,
        }
        text = json.dumps(result, indent=1)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text + "\n")
        for r in gathered:
            print(f"ddp {args.allocator} rank {r['rank']} (cuda:{r['device']}): final loss {r['losses'][-1]:.6f}, "
                  f"median step {r['step_ms_median']:.2f} ms, peak used {r['peak_used_bytes'] / 2**20:.0f} MiB "
                  f"({r['peak_over_baseline_bytes'] / 2**20:.0f} MiB over the baseline)")
    return 0


def compare(args):
    with open(args.compare[0]) as f:
        a = json.load(f)
    with open(args.compare[1]) as f:
        b = json.load(f)
    same = len(a["ranks"]) == len(b["ranks"])
    per_rank = []
    for ra, rb in zip(a["ranks"], b["ranks"]):
        equal = ra["losses"] == rb["losses"]
        same = same and equal
        diff = max((abs(x - y) for x, y in zip(ra["losses"], rb["losses"])), default=0.0)
        per_rank.append({
            "rank": ra["rank"],
            "losses_equal": equal,
            "max_loss_difference": diff,
            a["allocator"]: {k: ra[k] for k in ("step_ms_median", "baseline_used_bytes", "peak_used_bytes", "peak_over_baseline_bytes")},
            b["allocator"]: {k: rb[k] for k in ("step_ms_median", "baseline_used_bytes", "peak_used_bytes", "peak_over_baseline_bytes")},
            "step_time_ratio": rb["step_ms_median"] / ra["step_ms_median"],
            "peak_over_baseline_ratio": (rb["peak_over_baseline_bytes"] / ra["peak_over_baseline_bytes"]
                                         if ra["peak_over_baseline_bytes"] else None),
        })
        print(f"rank {ra['rank']}: losses {'identical' if equal else f'DIFFER (max {diff:g})'}; median step "
              f"{ra['step_ms_median']:.2f} ms ({a['allocator']}) vs {rb['step_ms_median']:.2f} ms ({b['allocator']}); "
              f"peak over baseline {ra['peak_over_baseline_bytes'] / 2**20:.0f} vs "
              f"{rb['peak_over_baseline_bytes'] / 2**20:.0f} MiB")
    combined = {"same_losses": same, "per_rank": per_rank, "runs": [a, b]}
    if args.out:
        with open(args.out, "w") as f:
            f.write(json.dumps(combined, indent=1) + "\n")
    print("ddp: PASS (same losses on every rank)" if same else "ddp: FAIL (the losses differ)")
    return 0 if same else 1


def main(argv=None):
    args = parse_args(argv)
    return compare(args) if args.compare else train(args)


if __name__ == "__main__":
    sys.exit(main())
