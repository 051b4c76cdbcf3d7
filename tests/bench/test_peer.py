"""The peer of the benchmarks (bench/hf_peer.py, bench/peer_runner.py) without its interpreter: its flags, and the
sizes it is given."""

import sys

import pytest

from tests.bench.bench_runs import load_bench_module


def test_hf_peer_flags_from_json_and_command_line():
    hf_peer = load_bench_module("hf_peer")  # only the standard library at import: torch is imported by its functions
    assert "torch" not in sys.modules
    args = hf_peer.parse_args(["--mode=infer", "--batch=1,32", '--json={"hidden_size": 128, "batch": "4"}'])
    assert args.hidden_size == 128 and args.batches == [1, 32]  # the command line wins over --json
    with pytest.raises(SystemExit):
        hf_peer.parse_args(['--json={"hidden_sise": 128}'])
    with pytest.raises(SystemExit):
        hf_peer.parse_args(["--mode=train", "--batch=1,2"])


def test_peer_sizes_give_the_generator_the_sizing_rule_of_the_config():
    """The peer builds its generator from these flags: they must be the generator our pre-training model builds."""
    from electra_tf.config import ElectraConfig

    peer_runner = load_bench_module("peer_runner")
    config = ElectraConfig.from_preset("small")
    generator = config.generator_architecture()
    sizes = peer_runner.peer_sizes(config)
    assert (
        sizes["generator_hidden_size"],
        sizes["generator_num_layers"],
        sizes["generator_num_heads"],
        sizes["generator_intermediate_size"],
    ) == (generator.hidden_size, generator.num_layers, generator.num_heads, generator.intermediate_size)
    assert sizes["hidden_size"] == config.hidden_size and generator.hidden_size == config.hidden_size // 4
