"""`ElectraBackbone`: embeddings + Transformer encoder, the network under every ELECTRA model."""

import keras
import keras_hub

from electra_tf.architecture import ARCHITECTURE_FIELDS, ElectraArchitecture
from electra_tf.checkpoints import DISCRIMINATOR, GENERATOR
from electra_tf.errors import ConfigError
from electra_tf.layers.embeddings import ElectraEmbeddings
from electra_tf.layers.transformer_layer import (
    ElectraTransformerLayer,
    alibi_attention_bias,
    attention_bias_from_padding_mask,
)
from electra_tf.lora_settings import check_lora_settings
from electra_tf.models.presets import checkpoint_model, keras_hub_handle, rebuilt

BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")
# The names of the reference's features (TFRecords, GLUE/SQuAD features, serving signatures) for the same inputs.
FEATURE_NAMES = {"token_ids": "input_ids", "segment_ids": "segment_ids", "padding_mask": "input_mask"}
# The projections `enable_lora` adapts by default: PEFT's target modules for ELECTRA.
LORA_TARGETS = ("query", "value")


def backbone_inputs(features):
    """The backbone's input dict from `features` named either as keras-hub (`token_ids`, `segment_ids`,
    `padding_mask`) or as the reference's features (`input_ids`, `segment_ids`, `input_mask`)."""
    if all(name in features for name in BACKBONE_INPUTS):
        return {name: features[name] for name in BACKBONE_INPUTS}
    missing = [feature for feature in FEATURE_NAMES.values() if feature not in features]
    if missing:
        raise KeyError(
            f"ELECTRA inputs need {list(BACKBONE_INPUTS)} (or {list(FEATURE_NAMES.values())}); "
            f"missing {missing} in {sorted(features)}"
        )
    return {name: features[feature] for name, feature in FEATURE_NAMES.items()}


def encode_tokens(
    embeddings,
    embeddings_project,
    transformer_layers,
    token_ids,
    segment_ids,
    padding_mask,
    word_vectors=None,
    training=None,
    direction=None,
    alibi=False,
    output_length=None,
):
    """The backbone's computation on explicit layers; `word_vectors` [batch, length, E], when given, replace the word
    table lookup (pre-training variants that modify the looked-up vectors); `direction` makes the attention causal
    (see `attention_bias_from_padding_mask`); `alibi` adds `alibi_attention_bias` to every layer's attention;
    `output_length` makes the last layer compute only the first `output_length` positions
    (`ElectraTransformerLayer`)."""
    return encoder_states(
        embeddings,
        embeddings_project,
        transformer_layers,
        token_ids,
        segment_ids,
        padding_mask,
        word_vectors,
        training,
        direction,
        alibi,
        output_length,
    )[-1]


def encoder_states(
    embeddings,
    embeddings_project,
    transformer_layers,
    token_ids,
    segment_ids,
    padding_mask,
    word_vectors=None,
    training=None,
    direction=None,
    alibi=False,
    output_length=None,
):
    """Every hidden state of `encode_tokens`: [the embedding block's output (projected to H), the output of each
    Transformer layer], each [batch, length, H] (the last [batch, `output_length`, H] when given)."""
    hidden = embeddings(token_ids, segment_ids, training=training, word_vectors=word_vectors)
    if embeddings_project is not None:
        hidden = embeddings_project(hidden)
    states = [hidden]
    attention_bias = attention_bias_from_padding_mask(padding_mask, hidden.dtype, direction)
    if alibi:
        attention_bias = attention_bias + alibi_attention_bias(
            padding_mask, transformer_layers[0].num_heads, hidden.dtype
        )
    for layer in transformer_layers[:-1]:
        states.append(layer(states[-1], attention_bias, training=training))
    states.append(transformer_layers[-1](states[-1], attention_bias, training=training, output_length=output_length))
    return states


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraBackbone(keras_hub.models.Backbone):
    """The ELECTRA encoder as a keras-hub `Backbone`: a functional model from `token_ids`, `segment_ids` and
    `padding_mask` (int [batch, length]) to `sequence_output` [batch, length, hidden_size]. There is no pooler: ELECTRA
    has none; heads read `sequence_output[:, 0]` for [CLS].

    Layers, named after the reference's scopes so that checkpoints map one to one: `embeddings` (word, position and
    token-type tables, LayerNorm, dropout: `ElectraEmbeddings`), `embeddings_project` (E -> H, only when
    `embedding_size != hidden_size`) and `transformer_layer_{i}` (`ElectraTransformerLayer`, post-LayerNorm, exact
    GELU, LayerNorm epsilon 1e-12).

    Args:
        vocab_size, embedding_size, hidden_size, num_layers, num_heads, intermediate_size, max_position_embeddings,
        type_vocab_size, hidden_dropout, attention_dropout, layer_norm_epsilon, initializer_range, hidden_activation,
        alibi: the architecture (the fields of `electra_tf.architecture.ElectraArchitecture`, which checks them;
            `hidden_activation` "gelu" is the reference's exact GELU, "gelu_approximate" the tanh form of keras-hub's
            and some Hugging Face ELECTRAs; `alibi` adds ALiBi's distance bias to the attention, not in the paper).
        embeddings: an `ElectraEmbeddings` to share with another backbone (ELECTRA's generator and discriminator share
            one block); by default the backbone owns a new one. A shared block is not part of `get_config()`.
        dtype: the dtype policy of every layer.
    """

    def __init__(
        self,
        vocab_size,
        embedding_size,
        hidden_size,
        num_layers,
        num_heads,
        intermediate_size,
        max_position_embeddings=512,
        type_vocab_size=2,
        hidden_dropout=0.1,
        attention_dropout=0.1,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        hidden_activation="gelu",
        alibi=False,
        embeddings=None,
        dtype=None,
        **kwargs,
    ):
        architecture = ElectraArchitecture(  # ConfigError when invalid
            vocab_size,
            embedding_size,
            hidden_size,
            num_layers,
            num_heads,
            intermediate_size,
            max_position_embeddings,
            type_vocab_size,
            hidden_dropout,
            attention_dropout,
            layer_norm_epsilon,
            initializer_range,
            hidden_activation,
            alibi,
        )
        if embeddings is None:
            embeddings = ElectraEmbeddings.for_architecture(architecture, dtype=dtype)
        elif (embeddings.vocab_size, embeddings.embedding_size) != (vocab_size, embedding_size):
            raise ValueError(
                f"the shared embeddings are [{embeddings.vocab_size}, {embeddings.embedding_size}] but "
                f"the backbone needs vocab_size={vocab_size}, embedding_size={embedding_size}"
            )
        embeddings_project = None
        if embedding_size != hidden_size:
            # Glorot-uniform, as tf.layers.dense's default in the reference.
            embeddings_project = keras.layers.Dense(hidden_size, dtype=dtype, name="embeddings_project")
        transformer_layers = [
            ElectraTransformerLayer(
                hidden_size,
                num_heads,
                intermediate_size,
                hidden_dropout=hidden_dropout,
                attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                initializer_range=initializer_range,
                hidden_activation=hidden_activation,
                dtype=dtype,
                name=f"transformer_layer_{i}",
            )
            for i in range(num_layers)
        ]

        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in BACKBONE_INPUTS}
        sequence_output = encode_tokens(embeddings, embeddings_project, transformer_layers, **inputs, alibi=alibi)
        super().__init__(inputs=inputs, outputs=sequence_output, dtype=dtype, **kwargs)

        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.hidden_dropout = hidden_dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.hidden_activation = hidden_activation
        self.alibi = alibi
        self.embeddings = embeddings
        self.embeddings_project = embeddings_project
        # Named attributes rather than only a list: checkpoints then carry the reference's per-layer structure.
        for i, layer in enumerate(transformer_layers):
            setattr(self, f"transformer_layer_{i}", layer)
        self.token_embedding = embeddings.word_embeddings

    @classmethod
    def from_preset(
        cls,
        preset,
        load_weights=True,
        *,
        format="auto",
        num_heads=None,
        vocab_file=None,
        allow_embedding_mismatch=False,
        **kwargs,
    ):
        """The encoder of the checkpoint at `preset`, in any format `electra_tf.models.load_checkpoint` reads (a
        preset of ours, this backbone's own `save_to_preset` included, a pre-training run's model_dir, the reference's
        TF1 checkpoint, a Hugging Face directory or pair, a keras-hub backbone): the discriminator's, or the
        generator's when that is all the checkpoint holds. A keras-hub handle (`kaggle://...`, `hf://...`, a built-in
        preset name; `presets.keras_hub_handle`) goes to `keras_hub.models.Backbone.from_preset`.

        As keras-hub's: `kwargs` override the backbone's config (e.g. `dtype`), and `load_weights=False` gives the
        same architecture freshly initialised. `format`, `num_heads`, `vocab_file` and `allow_embedding_mismatch`
        are `load_checkpoint`'s.
        """
        load_arguments = {
            "format": format,
            "num_heads": num_heads,
            "vocab_file": vocab_file,
            "allow_embedding_mismatch": allow_embedding_mismatch,
        }
        if keras_hub_handle(cls, preset, load_arguments):
            return super().from_preset(preset, load_weights, **kwargs)
        model = checkpoint_model(cls, preset, (DISCRIMINATOR, GENERATOR), allow_missing_head=True, **load_arguments)
        return rebuilt(model.backbone, cls, load_weights, **kwargs)

    @property
    def transformer_layers(self):
        return [getattr(self, f"transformer_layer_{i}") for i in range(self.num_layers)]

    def encode(self, inputs, word_vectors=None, training=None, direction=None, output_length=None):
        """`sequence_output` for `inputs` (either naming, see `backbone_inputs`), optionally with `word_vectors`
        [batch, length, E] replacing the word-table lookup, with causal attention in `direction`
        ("left_to_right" or "right_to_left": the towers of a two-tower cloze model), and only for the first
        `output_length` positions (the same values, [batch, output_length, H]: a head that reads [CLS] alone saves
        most of the last layer)."""
        inputs = backbone_inputs(inputs)
        return encode_tokens(
            self.embeddings,
            self.embeddings_project,
            self.transformer_layers,
            inputs["token_ids"],
            inputs["segment_ids"],
            inputs["padding_mask"],
            word_vectors=word_vectors,
            training=training,
            direction=direction,
            alibi=self.alibi,
            output_length=output_length,
        )

    def hidden_states(self, inputs, training=False):
        """[embedding output, transformer_layer_0 output, ...]: the `num_layers + 1` states [batch, length, H] of
        `inputs` (either naming), the last one `sequence_output` (for probing and comparing layers)."""
        inputs = backbone_inputs(inputs)
        return encoder_states(
            self.embeddings,
            self.embeddings_project,
            self.transformer_layers,
            inputs["token_ids"],
            inputs["segment_ids"],
            inputs["padding_mask"],
            training=training,
            alibi=self.alibi,
        )

    def projections(self):
        """{name: [Dense of every layer]} of the projections LoRA may target: `query`, `key`, `value`,
        `attention_output`, `intermediate` and `output` of each Transformer layer, and `embeddings_project` (when
        E != H)."""
        layers = {}
        for layer in self.transformer_layers:
            for dense in layer.dense_layers():
                layers.setdefault(dense.name, []).append(dense)
        if self.embeddings_project is not None:
            layers[self.embeddings_project.name] = [self.embeddings_project]
        return layers

    def default_lora_layer_names(self):
        return list(LORA_TARGETS)

    def enable_lora(self, rank, target_layer_names=None, lora_alpha=None):
        """Freezes the backbone and adds LoRA weights to the projections named in `target_layer_names` (default
        `query` and `value` of every layer, where PEFT's ELECTRA mapping puts them): keras-hub's
        `Backbone.enable_lora`, whose name rule finds this backbone's layers, with `lora_alpha` (scale
        `lora_alpha / rank`; default `rank`, a scale of 1, as Keras' `Dense.enable_lora`) and, as PEFT's default
        `bias="none"`, the targets' biases frozen too. Afterwards only the `lora_kernel_a` [in, rank] and
        `lora_kernel_b` [rank, out] of each target are trainable: 4 x num_layers x hidden_size x rank weights for the
        default targets.

        The other projections (`key`, `attention_output`, `intermediate`, `output`, `embeddings_project`) may be
        named too. They are not the default: the LoRA paper (Hu et al., 2021, table 5) found query + value within 0.4
        points of all four attention projections at the same number of weights and better than any one alone, PEFT
        adapts the same two for ELECTRA, and the feed-forward pair costs 5 x hidden_size x rank weights each. The
        embedding tables stay frozen: the reference's layer-wise decay already gives them the smallest learning rate
        (decay^(L+2) of the head's), so fine-tuning barely moves them.

        Every path of the Transformer layer computes with each projection's `kernel`, which Keras makes
        W + (lora_alpha / rank) A B once LoRA is on; in a training step that kernel enters as a constant and A and B
        learn through the low-rank product, so no frozen kernel's [in, out] gradient is computed
        (tests/electra_tf/models/test_lora.py checks the gradients against keras-hub's `TransformerEncoder`). Saving
        writes merged kernels (Keras' `Dense.save_own_variables`); `electra_tf.models.lora.merged_lora` gives that
        model in memory.

        Args:
            rank: the rank of each factorisation (a positive integer).
            target_layer_names: names among `projections()` (default `default_lora_layer_names()`).
            lora_alpha: the numerator of the scale (a positive number; default `rank`).
        """
        targets = list(self.default_lora_layer_names() if target_layer_names is None else target_layer_names)
        projections = self.projections()
        check_lora_settings(rank, lora_alpha)
        unknown = [name for name in targets if name not in projections]
        if unknown or not targets:
            raise ConfigError(
                f"target_layer_names={targets} names no projection of this backbone ({unknown}); "
                f"choose among {sorted(projections)}",
                arguments=("target_layer_names",),
            )
        if self.lora_enabled_layers():
            raise ConfigError(
                "LoRA is already enabled on this backbone: enable_lora is called once, on the pre-trained model",
                arguments=("rank",),
            )
        super().enable_lora(rank, target_layer_names=targets)
        for dense in self.lora_enabled_layers():
            if dense.bias is not None:
                dense.bias.trainable = False
            if lora_alpha is not None:
                dense.lora_alpha = lora_alpha  # Dense.enable_lora's own argument, which keras-hub does not pass

    def lora_enabled_layers(self):
        """The projections with LoRA weights, in the order of `projections()`."""
        return [dense for layers in self.projections().values() for dense in layers if dense.lora_enabled]

    def architecture(self):
        """The architecture as a dict of `ElectraArchitecture` fields."""
        return {name: getattr(self, name) for name in ARCHITECTURE_FIELDS}

    def get_config(self):
        config = super().get_config()
        config.update(self.architecture())
        return config


def clone_backbone(backbone):
    """A new `ElectraBackbone` (own embedding block) with `backbone`'s architecture and current weights: each
    fine-tuning trial starts from the pre-trained weights, not from the previous trial's."""
    clone = ElectraBackbone.from_config(backbone.get_config())
    clone.set_weights(backbone.get_weights())
    return clone
