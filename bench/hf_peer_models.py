"""The peer's models and inputs at the benchmark's sizes (bench/hf_peer.py's flags): Hugging Face ELECTRA configs,
torch's autocast for --autocast, and a random batch as torch tensors. Imported by bench/hf_peer.py (which puts bench/
on the path), in the peer's interpreter only."""

from bench_utils import random_batch


def hf_config(args, hidden, layers, heads, intermediate):
    import transformers

    return transformers.ElectraConfig(
        vocab_size=args.vocab_size,
        embedding_size=args.embedding_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=args.max_position_embeddings,
        type_vocab_size=args.type_vocab_size,
        layer_norm_eps=args.layer_norm_epsilon,
        hidden_dropout_prob=args.hidden_dropout,
        attention_probs_dropout_prob=args.attention_dropout,
    )


def discriminator_config(args):
    return hf_config(args, args.hidden_size, args.num_layers, args.num_heads, args.intermediate_size)


def autocast(args):
    import contextlib

    import torch

    if args.autocast == "bfloat16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def torch_batch(args, batch):
    import torch

    return {
        name: torch.from_numpy(value).long()
        for name, value in random_batch(
            batch, args.seq_len, args.vocab_size, args.cls_id, args.sep_id, args.seed
        ).items()
    }
