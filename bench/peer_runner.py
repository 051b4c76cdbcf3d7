"""Finding and running the PyTorch peer (`bench/hf_peer.py`) in its own interpreter, from the TensorFlow benchmarks.

Only the standard library: the peer's packages (torch, transformers) are never imported into TensorFlow's process.
The interpreter is `--peer_python`, by default `$ELECTRA_PEER_PYTHON`, else `<repo>/.venv-peer/bin/python` if it
exists.
"""

import json
import os
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
HF_PEER = os.path.join(BENCH_DIR, "hf_peer.py")
SETUP_HINT = (
    "python3.11 -m venv .venv-peer && .venv-peer/bin/pip install torch==2.13.0 transformers numpy "
    "(or point --peer_python / ELECTRA_PEER_PYTHON at an interpreter that has them)"
)


def default_peer_python():
    """$ELECTRA_PEER_PYTHON, else <repo>/.venv-peer/bin/python when it exists, else None."""
    if os.environ.get("ELECTRA_PEER_PYTHON"):
        return os.environ["ELECTRA_PEER_PYTHON"]
    candidate = os.path.join(REPO_ROOT, ".venv-peer", "bin", "python")
    return candidate if os.path.exists(candidate) else None


def add_peer_flags(parser):
    parser.add_argument(
        "--peer",
        default="auto",
        choices=["auto", "on", "off"],
        help="auto: run the Hugging Face peer when --peer_python can import torch and transformers; "
        "on: fail when it cannot; off: never.",
    )
    parser.add_argument(
        "--peer_python",
        default=default_peer_python(),
        help="Interpreter of the peer environment (default: $ELECTRA_PEER_PYTHON, else "
        "<repo>/.venv-peer/bin/python if it exists).",
    )
    parser.add_argument("--peer_timeout", type=float, default=3600, help="Seconds before the peer is given up.")


def _peer_env():
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def check_peer(peer_python):
    """(True, versions) when `peer_python` runs and imports torch and transformers, else (False, reason)."""
    if not peer_python:
        return False, "no peer interpreter (.venv-peer/bin/python absent, ELECTRA_PEER_PYTHON and --peer_python unset)"
    if not os.path.exists(peer_python):
        return False, f"peer interpreter {peer_python} does not exist"
    probe = "import torch, transformers, numpy; print(torch.__version__, transformers.__version__)"
    try:
        result = subprocess.run(
            [peer_python, "-c", probe], capture_output=True, text=True, timeout=300, env=_peer_env()
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"{peer_python} cannot be run: {error}"
    if result.returncode:
        last = (result.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"{peer_python} cannot import torch and transformers ({last})"
    return True, result.stdout.strip()


def resolve_peer(args):
    """Whether to run the peer for `args.peer` / `args.peer_python`; exits with one line for --peer=on without one."""
    if args.peer == "off":
        return False
    ok, message = check_peer(args.peer_python)
    if ok:
        return True
    if args.peer == "on":
        sys.exit(f"--peer=on but {message}; create the peer environment with: {SETUP_HINT}")
    print(f"peer skipped: {message}", file=sys.stderr)
    return False


def peer_sizes(config):
    """hf_peer.py's size flags for an `ElectraConfig` (generator sizes from its `generator_architecture()`)."""
    generator = config.generator_architecture()
    return {
        "vocab_size": config.vocab_size,
        "embedding_size": config.embedding_size,
        "hidden_size": config.hidden_size,
        "num_layers": config.num_layers,
        "num_heads": config.num_heads,
        "intermediate_size": config.intermediate_size,
        "generator_hidden_size": generator.hidden_size,
        "generator_num_layers": generator.num_layers,
        "generator_num_heads": generator.num_heads,
        "generator_intermediate_size": generator.intermediate_size,
        "max_position_embeddings": config.max_position_embeddings,
        "type_vocab_size": config.type_vocab_size,
        "layer_norm_epsilon": config.layer_norm_epsilon,
        "hidden_dropout": config.hidden_dropout,
        "attention_dropout": config.attention_dropout,
        "mask_prob": config.mask_prob,
        "mask_token_fraction": config.mask_token_fraction,
        "disc_weight": config.disc_weight,
        "temperature": config.temperature,
        "cls_id": config.cls_id,
        "sep_id": config.sep_id,
        "mask_id": config.mask_id,
    }


def run_peer(peer_python, settings, timeout=3600):
    """Run hf_peer.py with `settings` (its flags as a dict) in `peer_python`; its JSON line as a dict.

    Raises RuntimeError with the peer's last stderr lines when it fails.
    """
    command = [peer_python, HF_PEER, "--json=" + json.dumps(settings)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_peer_env())
    lines = result.stdout.strip().splitlines()
    if result.returncode or not lines:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"the peer failed (exit {result.returncode}): {tail}")
    return json.loads(lines[-1])
