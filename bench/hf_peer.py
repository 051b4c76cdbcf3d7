"""The Hugging Face / PyTorch peer of the benchmarks, run in its own interpreter (never imported into TensorFlow's).

    .venv-peer/bin/python bench/hf_peer.py --mode=train --batch=32 --seq_len=128 --steps=20 --threads=2
    .venv-peer/bin/python bench/hf_peer.py --mode=infer --batch=1,32 --seq_len=128 --steps=50 --threads=2
    .venv-peer/bin/python bench/hf_peer.py --json='{"mode": "train", "hidden_size": 256, ...}'

Imports only torch, transformers, numpy and the standard library, so it runs in a separate environment
(`python3.11 -m venv .venv-peer && .venv-peer/bin/pip install torch==2.13.0 transformers numpy`);
`bench/pretrain_throughput.py` and `bench/inference_latency.py` start it with the sizes of the preset they measure.
The defaults are ELECTRA-Small (discriminator 256 wide, generator 64) with the BERT uncased vocabulary.

--mode=train: one ELECTRA pre-training step with Hugging Face's ElectraForMaskedLM (generator) and
ElectraForPreTraining (discriminator) sharing the embedding block, the generator's output layer tied to the word
embedding table: 15 % of the non-special positions chosen, 85 % of those replaced by [MASK] (the rest keep their
token), generator tokens drawn at the chosen positions by Gumbel-max sampling in float32 without gradient, loss
mlm + disc_weight x disc, backward, global-norm clipping to 1.0, AdamW. `--steps` steps are timed after
`--warmup_steps` untimed ones (the first is the reported first_step_loss). Hugging Face's ElectraForMaskedLM computes
its vocabulary logits at every position (`--mlm_positions=all`, the default: the library as people use it); ours
computes them only at the prediction slots, which `--mlm_positions=masked` imitates with the same modules.

--mode=infer: ElectraForPreTraining forward (logits and sigmoid) under torch.inference_mode, for each batch size of
`--batch` (comma-separated) at `--seq_len`; `--steps` timed calls per batch size after `--warmup_steps`.

--mode=finetune: a fine-tuning epoch's steps of ElectraForSequenceClassification as the Trainer runs them with
`group_by_length=True` and its default collator's dynamic padding: `--features` (an .npz of `input_ids`,
`input_mask`, `segment_ids` [n, max_seq_length] and `labels`, written by `bench/finetune_throughput.py` from real
GLUE text) ordered by transformers' `LengthGroupedSampler`, each batch padded to its longest member, forward with the
classification loss, backward, clipping to 1.0 (the Trainer's `max_grad_norm`), AdamW; `--warmup_steps` then
`--steps` timed batches, evenly spaced over the epoch (the sampler puts the longest batches of each megabatch first),
examples per second and their mean width reported.

--mode=finetune_breakdown: `bench/finetune_step_breakdown.py`'s parts on the peer's side: the fine-tuning step above
on `--batch` random examples `--seq_len` wide, timed as `forward_backward_ms` (classification loss and backward),
`optimizer_ms` (clipping and AdamW on the last gradients), `step_ms` (both) and `dense_gemm_ms` (the matmuls of
`--gemm_shapes`, a JSON list of [m, k, n], in one call): the median over `--windows` windows of `--steps` calls after
`--warmup_steps`. With `--profile_calls=N`, torch's profiler then records N calls of each of the first two parts
and the JSON line's `profile` gives each op's self time per call (`self_cpu_ms`, on the calling thread, the intra-op
threads' work included) and calls per call.

--autocast=bfloat16 runs the forward passes under torch.autocast("cpu", dtype=torch.bfloat16) (the counterpart of
Keras' mixed_bfloat16 policy); the backward pass runs outside autocast as PyTorch recommends.

The fine-tuning modes are in `hf_peer_finetune.py`, the models and inputs all modes share in `hf_peer_models.py`.

`torch.set_num_threads(--threads)`. Prints one JSON line: the timings, the first step's loss (train), torch's own
dense matmul peak on this machine (after the timing; float32, or bfloat16 under autocast), the versions and this
process's peak RSS (VmHWM, see peak_rss_mb).
"""

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_utils import latency_stats, peak_rss_mb
from hf_peer_finetune import finetune, finetune_breakdown
from hf_peer_models import autocast, discriminator_config, hf_config, torch_batch

SIZE_FLAGS = {  # name: (type, default: ELECTRA-Small with the BERT uncased vocabulary)
    "vocab_size": (int, 30522),
    "embedding_size": (int, 128),
    "hidden_size": (int, 256),
    "num_layers": (int, 12),
    "num_heads": (int, 4),
    "intermediate_size": (int, 1024),
    "generator_hidden_size": (int, 64),
    "generator_num_layers": (int, 12),
    "generator_num_heads": (int, 1),
    "generator_intermediate_size": (int, 256),
    "max_position_embeddings": (int, 512),
    "type_vocab_size": (int, 2),
    "layer_norm_epsilon": (float, 1e-12),
    "hidden_dropout": (float, 0.1),
    "attention_dropout": (float, 0.1),
    "mask_prob": (float, 0.15),
    "mask_token_fraction": (float, 0.85),
    "disc_weight": (float, 50.0),
    "temperature": (float, 1.0),
    "cls_id": (int, 101),
    "sep_id": (int, 102),
    "mask_id": (int, 103),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--json",
        default=None,
        help="One JSON object of any of these flags (flags given on the command line as well take precedence).",
    )
    parser.add_argument("--mode", default="train", choices=["train", "infer", "finetune", "finetune_breakdown"])
    parser.add_argument("--features", default=None, help="--mode=finetune: the .npz of encoded examples.")
    parser.add_argument("--num_labels", type=int, default=2, help="--mode=finetune: classes of the task.")
    parser.add_argument("--batch", default="32", help="Batch size (infer: comma-separated batch sizes).")
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20, help="Timed steps (infer: timed calls per batch size).")
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--windows", type=int, default=3, help="--mode=finetune_breakdown: timing windows.")
    parser.add_argument("--gemm_shapes", default="[]", help="--mode=finetune_breakdown: JSON list of [m, k, n].")
    parser.add_argument("--profile_calls", type=int, default=0, help="--mode=finetune_breakdown: calls profiled.")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's own).")
    parser.add_argument("--autocast", default="none", choices=["none", "bfloat16"])
    parser.add_argument(
        "--mlm_positions",
        default="all",
        choices=["all", "masked"],
        help="all: ElectraForMaskedLM's own forward (vocabulary logits at every position, as the "
        "library computes them); masked: its encoder, then its prediction head and tied output "
        "layer at the chosen positions only (the work our generator does).",
    )
    parser.add_argument(
        "--matmul_peak_size",
        type=int,
        default=2048,
        help="After the timing, measure torch's dense matmul FLOP/s at this size (0: skip), in "
        "float32, or bfloat16 under --autocast=bfloat16.",
    )
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    for name, (kind, default) in SIZE_FLAGS.items():
        parser.add_argument(f"--{name}", type=kind, default=default)
    args = parser.parse_args(argv)
    if args.json:
        given = {
            token.split("=")[0].lstrip("-")
            for token in (argv if argv is not None else sys.argv[1:])
            if token.startswith("--")
        }
        values = json.loads(args.json)
        unknown = sorted(set(values) - set(vars(args)))
        if unknown:
            parser.error(f"unknown keys in --json: {unknown}")
        for name, value in values.items():
            if name not in given:
                setattr(args, name, value)
    args.batches = [int(b) for b in str(args.batch).split(",")]
    if args.mode in ("train", "finetune", "finetune_breakdown") and len(args.batches) != 1:
        parser.error(f"--mode={args.mode} takes one --batch")
    if args.mode == "finetune" and not args.features:
        parser.error("--mode=finetune needs --features")
    return args


def train(args):
    import torch
    import transformers

    generator = transformers.ElectraForMaskedLM(
        hf_config(
            args,
            args.generator_hidden_size,
            args.generator_num_layers,
            args.generator_num_heads,
            args.generator_intermediate_size,
        )
    )
    discriminator = transformers.ElectraForPreTraining(discriminator_config(args))
    generator.electra.embeddings = discriminator.electra.embeddings  # ELECTRA shares the embedding block
    generator.generator_lm_head.weight = discriminator.electra.embeddings.word_embeddings.weight  # tied output table
    generator.train()
    discriminator.train()
    parameters = list({id(p): p for p in list(generator.parameters()) + list(discriminator.parameters())}.values())
    optimizer = torch.optim.AdamW(parameters, lr=args.learning_rate, eps=1e-6, weight_decay=0.01)
    batch = torch_batch(args, args.batches[0])
    ids, mask, segments = batch["input_ids"], batch["input_mask"], batch["segment_ids"]

    def step():
        chosen = (torch.rand(ids.shape) < args.mask_prob) & (ids != args.cls_id) & (ids != args.sep_id)
        chosen &= mask.bool()
        masked = torch.where(
            chosen & (torch.rand(ids.shape) < args.mask_token_fraction), torch.full_like(ids, args.mask_id), ids
        )
        with autocast(args):
            if args.mlm_positions == "all":
                generator_out = generator(
                    input_ids=masked,
                    attention_mask=mask,
                    token_type_ids=segments,
                    labels=torch.where(chosen, ids, -100),
                )
                mlm_loss, chosen_logits = generator_out.loss, generator_out.logits[chosen]
            else:
                hidden = generator.electra(
                    input_ids=masked, attention_mask=mask, token_type_ids=segments
                ).last_hidden_state[chosen]
                chosen_logits = generator.generator_lm_head(generator.generator_predictions(hidden))
                mlm_loss = torch.nn.functional.cross_entropy(chosen_logits.float(), ids[chosen])
        with torch.no_grad():  # Gumbel-max sampling in float32, only at the chosen positions
            logits = chosen_logits.float() / args.temperature
            uniform = torch.rand_like(logits)
            gumbel = -torch.log(-torch.log(uniform + 1e-9) + 1e-9)
            corrupted = ids.clone()
            corrupted[chosen] = torch.argmax(logits + gumbel, dim=-1)
        labels = (corrupted != ids).long()
        with autocast(args):
            disc_out = discriminator(input_ids=corrupted, attention_mask=mask, token_type_ids=segments, labels=labels)
        loss = mlm_loss.float() + args.disc_weight * disc_out.loss.float()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()
        return float(loss.detach())

    first_step_loss = step()
    for _ in range(max(0, args.warmup_steps - 1)):
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds_per_step = (time.perf_counter() - start) / args.steps
    batch_size = args.batches[0]
    return {
        "batch": batch_size,
        "seconds_per_step": seconds_per_step,
        "seq_per_s": batch_size / seconds_per_step,
        "tokens_per_s": batch_size * args.seq_len / seconds_per_step,
        "first_step_loss": first_step_loss,
        "expected_first_step_loss": math.log(args.vocab_size) + args.disc_weight * math.log(2.0),
        "parameters": sum(p.numel() for p in parameters),
    }


def infer(args):
    import torch
    import transformers

    model = transformers.ElectraForPreTraining(discriminator_config(args))
    model.eval()
    results = []
    for batch_size in args.batches:
        batch = torch_batch(args, batch_size)

        def call():
            with torch.inference_mode(), autocast(args):
                logits = model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["input_mask"],
                    token_type_ids=batch["segment_ids"],
                ).logits.float()
                return logits.numpy(), torch.sigmoid(logits).numpy()

        for _ in range(args.warmup_steps):
            call()
        latencies = []
        for _ in range(args.steps):
            start = time.perf_counter()
            call()
            latencies.append(time.perf_counter() - start)
        results.append(latency_stats(latencies, batch_size))
    return {"per_batch": results}


def matmul_peak(size, dtype, repeats=10):
    """Dense matmul FLOP/s torch reaches here for `dtype` (best of 3 after a warm-up), like the TF side's peak."""
    import torch

    a = (torch.randn(size, size) / math.sqrt(size)).to(dtype)  # keeps the chain's magnitude (no denormals)
    a @ a
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        x = a
        for _ in range(repeats):
            x = x @ a
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 * repeats / best


def main(argv=None):
    args = parse_args(argv)
    import numpy
    import torch
    import transformers

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    modes = {"train": train, "infer": infer, "finetune": finetune, "finetune_breakdown": finetune_breakdown}
    result = modes[args.mode](args)
    if args.matmul_peak_size:
        dtype = torch.bfloat16 if args.autocast == "bfloat16" else torch.float32
        result["matmul_peak_flops_per_s"] = matmul_peak(args.matmul_peak_size, dtype)
    result.update(
        mode=args.mode,
        seq_len=args.seq_len,
        threads=torch.get_num_threads(),
        autocast=args.autocast,
        steps=args.steps,
        warmup_steps=args.warmup_steps,
        versions={"torch": torch.__version__, "transformers": transformers.__version__, "numpy": numpy.__version__},
        peak_rss_mb=peak_rss_mb(),
    )
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
