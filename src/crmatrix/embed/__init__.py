"""Dense embeddings for the vector indexes: model identity, two backends, ONNX export, a shared cache.

Importing this package makes the Hugging Face libraries offline unless the caller chose
otherwise: a benchmark run must never fetch weights behind the user's back. The defaults
only take effect if transformers/huggingface_hub were not imported earlier in the process.
Nothing here imports torch or onnxruntime until an embedder is built or a model exported.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
