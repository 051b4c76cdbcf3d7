"""The peer's fine-tuning step (bench/hf_peer.py --mode=finetune and --mode=finetune_breakdown): Hugging Face's
ElectraForSequenceClassification with AdamW and the Trainer's clipping, over length-grouped batches of real examples
or timed part by part. Imported by bench/hf_peer.py (which puts bench/ on the path), in the peer's interpreter only."""

import json
import time

from bench_utils import median_window_ms
from hf_peer_models import autocast, discriminator_config, torch_batch


def classifier_and_optimizer(args):
    """ElectraForSequenceClassification at the flags' sizes, in training mode, and its AdamW."""
    import torch
    import transformers

    config = discriminator_config(args)
    config.num_labels = args.num_labels
    model = transformers.ElectraForSequenceClassification(config)
    model.train()
    return model, torch.optim.AdamW(model.parameters(), lr=args.learning_rate, eps=1e-6, weight_decay=0.01)


def classification_backward(args, model, optimizer, inputs, labels):
    """The forward pass with the classification loss (under --autocast) and its backward, into cleared gradients."""
    with autocast(args):
        loss = model(
            input_ids=inputs["input_ids"],
            attention_mask=inputs["input_mask"],
            token_type_ids=inputs["segment_ids"],
            labels=labels,
        ).loss
    optimizer.zero_grad(set_to_none=True)
    loss.float().backward()


def clipped_update(model, optimizer):
    """Clipping to global norm 1.0 (the Trainer's `max_grad_norm`) and the AdamW step."""
    import torch

    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()


def finetune(args):
    import numpy as np
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    with np.load(args.features) as archive:  # read once: an NpzFile decompresses an array at every access
        features = {name: archive[name] for name in archive.files}
    model, optimizer = classifier_and_optimizer(args)
    batch_size = args.batches[0]
    lengths = features["input_mask"].sum(axis=1)
    generator = torch.Generator().manual_seed(args.seed)
    order = list(LengthGroupedSampler(batch_size, lengths=lengths.tolist(), generator=generator))
    batches_needed = args.warmup_steps + args.steps
    if len(order) < batches_needed * batch_size:
        raise SystemExit(f"--features has {len(order)} examples; {batches_needed * batch_size} are needed")
    # Batches evenly spaced over the epoch: the sampler puts each megabatch's longest batches first, so the first
    # batches of an epoch are longer than its average.
    num_batches = len(order) // batch_size
    starts = [index * num_batches // batches_needed * batch_size for index in range(batches_needed)]
    widths = []

    def batch(step):
        rows = order[starts[step] : starts[step] + batch_size]
        width = int(lengths[rows].max())  # DataCollatorWithPadding: to the longest of the batch
        widths.append(width)
        tensors = {
            name: torch.from_numpy(features[name][rows, :width]).long()
            for name in ("input_ids", "input_mask", "segment_ids")
        }
        return tensors, torch.from_numpy(features["labels"][rows]).long()

    def step(index):
        inputs, labels = batch(index)
        classification_backward(args, model, optimizer, inputs, labels)
        clipped_update(model, optimizer)
        return len(labels)

    for index in range(args.warmup_steps):
        step(index)
    start = time.perf_counter()
    examples = sum(step(args.warmup_steps + index) for index in range(args.steps))
    seconds = time.perf_counter() - start
    return {
        "batch": batch_size,
        "mean_batch_width": float(np.mean(widths[args.warmup_steps :])),
        "examples": examples,
        "seconds": seconds,
        "examples_per_s": examples / seconds,
        "parameters": sum(p.numel() for p in model.parameters()),
    }


def finetune_breakdown(args):
    import torch

    model, optimizer = classifier_and_optimizer(args)
    inputs = torch_batch(args, args.batches[0])
    labels = torch.randint(0, args.num_labels, (args.batches[0],), generator=torch.Generator().manual_seed(args.seed))

    def forward_backward():
        classification_backward(args, model, optimizer, inputs, labels)

    def update():
        clipped_update(model, optimizer)

    def step():
        forward_backward()
        update()

    dtype = torch.bfloat16 if args.autocast == "bfloat16" else torch.float32
    operands = [
        (torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)) for m, k, n in json.loads(args.gemm_shapes)
    ]

    def dense_gemms():
        for a, b in operands:
            torch.matmul(a, b)

    def median_ms(function):
        return median_window_ms(function, args.windows, args.steps, args.warmup_steps)

    with torch.inference_mode():
        dense_gemm_ms = median_ms(dense_gemms) if operands else None
    result = {
        "batch": args.batches[0],
        "forward_backward_ms": median_ms(forward_backward),
        "optimizer_ms": median_ms(update),
        "step_ms": median_ms(step),
        "dense_gemm_ms": dense_gemm_ms,
    }
    if args.profile_calls:
        result["profile"] = {}
        for part, function in (("forward_backward", forward_backward), ("optimizer", update)):
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
                for _ in range(args.profile_calls):
                    function()
            result["profile"][part] = {
                entry.key: {
                    "self_cpu_ms": entry.self_cpu_time_total / 1e3 / args.profile_calls,
                    "count": entry.count / args.profile_calls,
                }
                for entry in profiler.key_averages()
            }
    return result
