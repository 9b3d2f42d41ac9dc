#!/usr/bin/env python3
"""Runs real PyTorch workloads under one CUDA allocator per process and reports step times and the
device memory the process holds after each workload. docs/pytorch.md ("Workloads").

  python3 workloads.py --allocator=torch --out=torch.json
  python3 workloads.py --allocator=torch-expandable --out=torch-expandable.json
  python3 workloads.py --allocator=cudaMallocAsync --out=cudaMallocAsync.json
  python3 workloads.py --allocator=cudapool --lib=libcudapool_torch.so --variant=tls --out=tls.json
  python3 workloads.py --summary torch.json torch-expandable.json cudaMallocAsync.json tls.json [--out=all.json]
      (several runs of one allocator are its rounds, in the order given: medians over rounds)
  python3 workloads.py --allocator=cudapool --variant=tls --only-workload=lm_train --trace-dir=traces

Allocators: torch (PyTorch's caching allocator, defaults), torch-expandable (the same with
expandable_segments:True), cudaMallocAsync (PyTorch's built-in cudaMallocAsync backend), cudapool
(libcudapool_torch.so as a pluggable allocator, installed as train_compare.py installs it; --variant
sets CUDAPOOL_VARIANT). The allocator configuration is put into the environment before torch is
imported; an inherited PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF is replaced.

Workloads, run in the order given in one process, each with its own seed (the same whatever else
runs) and inputs generated on the CPU, under train_compare.py's determinism settings:
  lm_train         causal transformer LM (train_compare.py's model: 6 layers, width 512, 8 heads,
                   vocabulary 2048, batch 32 x 256 tokens), AdamW, fp32
  cnn_varbatch     ResNet-like CNN (conv/batch-norm/ReLU blocks), SGD, 64x64 images, the batch size
                   drawn each step from 16..128
  lm_infer_varseq  the LM above with fresh weights under torch.no_grad(), batch 8, a sequence length
                   drawn each step from 32..1024
  mlp_4stream      four MLPs, each inferring on its own torch.cuda.Stream from its own host thread
                   with its own tensors

Per workload: median and p90 step time (synchronize, timer, step, synchronize, timer; the first
--warmup steps left out), every step's loss or output checksum, and the device memory in use
(torch.cuda.mem_get_info: total - free, after synchronize) once the workload's tensors are gone and
gc.collect() ran, both absolute and over the baseline (measured before the first workload, with the
CUDA context and the default stream's cuBLAS handle and workspace). empty_cache() is never called:
what the allocator keeps cached is what is measured. mem_get_info counts the whole device, so
nothing else should run on the GPU meanwhile.

Traces (cudapool only): the library reads CUDAPOOL_TRACE once, when its pool is created, so one
process records one file; --trace-dir therefore takes exactly one workload (--only-workload), and
the trace goes to DIR/<workload>.csv, complete once the process has exited (the library flushes it
at exit; allocations still live then are freed by bench's replay).
"""
import argparse
import gc
import json
import os
import random
import statistics
import sys
import threading
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_compare  # noqa: E402  (sets CUBLAS_WORKSPACE_CONFIG before torch is imported)

WORKLOADS = ("lm_train", "cnn_varbatch", "lm_infer_varseq", "mlp_4stream")
# PyTorch's allocator settings per allocator (None: PyTorch's defaults, or a pluggable allocator).
ALLOC_CONF = {
    "torch": None,
    "torch-expandable": "expandable_segments:True",
    "cudaMallocAsync": "backend:cudaMallocAsync",
    "cudapool": None,
}
# PyTorch reads PYTORCH_ALLOC_CONF (2.9+) and, when that is unset, PYTORCH_CUDA_ALLOC_CONF.
ALLOC_CONF_VAR, NEWER_ALLOC_CONF_VAR = "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"
MiB = 1 << 20


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--allocator", choices=list(ALLOC_CONF), help="which CUDA allocator this process uses")
    p.add_argument("--lib", default="libcudapool_torch.so", help="path of libcudapool_torch.so (cudapool)")
    p.add_argument("--variant", help="CUDAPOOL_VARIANT for the cudapool runs (default: the library's)")
    p.add_argument("--remap-ratio", type=float, help="CUDAPOOL_REMAP_RATIO for the cudapool runs (label suffix -remap)")
    p.add_argument("--max-class-bytes", help="CUDAPOOL_MAX_CLASS_BYTES for the cudapool runs, e.g. 256k "
                   "(label suffix -class<value>)")
    p.add_argument("--stream-arenas", type=int, help="CUDAPOOL_STREAM_ARENAS for the cudapool runs: streams "
                   "that own an arena of their own (label suffix -arenas)")
    p.add_argument("--workloads", help=f"comma-separated, run in this order (default {','.join(WORKLOADS)})")
    p.add_argument("--only-workload", choices=WORKLOADS, help="run this workload alone (one process per trace)")
    p.add_argument("--steps", type=int, default=50, help="steps per workload")
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the median and p90")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--trace-dir", help="cudapool: record the workload's allocation trace as DIR/<workload>.csv")
    p.add_argument("--out", help="result JSON (a run), or the summary JSON (--summary)")
    p.add_argument("--summary", nargs="+", metavar="RUN", help="summarise result JSONs of runs")
    p.add_argument("--list", action="store_true", help="print the workload names, one a line")
    args = p.parse_args(argv)
    if args.list or args.summary:
        return args
    if args.allocator is None:
        p.error("give --allocator=" + "|".join(ALLOC_CONF) + ", or --summary RUN..., or --list")
    if args.only_workload and args.workloads:
        p.error("give --workloads or --only-workload, not both")
    if args.only_workload:
        args.workloads = [args.only_workload]
    else:
        args.workloads = [w for w in (args.workloads or ",".join(WORKLOADS)).split(",") if w]
        unknown = [w for w in args.workloads if w not in WORKLOADS]
        if unknown or not args.workloads or len(set(args.workloads)) != len(args.workloads):
            p.error(f"--workloads: a comma-separated list of distinct names from {','.join(WORKLOADS)}")
    if args.steps <= args.warmup or args.warmup < 0:
        p.error("--steps must exceed --warmup (>= 0)")
    if (args.variant is not None or args.remap_ratio is not None or args.max_class_bytes is not None
            or args.stream_arenas is not None) and args.allocator != "cudapool":
        p.error("--variant, --remap-ratio, --max-class-bytes and --stream-arenas are for --allocator=cudapool")
    if args.trace_dir is not None:
        if args.allocator != "cudapool":
            p.error("--trace-dir is for --allocator=cudapool (the library records the trace)")
        if len(args.workloads) != 1:
            p.error("--trace-dir records one file per process (CUDAPOOL_TRACE is read once): give --only-workload")
    return args


# ---- environment and measurement --------------------------------------------------------------


def trace_path(trace_dir, name):
    return os.path.abspath(os.path.join(trace_dir, f"{name}.csv"))


def configure_environment(args):
    """Everything the allocators read from the environment, set before torch is imported (PyTorch
    reads its allocator settings then) and before the first allocation (cudapool reads its own)."""
    for var in (ALLOC_CONF_VAR, NEWER_ALLOC_CONF_VAR):  # an inherited one would override ours
        os.environ.pop(var, None)
    if ALLOC_CONF[args.allocator] is not None:
        os.environ[ALLOC_CONF_VAR] = ALLOC_CONF[args.allocator]
    if args.allocator == "cudapool":
        if args.variant is not None:
            os.environ["CUDAPOOL_VARIANT"] = args.variant
        if args.remap_ratio is not None:
            os.environ["CUDAPOOL_REMAP_RATIO"] = str(args.remap_ratio)
        if args.max_class_bytes is not None:
            os.environ["CUDAPOOL_MAX_CLASS_BYTES"] = args.max_class_bytes
        if args.stream_arenas is not None:
            os.environ["CUDAPOOL_STREAM_ARENAS"] = str(args.stream_arenas)
        if args.trace_dir is not None:
            os.makedirs(args.trace_dir, exist_ok=True)
            os.environ["CUDAPOOL_TRACE"] = trace_path(args.trace_dir, args.workloads[0])


def used_bytes(torch, dev):
    """Device memory in use on the whole device (all processes): total - free, after the device
    has finished its work (cudaMallocAsync frees, for one, complete in stream order)."""
    torch.cuda.synchronize(dev)
    free, total = torch.cuda.mem_get_info(dev)
    return total - free


def torch_memory_stats(torch, dev):
    """PyTorch's own counters where the allocator keeps them (not for pluggable allocators)."""
    stats = {}
    for name in ("max_memory_reserved", "memory_reserved", "max_memory_allocated"):
        try:
            stats[name] = int(getattr(torch.cuda, name)(dev))
        except Exception as e:  # noqa: BLE001 - unsupported with a pluggable allocator
            stats[name] = None
            stats.setdefault("error", f"{type(e).__qualname__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
    return stats


def init_cublas(torch, dev):
    """Creates the default stream's cuBLAS handle and workspace (the workspace comes from the
    allocator), so that the baseline holds them."""
    try:
        torch.cuda.current_blas_handle()
    except Exception:  # noqa: BLE001 - fall back to a product that needs the handle
        a = torch.ones(8, 8, device=dev)
        (a @ a).sum().item()
        del a


def percentile(values, q):
    """The q-th percentile (0 < q < 100), interpolated between closest ranks (numpy's default)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def segment_check(torch):
    """PyTorch's caching allocator: how many segments it holds and how many are expandable (the
    proof that torch-expandable got expandable_segments)."""
    try:
        segments = torch.cuda.memory_snapshot()
    except Exception as e:  # noqa: BLE001 - e.g. the cudaMallocAsync backend keeps no segments
        return {"error": f"{type(e).__qualname__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}
    check = {"segments": len(segments)}
    if segments and all("is_expandable" in s for s in segments):
        check["expandable"] = sum(1 for s in segments if s["is_expandable"])
    return check


def run_steps(ctx, step, prepare=None):
    """Times ctx.steps calls of step(i) (prepare(i), untimed, gives its argument): synchronize,
    timer, step, synchronize, timer. step returns a scalar (tensor or number) read after the timer.
    host_ms: from the same start to step's return, before the synchronize (the host's share: where
    it is near step_ms, the step is host-bound). Also samples the device memory in use at each
    step's end."""
    torch, dev = ctx.torch, ctx.dev
    step_ms, host_ms, values, peak = [], [], [], 0
    for i in range(ctx.steps):
        arg = prepare(i) if prepare is not None else i
        torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        value = step(arg)
        t1 = time.perf_counter()
        torch.cuda.synchronize(dev)
        step_ms.append((time.perf_counter() - t0) * 1e3)
        host_ms.append((t1 - t0) * 1e3)
        values.append(float(value.item()) if hasattr(value, "item") else float(value))
        del value, arg
        peak = max(peak, used_bytes(torch, dev))
    return {"step_ms": step_ms, "host_ms": host_ms, "values": values, "peak_used_bytes": peak}


# ---- workloads -------------------------------------------------------------------------------


def lm_config(ctx, seq, batch):
    """train_compare.py's model (build_model, make_data take these fields), larger."""
    return types.SimpleNamespace(seed=ctx.seed, vocab=2048, dim=512, heads=8, layers=6, seq=seq, batch=batch)


def lm_logits(model, one_hot_tokens, mask):
    """train_compare's TinyLM.forward for any length up to the model's: the positions sliced."""
    x = one_hot_tokens @ model.tok + model.pos[: one_hot_tokens.shape[-2]]
    for block in model.blocks:
        x = block(x, mask)
    return model.head(model.ln(x))


def one_hot_loss(logits, targets, class_ids):
    """Cross entropy as a one-hot dot product with log_softmax (no scatter: deterministic)."""
    target_one_hot = (targets.unsqueeze(-1) == class_ids).float()
    return -(logits.log_softmax(dim=-1) * target_one_hot).sum(dim=-1).mean()


def lm_train(ctx):
    torch, dev = ctx.torch, ctx.dev
    cfg = lm_config(ctx, seq=256, batch=32)
    model = train_compare.build_model(cfg, torch).to(dev)  # initialised on the CPU from the seed
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    data = train_compare.make_data(cfg, torch, batches=16)
    vocab_ids = torch.arange(cfg.vocab, device=dev)
    mask = torch.triu(torch.ones(cfg.seq, cfg.seq, dtype=torch.bool, device=dev), diagonal=1)

    def step(i):
        seq = data[i % len(data)].to(dev)
        logits = model((seq[:, :-1].unsqueeze(-1) == vocab_ids).float(), mask)
        loss = one_hot_loss(logits, seq[:, 1:], vocab_ids)
        del logits
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    result = run_steps(ctx, step)
    del model, opt, data, vocab_ids, mask, step
    result["metric"] = "loss"
    result["config"] = dict(vars(cfg), optimizer="AdamW", lr=1e-3, dtype="float32")
    return result


def lm_infer_varseq(ctx):
    torch, dev = ctx.torch, ctx.dev
    cfg = lm_config(ctx, seq=1024, batch=8)  # seq: the longest; shorter ones slice the positions
    model = train_compare.build_model(cfg, torch).to(dev).eval()
    rng = random.Random(ctx.seed)
    g = torch.Generator().manual_seed(ctx.seed + 1)
    lengths = [rng.randint(32, cfg.seq) for _ in range(ctx.steps)]
    tokens = [torch.randint(cfg.vocab, (cfg.batch, t), generator=g) for t in lengths]
    vocab_ids = torch.arange(cfg.vocab, device=dev)
    mask = torch.triu(torch.ones(cfg.seq, cfg.seq, dtype=torch.bool, device=dev), diagonal=1)

    def step(i):
        with torch.no_grad():
            tok = tokens[i].to(dev)
            t = tok.shape[1]
            logits = lm_logits(model, (tok.unsqueeze(-1) == vocab_ids).float(), mask[:t, :t])
            return logits.sum()

    result = run_steps(ctx, step)
    del model, tokens, vocab_ids, mask, step
    result["metric"] = "sum of the logits"
    result["config"] = dict(vars(cfg), lengths=lengths, dtype="float32")
    return result


def cnn_varbatch(ctx):
    torch, dev = ctx.torch, ctx.dev
    nn, F = torch.nn, torch.nn.functional
    cfg = types.SimpleNamespace(image=64, channels=(32, 64, 128, 256), classes=10, dataset=512,
                                batches=(16, 32, 48, 64, 80, 96, 112, 128), lr=0.05, momentum=0.9, weight_decay=5e-4)

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = None
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
            return F.relu(y + (x if self.shortcut is None else self.shortcut(x)))

    class SmallResNet(nn.Module):
        def __init__(self):
            super().__init__()
            c0 = cfg.channels[0]
            self.stem = nn.Sequential(nn.Conv2d(3, c0, 3, 1, 1, bias=False), nn.BatchNorm2d(c0), nn.ReLU())
            blocks, cin = [], c0
            for i, c in enumerate(cfg.channels):  # downsampling by strided convolutions, no pooling kernels
                blocks += [BasicBlock(cin, c, 1 if i == 0 else 2), BasicBlock(c, c, 1)]
                cin = c
            self.blocks = nn.Sequential(*blocks)
            self.head = nn.Linear(cin, cfg.classes)

        def forward(self, x):
            # Global average pooling as a mean: AdaptiveAvgPool2d's CUDA backward is not deterministic.
            return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))

    model = SmallResNet().to(dev)  # initialised on the CPU from the seed
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    # Learnable images: a class template plus noise, generated on the CPU.
    g = torch.Generator().manual_seed(ctx.seed + 1)
    templates = torch.randn(cfg.classes, 3, cfg.image, cfg.image, generator=g)
    labels = torch.randint(cfg.classes, (cfg.dataset,), generator=g)
    images = templates[labels] + torch.randn(cfg.dataset, 3, cfg.image, cfg.image, generator=g)
    rng = random.Random(ctx.seed)
    batch_sizes = [rng.choice(cfg.batches) for _ in range(ctx.steps)]
    picks = [torch.randperm(cfg.dataset, generator=g)[:b] for b in batch_sizes]
    class_ids = torch.arange(cfg.classes, device=dev)

    def prepare(i):  # the CPU gather, outside the timer
        return images[picks[i]], labels[picks[i]]

    def step(batch):
        x, y = batch[0].to(dev), batch[1].to(dev)
        loss = one_hot_loss(model(x), y, class_ids)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    result = run_steps(ctx, step, prepare)
    del model, opt, class_ids, templates, labels, images, step, prepare
    result["metric"] = "loss"
    result["config"] = dict(vars(cfg), batch_sizes=batch_sizes, optimizer="SGD", dtype="float32")
    return result


def mlp_4stream(ctx):
    """One host thread per stream: each moves its MLP and inputs to the GPU under its stream and
    runs its inferences there, so that every tensor is allocated, used and freed on one stream. A
    step: the main thread releases the four threads, each runs iters_per_step inferences and
    synchronizes its stream, then the main thread synchronizes the device."""
    torch, dev = ctx.torch, ctx.dev
    nn = torch.nn
    cfg = types.SimpleNamespace(streams=4, dims=(1024, 4096, 4096, 1024), batches=(64, 128, 256, 512),
                                inputs_per_stream=8, iters_per_step=4)
    rng = random.Random(ctx.seed)
    g = torch.Generator().manual_seed(ctx.seed + 1)
    models, inputs = [], []
    for _ in range(cfg.streams):  # on the CPU, in a fixed order: the same weights every run
        layers = []
        for a, b in zip(cfg.dims[:-1], cfg.dims[1:]):
            layers += [nn.Linear(a, b), nn.GELU()]
        models.append(nn.Sequential(*layers[:-1]).eval())
        inputs.append([torch.randn(rng.choice(cfg.batches), cfg.dims[0], generator=g)
                       for _ in range(cfg.inputs_per_stream)])
    streams = [torch.cuda.Stream(device=dev) for _ in range(cfg.streams)]
    ready, start, done = (threading.Barrier(cfg.streams + 1) for _ in range(3))
    sums = [[] for _ in range(cfg.streams)]
    errors = []

    def worker(k):
        stream = streams[k]
        try:
            # Grad mode and the current stream are per thread.
            with torch.no_grad(), torch.cuda.stream(stream):
                model = models[k].to(dev)  # parameters allocated on this stream
                xs = [x.to(dev) for x in inputs[k]]
                stream.synchronize()
                ready.wait()
                for step in range(ctx.steps):
                    start.wait()
                    acc = None
                    for j in range(cfg.iters_per_step):
                        s = model(xs[(step * cfg.iters_per_step + j) % len(xs)]).sum()
                        acc = s if acc is None else acc + s
                    stream.synchronize()
                    sums[k].append(acc.item())
                    del s, acc
                    done.wait()
                del model, xs  # this stream's work is complete (synchronized above)
                models[k] = None
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)
            for b in (ready, start, done):
                b.abort()

    threads = [threading.Thread(target=worker, args=(k,), name=f"mlp_stream{k}") for k in range(cfg.streams)]
    for t in threads:
        t.start()

    def step(i):
        start.wait()
        done.wait()
        return sum(s[i] for s in sums)  # in stream order: deterministic

    try:
        ready.wait()
        result = run_steps(ctx, step)
    except BaseException:
        for b in (ready, start, done):  # a worker failed (its error is the one to see), or this thread
            b.abort()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        raise
    for t in threads:
        t.join()
    del models, inputs, step
    torch.cuda.synchronize(dev)
    result["metric"] = "sum of the outputs (4 streams)"
    result["config"] = dict(vars(cfg), dtype="float32", threads="one per stream")
    return result


RUNNERS = {"lm_train": lm_train, "cnn_varbatch": cnn_varbatch, "lm_infer_varseq": lm_infer_varseq,
           "mlp_4stream": mlp_4stream}


# ---- a run -----------------------------------------------------------------------------------


def run(args):
    configure_environment(args)
    import torch  # after the environment

    train_compare.install_allocator(args, torch)  # before CUDA is touched; only for cudapool
    if not torch.cuda.is_available():
        sys.exit("workloads: CUDA is not available")
    train_compare.make_deterministic(torch, args.seed)
    dev = torch.device("cuda")
    torch.cuda.init()
    context_used = used_bytes(torch, dev)
    init_cublas(torch, dev)
    gc.collect()
    baseline = used_bytes(torch, dev)
    try:
        backend = torch.cuda.get_allocator_backend()
    except Exception as e:  # noqa: BLE001
        backend = f"unknown ({type(e).__qualname__})"
    if args.allocator == "cudaMallocAsync" and backend != "cudaMallocAsync":
        sys.exit(f"workloads: asked for PyTorch's cudaMallocAsync backend, got '{backend}'")
    cudapool = args.allocator == "cudapool"
    torch_allocator = not cudapool
    variant = (os.environ.get("CUDAPOOL_VARIANT") or "lockfree (default)") if cudapool else None
    # None: the plug-in's default (docs/pytorch.md), as for the variant and the largest class.
    remap_ratio = (float(os.environ["CUDAPOOL_REMAP_RATIO"]) if os.environ.get("CUDAPOOL_REMAP_RATIO") else None) \
        if cudapool else None
    max_class = (os.environ.get("CUDAPOOL_MAX_CLASS_BYTES") or None) if cudapool else None
    arenas = int(os.environ.get("CUDAPOOL_STREAM_ARENAS") or 0) if cudapool else 0
    label = label_of({"allocator": args.allocator, "variant": variant, "remap_ratio": remap_ratio,
                      "max_class_bytes": max_class, "stream_arenas": arenas})

    results, rc = {}, 0
    for name in args.workloads:
        torch.manual_seed(args.seed + WORKLOADS.index(name))
        if torch_allocator:
            try:
                torch.cuda.reset_peak_memory_stats(dev)
            except Exception:  # noqa: BLE001 - the counters are then process-wide
                pass
        ctx = types.SimpleNamespace(torch=torch, dev=dev, steps=args.steps,
                                    seed=args.seed + 100 * WORKLOADS.index(name))
        t0 = time.perf_counter()
        r = RUNNERS[name](ctx)
        del ctx
        gc.collect()  # the workload's tensors are gone with its frame; cycles too
        used = used_bytes(torch, dev)
        timed = r["step_ms"][args.warmup:]
        values = r.pop("values")
        res = {
            "metric": r.pop("metric"),
            "first": values[0],
            "last": values[-1],
            "values": values,
            "median_step_ms": statistics.median(timed),
            "p90_step_ms": percentile(timed, 90),
            "mean_step_ms": statistics.fmean(timed),
            "step_ms": r.pop("step_ms"),
            "median_host_ms": statistics.median(r["host_ms"][args.warmup:]),
            "host_ms": r.pop("host_ms"),
            "used_bytes": used,
            "used_over_baseline_bytes": used - baseline,
            "peak_used_bytes": r["peak_used_bytes"],
            "peak_used_over_baseline_bytes": r.pop("peak_used_bytes") - baseline,
            "wall_s": time.perf_counter() - t0,
        }
        if torch_allocator:
            res["torch_stats"] = torch_memory_stats(torch, dev)
        res["config"] = r.pop("config")
        if args.trace_dir is not None:
            res["trace"] = {"file": trace_path(args.trace_dir, name)}  # complete at exit
        results[name] = res
        print(f"{label}: {name}: {args.steps} steps, {res['metric']} {res['first']:.5g} -> {res['last']:.5g}, "
              f"median {res['median_step_ms']:.3f} ms, p90 {res['p90_step_ms']:.3f} ms, "
              f"{res['used_over_baseline_bytes'] / MiB:.1f} MiB over baseline "
              f"(peak {res['peak_used_over_baseline_bytes'] / MiB:.1f})", flush=True)

    segments = segment_check(torch) if torch_allocator else None
    if args.allocator == "torch-expandable" and segments.get("segments") and segments.get("expandable") == 0:
        print(f"workloads: asked for expandable segments, but none of PyTorch's {segments['segments']} segments "
              "is expandable", file=sys.stderr)
        rc = 1
    result = {
        "allocator": args.allocator,
        "variant": variant,
        "remap_ratio": remap_ratio,
        "max_class_bytes": max_class,
        "stream_arenas": arenas,
        "lib": os.path.abspath(args.lib) if cudapool else None,
        "alloc_conf": ALLOC_CONF[args.allocator],
        "allocator_backend": backend,
        "torch_segments": segments,
        "cudapool_stats_file": os.path.abspath(os.environ["CUDAPOOL_STATS"])
        if cudapool and os.environ.get("CUDAPOOL_STATS") else None,
        "device": torch.cuda.get_device_name(dev),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "total_bytes": torch.cuda.mem_get_info(dev)[1],
        "context_used_bytes": context_used,
        "baseline_used_bytes": baseline,
        "config": {"steps": args.steps, "warmup": args.warmup, "seed": args.seed, "workloads": args.workloads},
        "workloads": results,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return rc  # a normal interpreter exit: cudapool's exit handler writes CUDAPOOL_STATS


# ---- summary ---------------------------------------------------------------------------------


def label_of(run_json):
    if run_json["allocator"] != "cudapool":
        return run_json["allocator"]
    variant = run_json.get("variant") or "default"
    remap = "-remap" if run_json.get("remap_ratio") else ""
    max_class = "-class" + run_json["max_class_bytes"] if run_json.get("max_class_bytes") else ""
    arenas = "-arenas" if run_json.get("stream_arenas") else ""
    return "cudapool-" + variant.split(" ")[0] + arenas + remap + max_class  # "lockfree (default)" -> cudapool-lockfree


def ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


# A step is device-bound where the host had launched it well before the device finished it:
# host_ms <= DEVICE_BOUND_HOST_SHARE * step_ms. Where the host sets the pace, a step's time is the
# host's launch time, and that is the process's: lm_infer_varseq's steps of <= 300 tokens took
# 5.9-10.8 ms in twelve processes of every allocator on an H100, PyTorch's own allocator 6.3 and
# 9.7 ms in two (docs/results/2026-12-06-h100-s37, call F).
DEVICE_BOUND_HOST_SHARE = 0.8


def device_bound_ratio(run, w, torch_run, tw):
    """The median over the steps (after warm-up) that are device-bound in both processes of w's step
    time over PyTorch's allocator's at the same step (the same seed: the same shapes), and how many
    steps that is. (None, 0) without host_ms (runs before it) or without such a step."""
    if not w or not tw or "host_ms" not in w or "host_ms" not in tw:
        return None, 0
    warmup = max(run.get("config", {}).get("warmup", 0), torch_run.get("config", {}).get("warmup", 0))
    n = min(len(w["step_ms"]), len(tw["step_ms"]), len(w["host_ms"]), len(tw["host_ms"]))
    steps = [i for i in range(warmup, n)
             if w["host_ms"][i] <= DEVICE_BOUND_HOST_SHARE * w["step_ms"][i]
             and tw["host_ms"][i] <= DEVICE_BOUND_HOST_SHARE * tw["step_ms"][i] and tw["step_ms"][i] > 0]
    if not steps:
        return None, 0
    return statistics.median(w["step_ms"][i] / tw["step_ms"][i] for i in steps), len(steps)


def summary(args):
    # Runs of one allocator (one label) are its rounds, in the order given: gpu-suite's TORCH_ROUNDS
    # alternates the allocators' processes round by round, so round k of each ran side by side.
    rounds = {}
    for path in args.summary:
        with open(path) as f:
            r = json.load(f)
        stats = r.get("cudapool_stats_file")
        if stats and os.path.exists(stats):
            with open(stats) as f:
                r["cudapool_stats"] = json.load(f)
        rounds.setdefault(label_of(r), []).append(r)
    runs = {label: rs[0] for label, rs in rounds.items()}  # round 1: config, device, baseline, stats
    names = [w for w in WORKLOADS if any(w in r["workloads"] for rs in rounds.values() for r in rs)]
    names += sorted({w for rs in rounds.values() for r in rs for w in r["workloads"]} - set(names))

    def of(run_json, name):
        return run_json["workloads"].get(name) if run_json is not None else None

    def nth(label, k):  # round k of label, or its last round where it ran fewer
        rs = rounds.get(label)
        return rs[min(k, len(rs) - 1)] if rs else None

    def median(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None

    rows = []
    for name in names:
        t0 = of(nth("torch", 0), name)
        for label, rs in rounds.items():
            per = [(k, of(r, name)) for k, r in enumerate(rs)]
            per = [(k, w) for k, w in per if w is not None]
            if not per:
                continue
            vs_torch = [ratio(w["median_step_ms"], (of(nth("torch", k), name) or {}).get("median_step_ms")) for k, w in per]
            bound = [device_bound_ratio(rs[k], w, nth("torch", k), of(nth("torch", k), name)) for k, w in per]
            vs_exp = [ratio(w["used_over_baseline_bytes"],
                            (of(nth("torch-expandable", k), name) or {}).get("used_over_baseline_bytes")) for k, w in per]
            # The process in all (context and cuBLAS included), as mem_get_info counts it: issue 14's
            # measure. Over the baseline, expandable segments' larger context (8 MiB on the H200)
            # counts against every other allocator.
            vs_exp_process = [ratio(w["used_bytes"], (of(nth("torch-expandable", k), name) or {}).get("used_bytes"))
                              for k, w in per]
            rows.append({
                "workload": name,
                "allocator": label,
                "rounds": len(per),
                "median_step_ms": median([w["median_step_ms"] for _, w in per]),
                "p90_step_ms": median([w["p90_step_ms"] for _, w in per]),
                # The median over rounds of the round's ratio to PyTorch's allocator of the same round.
                "median_vs_torch": median(vs_torch),
                "vs_torch_by_round": vs_torch,
                # The same on the steps both processes spent waiting for the device (host_ms): what
                # the allocator does to the device's work, without the host's level of the process.
                "device_bound_vs_torch": median([x for x, _ in bound]),
                "device_bound_vs_torch_by_round": [x for x, _ in bound],
                "device_bound_steps_by_round": [n for _, n in bound],
                "used_over_baseline_mib": median([w["used_over_baseline_bytes"] / MiB for _, w in per]),
                "used_over_baseline_mib_by_round": [w["used_over_baseline_bytes"] / MiB for _, w in per],
                "used_vs_torch_expandable": median(vs_exp),
                "used_mib": median([w["used_bytes"] / MiB for _, w in per]),
                "used_mib_by_round": [w["used_bytes"] / MiB for _, w in per],
                "process_vs_torch_expandable": median(vs_exp_process),
                "peak_used_over_baseline_mib": median([w["peak_used_over_baseline_bytes"] / MiB for _, w in per]),
                "values_match_torch": None if t0 is None else all(w["values"] == t0["values"] for _, w in per),
            })
    header = ("workload", "allocator", "median ms", "x torch", "x torch (device-bound steps)", "p90 ms", "MiB over baseline", "x torch-expandable",
              "process MiB", "x torch-expandable (process)", "peak MiB over baseline", "losses/checksums = torch")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        same = {None: "-", True: "yes", False: "NO"}[row["values_match_torch"]]
        lines.append(f"| {row['workload']} | {row['allocator']} | {row['median_step_ms']:.3f} | "
                     f"{fmt(row['median_vs_torch'], '.3f')} | {fmt(row['device_bound_vs_torch'], '.3f')} | "
                     f"{row['p90_step_ms']:.3f} | "
                     f"{row['used_over_baseline_mib']:.1f} | {fmt(row['used_vs_torch_expandable'], '.3f')} | "
                     f"{row['used_mib']:.1f} | {fmt(row['process_vs_torch_expandable'], '.3f')} | "
                     f"{row['peak_used_over_baseline_mib']:.1f} | {same} |")
    devices = sorted({r.get("device", "?") for r in runs.values()})
    baselines = ", ".join(f"{label} {r['baseline_used_bytes'] / MiB:.0f}" for label, r in runs.items())
    most = max(len(rs) for rs in rounds.values()) if rounds else 0
    notes = [f"device {', '.join(devices)}; baseline (context + cuBLAS) MiB: {baselines}",
             f"{most} round(s): figures are medians over an allocator's rounds; x torch is the median of each "
             "round's ratio to PyTorch's allocator in the same round" if most > 1 else "one round (one process per allocator)",
             "memory: mem_get_info after each workload, workloads run in order in one process, no empty_cache()"]
    table = "\n".join(lines)
    print(table)
    for n in notes:
        print(n)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"markdown": table, "notes": notes, "rows": rows, "runs": runs}, f, indent=1)
            f.write("\n")
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        print("\n".join(WORKLOADS))
        return 0
    return summary(args) if args.summary else run(args)


if __name__ == "__main__":
    sys.exit(main())
