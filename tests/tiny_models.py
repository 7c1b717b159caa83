"""Tiny local models (a BPE tokenizer, GPT-2, BART): built once per test session, never downloaded.

The fixtures are registered in tests/conftest.py, so every test directory can use them."""

from pathlib import Path

TEXTS = [
    "Did you book the tickets?",
    "Not yet, the site was down all morning.",
    "Can you try again tonight?",
    "Sure, I will try again after dinner.",
    "The train leaves at nine o'clock from platform two.",
    "I would like a cup of coffee, please.",
    "How much is this jacket?",
    "It is forty dollars, but it is on sale today.",
    "What time does the museum open on Sundays?",
    "My sister is coming to visit next week.",
    "Let's meet in front of the library at noon.",
    "I'm sorry, I didn't catch your name.",
    "The weather is lovely, isn't it?",
    "Could you help me carry these boxes upstairs?",
]

SPECIAL = {"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"}


def train_tokenizer(texts, folder: Path, *, vocab_size: int = 320):
    """A byte-level BPE trained on ``texts`` with the ``tokenizers`` library, saved as a HF tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **SPECIAL)
    fast.save_pretrained(folder)
    return fast


def build_tiny_tokenizer(folder: Path) -> Path:
    """A byte-level BPE tokenizer trained on the test texts, saved in ``folder``."""
    train_tokenizer(TEXTS * 3, folder)
    return folder


def build_tiny_gpt2(tokenizer_dir: Path, folder: Path) -> Path:
    """A 2-layer GPT-2 with random weights and that tokenizer, saved in ``folder``."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=96,
        n_embd=64,
        n_layer=2,
        n_head=2,
        initializer_range=0.2,  # spread-out logits: candidates get clearly different losses
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# a small chat template in the usual form (role markers, an end-of-turn marker, the generation prompt)
CHAT_MARKERS = ["<|user|>", "<|assistant|>", "<|end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_chat_gpt2(tokenizer_dir: Path, folder: Path) -> Path:
    """The tiny GPT-2 with a tokenizer that carries a chat template (its markers are special tokens)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": CHAT_MARKERS})
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return build_tiny_gpt2(folder, folder)


def build_tiny_bart(tokenizer_dir: Path, folder: Path) -> Path:
    """A 2+2-layer BART with random weights and that tokenizer, saved in ``folder``."""
    import torch
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(0)
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_position_embeddings=96,
        init_std=0.2,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=None,
    )
    BartForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_sentence_encoder(tokenizer_dir: Path, folder: Path) -> Path:
    """A 2-layer BERT with random weights and that tokenizer, saved in ``folder``: a sentence
    encoder (mean-pooled, like all-MiniLM-L6-v2) hundreds of times faster than the real one."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    # BERT takes token type ids too (the ONNX export feeds them).
    tokenizer = AutoTokenizer.from_pretrained(
        tokenizer_dir, model_input_names=["input_ids", "token_type_ids", "attention_mask"]
    )
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
    )
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


MLM_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece_tokenizer(texts, folder: Path, *, vocab_size: int = 600):
    """An uncased WordPiece tokenizer with BERT's special tokens and pair template, trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    from core.toy_models import bert_tokenizer_fast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=MLM_SPECIAL))
    fast = bert_tokenizer_fast(tok, max_length=128)
    fast.save_pretrained(folder)
    return fast


def build_tiny_mlm(folder: Path, texts=None) -> Path:
    """A 2-layer BERT masked LM with random weights and a WordPiece tokenizer trained on ``texts``
    (the test texts by default), saved in ``folder``: BERT-shaped, as the paper's bert-base-uncased."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = train_wordpiece_tokenizer(list(texts or TEXTS * 3), folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=0.2,  # spread-out predictions: words get clearly different scores
    )
    BertForMaskedLM(config).save_pretrained(folder)
    return folder


def pickled_copy(folder: Path, target: Path) -> Path:
    """``folder``'s model saved in ``target`` as pickled weights (``pytorch_model.bin``: torch.save
    of its state dict, what ``save_pretrained(safe_serialization=False)`` wrote before transformers
    5) beside its configuration and tokenizer files, with no safetensors weights: what an older
    checkpoint looks like."""
    import shutil

    import torch
    from safetensors.torch import load_file

    shutil.copytree(folder, target)
    torch.save(load_file(target / "model.safetensors"), target / "pytorch_model.bin")
    (target / "model.safetensors").unlink()
    return target
