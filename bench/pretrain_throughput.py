"""Pre-training throughput of ElectraPretrainer against the machine's matmul peak and, when installed, a PyTorch peer.

    .venv/bin/python bench/pretrain_throughput.py --preset=small --batch=32 --seq_len=128 --steps=20

Prints sequences/s, tokens/s, seconds/step, model FLOP/s (counted by electra_tf.flops), the dense matmul peak measured
by TensorFlow in the same run (float32 and bfloat16), MFU and peak memory. With `torch` and `transformers` importable
(a separate environment: `pip install torch==2.13.0 transformers`), Hugging Face's ElectraForMaskedLM +
ElectraForPreTraining do the same step (15 % masking, Gumbel sampling, loss mlm + 50 x disc, backward, AdamW) on the
same number of threads, and the ratio ours/peer is printed. The last line is one JSON object.
"""

import argparse
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--mixed_precision", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--jit_compile", action="store_true")
    parser.add_argument("--peer", default="auto", choices=["auto", "on", "off"])
    return parser.parse_args()


def random_batch(batch, seq_len, vocab_size, cls_id, sep_id, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, vocab_size, size=(batch, seq_len)).astype(np.int32)
    ids[:, 0], ids[:, -1] = cls_id, sep_id
    return {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}


def matmul_peak(dtype, size=2048, repeats=20):
    """Dense matmul FLOP/s that TensorFlow reaches on this machine for `dtype`."""
    import tensorflow as tf

    a = tf.random.normal((size, size), dtype=tf.float32)
    a = tf.cast(a, dtype)

    @tf.function
    def chain(x):
        for _ in range(repeats):
            x = tf.matmul(x, a) * tf.cast(1e-3, dtype)
        return x

    chain(a).numpy()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        chain(a).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 * repeats / best


def measure_ours(args):
    import keras
    import tensorflow as tf

    from electra_tf.config import ElectraConfig
    from electra_tf.flops import pretraining_flops
    from electra_tf.models.pretrainer import ElectraPretrainer
    from electra_tf.training.distribution import set_precision
    from electra_tf.training.optimizers import create_optimizer

    set_precision(args.mixed_precision)
    config = ElectraConfig.from_preset(args.preset)
    model = ElectraPretrainer(config, max_seq_length=args.seq_len)
    model.compile(optimizer=create_optimizer("adam_weight_decay", 1e-4), jit_compile=args.jit_compile)
    batch = random_batch(args.batch, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
    dataset = tf.data.Dataset.from_tensors(batch).repeat().prefetch(2)
    first = model.fit(dataset, steps_per_epoch=1, shuffle=False, verbose=0).history["loss"][0]
    if args.warmup_steps > 1:
        model.fit(dataset, steps_per_epoch=args.warmup_steps - 1, shuffle=False, verbose=0)
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=args.steps, shuffle=False, verbose=0)
    seconds_per_step = (time.perf_counter() - start) / args.steps
    # FLOPs with the step's real number of prediction slots rather than the reference's fixed 15.625 %.
    step_flops = pretraining_flops(config, args.seq_len, args.batch,
                                   output_fraction=model.max_predictions / args.seq_len)
    keras.mixed_precision.set_global_policy("float32")
    return {"seconds_per_step": seconds_per_step, "step_flops": step_flops, "first_step_loss": float(first)}


def measure_peer(args, threads):
    """The same step with Hugging Face transformers on PyTorch (CPU), or None when they are not installed."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    from electra_tf.config import ElectraConfig

    torch.set_num_threads(threads)
    config = ElectraConfig.from_preset(args.preset)
    generator_sizes = config.generator_config()

    def hf_config(sizes):
        return transformers.ElectraConfig(
            vocab_size=config.vocab_size, embedding_size=config.embedding_size, hidden_size=sizes.hidden_size,
            num_hidden_layers=sizes.num_layers, num_attention_heads=sizes.num_heads,
            intermediate_size=sizes.intermediate_size, max_position_embeddings=config.max_position_embeddings,
            layer_norm_eps=config.layer_norm_epsilon)

    generator = transformers.ElectraForMaskedLM(hf_config(generator_sizes))
    discriminator = transformers.ElectraForPreTraining(hf_config(config))
    generator.electra.embeddings = discriminator.electra.embeddings  # ELECTRA shares the embedding block
    generator.generator_lm_head.weight = discriminator.electra.embeddings.word_embeddings.weight
    parameters = {id(p): p for p in list(generator.parameters()) + list(discriminator.parameters())}
    optimizer = torch.optim.AdamW(parameters.values(), lr=1e-4, eps=1e-6, weight_decay=0.01)
    batch = {k: torch.from_numpy(v).long()
             for k, v in random_batch(args.batch, args.seq_len, config.vocab_size, config.cls_id,
                                      config.sep_id).items()}

    def step():
        ids = batch["input_ids"]
        chosen = (torch.rand(ids.shape) < config.mask_prob) & (ids != config.cls_id) & (ids != config.sep_id)
        masked = torch.where(chosen & (torch.rand(ids.shape) < 0.85), torch.full_like(ids, config.mask_id), ids)
        generator_out = generator(input_ids=masked, attention_mask=batch["input_mask"],
                                  token_type_ids=batch["segment_ids"], labels=torch.where(chosen, ids, -100))
        with torch.no_grad():
            logits = generator_out.logits.float()
            gumbel = -torch.log(-torch.log(torch.rand_like(logits) + 1e-9) + 1e-9)
            sampled = torch.argmax(logits + gumbel, dim=-1)
        corrupted = torch.where(chosen, sampled, ids)
        labels = (corrupted != ids).long()
        disc_out = discriminator(input_ids=corrupted, attention_mask=batch["input_mask"],
                                 token_type_ids=batch["segment_ids"], labels=labels)
        loss = generator_out.loss + 50.0 * disc_out.loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters.values(), 1.0)
        optimizer.step()

    for _ in range(args.warmup_steps):
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    return {"seconds_per_step": (time.perf_counter() - start) / args.steps}


def main():
    args = parse_args()
    import tensorflow as tf

    threads = tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()
    ours = measure_ours(args)
    peak = {"float32": matmul_peak(tf.float32), "mixed_bfloat16": matmul_peak(tf.bfloat16)}
    model_flops_per_s = ours["step_flops"] / ours["seconds_per_step"]
    result = {
        "preset": args.preset, "batch": args.batch, "seq_len": args.seq_len, "mixed_precision": args.mixed_precision,
        "jit_compile": args.jit_compile, "seconds_per_step": ours["seconds_per_step"],
        "seq_per_s": args.batch / ours["seconds_per_step"],
        "tokens_per_s": args.batch * args.seq_len / ours["seconds_per_step"],
        "model_flops_per_step": ours["step_flops"], "model_flops_per_s": model_flops_per_s,
        "matmul_peak_flops_per_s": peak[args.mixed_precision], "matmul_peak_float32": peak["float32"],
        "matmul_peak_bfloat16": peak["mixed_bfloat16"], "mfu": model_flops_per_s / peak[args.mixed_precision],
        "first_step_loss": ours["first_step_loss"], "threads": threads,
    }
    peer = measure_peer(args, threads) if args.peer != "off" else None
    if args.peer == "on" and peer is None:
        sys.exit("--peer=on but torch/transformers are not importable (pip install torch==2.13.0 transformers)")
    if peer is not None:
        result["peer_seq_per_s"] = args.batch / peer["seconds_per_step"]
        result["ratio_vs_peer"] = result["seq_per_s"] / result["peer_seq_per_s"]
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for name in ("seq_per_s", "tokens_per_s", "seconds_per_step", "model_flops_per_s", "matmul_peak_flops_per_s",
                 "mfu", "peak_rss_mb", "peer_seq_per_s", "ratio_vs_peer"):
        if name in result:
            print(f"{name:>24}: {result[name]:.4g}")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
