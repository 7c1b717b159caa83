"""Tiny random-init models, built in memory, for the tests of the scoring path's modules."""

import transformers


def gpt2(activation: str = "gelu_new"):
    config = transformers.GPT2Config(
        vocab_size=50, n_positions=32, n_embd=16, n_layer=2, n_head=2, activation_function=activation
    )
    return transformers.GPT2LMHeadModel(config).eval()


def llama():
    config = transformers.LlamaConfig(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=32,
    )
    return transformers.LlamaForCausalLM(config).eval()


def opt():
    """An OPT, whose layers name their products fc1 / fc2 and have no ``mlp`` module."""
    config = transformers.OPTConfig(
        vocab_size=50,
        hidden_size=16,
        ffn_dim=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=32,
    )
    return transformers.OPTForCausalLM(config).eval()
