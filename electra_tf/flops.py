"""Training and inference FLOPs of ELECTRA configurations, counted as the reference's `flops_computation.py` counts.

The accounting (which is what makes the paper's compute figures, e.g. 1.4e18 for ELECTRA-Small, reproducible):
a multiply-add is 2 FLOPs; the backward pass costs as much as the forward pass; embedding lookups are dense
multiplications by one-hot vectors (2 x E x V per token); element-wise costs per activation are fixed constants below;
the generator's output softmax is computed for a fixed fraction 0.15625 (= 20/128) of the positions.
"""

import dataclasses

from electra_tf.config import ElectraConfig

DROPOUT_FLOPS = 4  # random number, compare, mask, rescale
LAYER_NORM_FLOPS = 5  # mean, variance (square + sum), scale, shift
ACTIVATION_FLOPS = 8  # GELU's tanh form
SOFTMAX_FLOPS = 5  # max-subtract, exp, sum, divide
REFERENCE_OUTPUT_FRACTION = 0.15625


@dataclasses.dataclass(frozen=True)
class TransformerShape:
    """The sizes the FLOP count depends on, for one network (generator or discriminator)."""

    hidden: int
    layers: int
    seq_len: int = 512
    vocab: int = 30522
    embedding: int = None  # defaults to hidden
    intermediate: int = None  # defaults to 4 x hidden
    heads: int = None  # defaults to max(1, hidden // 64)
    output_fraction: float = REFERENCE_OUTPUT_FRACTION

    def __post_init__(self):
        defaults = {"embedding": self.hidden, "intermediate": 4 * self.hidden, "heads": max(1, self.hidden // 64)}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)


def block_flops(shape):
    """Forward FLOPs of one Transformer layer over one sequence."""
    h, s, i, heads = shape.hidden, shape.seq_len, shape.intermediate, shape.heads
    per_token = (
        3 * 2 * h * h
        + 3 * h  # query, key, value projections and biases
        + 2 * h * s  # attention scores
        + (SOFTMAX_FLOPS + DROPOUT_FLOPS + 1) * s * heads  # softmax, attention dropout, 1/sqrt(d) scaling
        + 2 * h * s  # weighted sum of the values
        + 2 * h * h
        + h
        + DROPOUT_FLOPS * h
        + h  # attention output projection, bias, dropout, residual
        + LAYER_NORM_FLOPS  # the reference counts this LayerNorm as 5 FLOPs, not 5 x h; kept for its totals
        + 2 * h * i
        + ACTIVATION_FLOPS * i
        + i  # intermediate dense, GELU, bias
        + 2 * h * i
        + h
        + DROPOUT_FLOPS * h
        + h
        + LAYER_NORM_FLOPS * h  # output dense, bias, dropout, residual, LN
    )
    return per_token * s


def input_embedding_flops(shape):
    """Forward FLOPs of the embeddings (dense lookups, sums, LayerNorm, dropout, projection to hidden) per sequence."""
    e, h, s = shape.embedding, shape.hidden, shape.seq_len
    per_token = 2 * e * shape.vocab + 2 * e * (s + 2) + 2 * e + LAYER_NORM_FLOPS * e + DROPOUT_FLOPS * e
    if e != h:
        per_token += 2 * h * e + h
    return per_token * s


def masked_lm_output_flops(shape):
    """Forward FLOPs of the generator's MLM head (dense, GELU, LayerNorm, tied softmax) at the predicted positions."""
    e, h, v = shape.embedding, shape.hidden, shape.vocab
    per_token = 2 * e * v + 2 * h * e + e + ACTIVATION_FLOPS * e + LAYER_NORM_FLOPS * e + SOFTMAX_FLOPS * v + 2 * v
    return shape.output_fraction * per_token * shape.seq_len


def discriminator_head_flops(shape):
    """Forward FLOPs of the replaced-token head (dense H, GELU, one logit) over one sequence."""
    h = shape.hidden
    return (2 * h * h + h + ACTIVATION_FLOPS * h + 2 * h) * shape.seq_len


def network_training_flops(shape, batch_size, train_steps, discriminator):
    """FLOPs of training one network: forward + backward (x 2) over batch_size x train_steps sequences."""
    head = discriminator_head_flops(shape) if discriminator else masked_lm_output_flops(shape)
    forward = shape.layers * block_flops(shape) + input_embedding_flops(shape) + head
    return 2 * batch_size * train_steps * forward


def network_shapes(config, seq_len, output_fraction=REFERENCE_OUTPUT_FRACTION):
    """(discriminator, generator) `TransformerShape`s of an `ElectraConfig` (the generator shares the embeddings)."""
    generator = config.generator_architecture()

    def shape(sizes):
        return TransformerShape(
            hidden=sizes.hidden_size,
            layers=sizes.num_layers,
            seq_len=seq_len,
            vocab=config.vocab_size,
            embedding=config.embedding_size,
            intermediate=sizes.intermediate_size,
            heads=sizes.num_heads,
            output_fraction=output_fraction,
        )

    return shape(config), shape(generator)


def pretraining_flops(config, seq_len, batch_size, train_steps=1, output_fraction=REFERENCE_OUTPUT_FRACTION):
    """Total FLOPs of ELECTRA pre-training: the discriminator plus the generator, forward and backward."""
    discriminator, generator = network_shapes(config, seq_len, output_fraction)
    return network_training_flops(discriminator, batch_size, train_steps, discriminator=True) + network_training_flops(
        generator, batch_size, train_steps, discriminator=False
    )


def mlm_pretraining_flops(config, seq_len, batch_size, train_steps=1, output_fraction=REFERENCE_OUTPUT_FRACTION):
    """FLOPs of BERT-style masked-LM pre-training of the discriminator-sized network alone (the paper's baseline)."""
    discriminator, _ = network_shapes(config, seq_len, output_fraction)
    return network_training_flops(discriminator, batch_size, train_steps, discriminator=False)


FLOPS_OBJECTIVES = ("electra", "mlm", "electra_15", "replace_mlm", "all_tokens_mlm", "electric")


def two_tower_generator_training_flops(shape, batch_size, train_steps):
    """FLOPs of training Electric's two-tower cloze generator: two towers of `shape` (each with its embedding lookup,
    causal attention counted as full attention, as masking saves no multiply in the reference), and the cloze head at
    every position, its dense layer reading both towers' states (2 x hidden)."""
    tower = shape.layers * block_flops(shape) + input_embedding_flops(shape)
    head = masked_lm_output_flops(dataclasses.replace(shape, hidden=2 * shape.hidden, output_fraction=1.0))
    return 2 * batch_size * train_steps * (2 * tower + head)


def objective_pretraining_flops(config, seq_len, batch_size, train_steps=1, output_fraction=REFERENCE_OUTPUT_FRACTION):
    """Training FLOPs of `train_steps` steps of `config.objective` (the paper's Table 5 and section 3.2 variants),
    with the reference's accounting (forward + backward = 2 x forward, see the module docstring).

    What is counted per step, over `batch_size` sequences of `seq_len`:

    - the generator (`config.generator_architecture()`: the discriminator's sizes with `tie_all_weights` or two-stage
      training): embeddings, encoder and MLM head at `output_fraction` of the positions, forward and backward; nothing
      when the objective has no generator (`mlm`) or with `uniform_generator` (uniform samples cost no network);
      `electric`: the two-tower cloze generator (`two_tower_generator_training_flops`);
    - the discriminator-sized network: embeddings and encoder, and its head(s):
      `electra`, `electra_15`, `electric`: the replaced-token head on every position (ELECTRA 15 % computes it
      everywhere and takes the loss at the masked positions only, so it costs the same as `electra`);
      `mlm`: an MLM head at `output_fraction` of the positions (= `mlm_pretraining_flops`);
      `replace_mlm`: an MLM head at `output_fraction` of the positions;
      `all_tokens_mlm`: an MLM head at every position (output fraction 1) plus the 1-unit copy head on every
      position, counted as the replaced-token head (dense H, GELU, one logit).
    - `two_stage_steps` n > 0: the first n steps train the generator alone (generator forward + backward); the later
      ones train the discriminator against the frozen generator (discriminator forward + backward, generator forward
      only). This is the algorithm's cost; the implementation also runs the idle network's passes.

    Not modelled (cost as `electra`): untied embeddings and gradient-disentangled sharing (lookup costs do not depend
    on which table is read), adversarial generator training (the Gumbel-softmax relaxation's extra [N, V] x [V, E]
    product is left out).
    """
    objective = config.objective
    if objective not in FLOPS_OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; choose one of {list(FLOPS_OBJECTIVES)}")
    if objective == "mlm":
        return mlm_pretraining_flops(config, seq_len, batch_size, train_steps, output_fraction)
    discriminator, generator = network_shapes(config, seq_len, output_fraction)

    def model_flops(steps):
        if objective in ("electra", "electra_15", "electric"):
            return network_training_flops(discriminator, batch_size, steps, discriminator=True)
        if objective == "replace_mlm":
            return network_training_flops(discriminator, batch_size, steps, discriminator=False)
        every_position = dataclasses.replace(discriminator, output_fraction=1.0)  # all_tokens_mlm
        return network_training_flops(
            every_position, batch_size, steps, discriminator=False
        ) + 2 * batch_size * steps * discriminator_head_flops(every_position)

    def generator_flops(steps):
        if not config.has_generator_network:
            return 0.0
        if objective == "electric":
            return two_tower_generator_training_flops(generator, batch_size, steps)
        return network_training_flops(generator, batch_size, steps, discriminator=False)

    two_stage_steps = min(config.two_stage_steps, train_steps)
    if two_stage_steps:
        second_stage = train_steps - two_stage_steps
        return generator_flops(two_stage_steps) + model_flops(second_stage) + generator_flops(second_stage) / 2
    return model_flops(train_steps) + generator_flops(train_steps)


def inference_flops(config, seq_len):
    """Forward FLOPs of the discriminator scoring one sequence (encoder plus a per-token classification head)."""
    discriminator, _ = network_shapes(config, seq_len)
    return (
        discriminator.layers * block_flops(discriminator)
        + input_embedding_flops(discriminator)
        + discriminator_head_flops(discriminator)
    )


def paper_pretraining_flops(preset):
    """Pre-training FLOPs of a preset with the paper's batch size, steps and sequence length.

    base (6.4e19) and large (7.1e20 at 400k steps) reproduce the paper. For small this gives 1.29e18, which is also what
    the reference script yields for its own ELECTRA-Small arguments (generator 64 wide); the paper's 1.4e18 matches a
    generator of half the discriminator's width (1.42e18).
    """
    settings = {"small": (128, 128, 1_000_000), "base": (512, 256, 766_000), "large": (512, 2048, 400_000)}
    seq_len, batch_size, steps = settings[preset]
    return pretraining_flops(ElectraConfig.from_preset(preset), seq_len, batch_size, steps)


# ----------------------------------------------------------------- matmul-only view
def matmul_forward_flops(shape, discriminator):
    """Forward FLOPs of the dense matrix multiplications of one network over one sequence, and nothing else.

    Counted: the embedding projection (when embedding != hidden), per layer the Q/K/V and output projections
    (8 h^2), the attention scores and weighted sum (4 h s) and the two FFN matmuls (4 h i) per token, and the head:
    the discriminator's dense layer and logit (2 h^2 + 2 h), or the generator's dense layer and tied output matmul
    (2 h e + 2 e V) at `output_fraction` of the positions. Not counted: embedding lookups (gathers, which the reference
    accounting counts as one-hot matmuls), biases, LayerNorm, GELU, softmax, dropout.
    """
    e, h, s, i, v = shape.embedding, shape.hidden, shape.seq_len, shape.intermediate, shape.vocab
    per_token = shape.layers * (8 * h * h + 4 * h * s + 4 * h * i)
    if e != h:
        per_token += 2 * h * e
    if discriminator:
        per_token += 2 * h * h + 2 * h
    else:
        per_token += shape.output_fraction * (2 * h * e + 2 * e * v)
    return per_token * s


def pretraining_matmul_flops(
    config, seq_len, batch_size, train_steps=1, output_fraction=REFERENCE_OUTPUT_FRACTION, backward_factor=2
):
    """Matmul-only FLOPs of ELECTRA pre-training (generator plus discriminator), the figure that does not flatter MFU.

    Training = (1 + backward_factor) x forward: a matmul's backward computes the gradients of both operands, twice
    its forward cost (the usual "6 N" convention), where the reference accounting (`pretraining_flops`) takes
    backward = forward. Embedding lookups and element-wise work are left out (see `matmul_forward_flops`).
    """
    discriminator, generator = network_shapes(config, seq_len, output_fraction)
    forward = matmul_forward_flops(discriminator, True) + matmul_forward_flops(generator, False)
    return (1 + backward_factor) * batch_size * train_steps * forward
