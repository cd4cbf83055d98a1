"""Loading a base model for fine-tuning or generation (the bundled GGUF, a local folder or a hub id),
greedy generation and attaching LoRA adapters. With the fine-tune's modules (train/finetune.py,
train/_trainer.py, train/_progress.py), the one place that uses torch, transformers and peft,
imported inside the functions only. Remote code is never trusted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ingest import UserError, settings
from ingest.scoring.judges.local import gguf_path

LOCAL_PREFIX = "local:"
BUNDLED = {"smollm2"}


def resolve_base(base: str) -> dict:
    """Where a `--base` value points, without loading anything.

    Returns {"kind": "gguf" | "folder" | "hub", "path" (folder or hub id), "gguf_file" (or None),
    "name" (what config.json records)}. Raises ingest.UserError for an unknown local:NAME.
    """
    if not base or not base.strip():
        raise UserError("--base: a model is required (local:smollm2, a model folder or a hub id)")
    base = base.strip()
    if base.startswith(LOCAL_PREFIX):
        name = base[len(LOCAL_PREFIX):]
        if name not in BUNDLED:
            raise UserError(f"--base {base}: unknown bundled model (known: "
                            f"{', '.join(LOCAL_PREFIX + n for n in sorted(BUNDLED))})")
        path = gguf_path()
        return {"kind": "gguf", "path": str(path.parent), "gguf_file": path.name, "name": base}
    p = Path(base).expanduser()
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise UserError(f"--base {base}: the folder has no config.json (not a transformers model)")
        return {"kind": "folder", "path": str(p.resolve()), "gguf_file": None, "name": str(p.resolve())}
    if p.exists() or base.startswith((".", "/", "~")):
        raise UserError(f"--base {base}: no such model folder")
    return {"kind": "hub", "path": base, "gguf_file": None, "name": base}


def pick_device() -> str:
    """cuda when a GPU is visible (under `accelerate launch`, LOCAL_RANK's), else cpu."""
    import torch
    if torch.cuda.is_available():
        return f"cuda:{settings.distributed()[2]}"
    return "cpu"


def bf16_supported() -> bool:
    import torch
    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def load_tokenizer(base: str):
    """The base's tokenizer, with a pad token (the end-of-sequence token where it has none)."""
    from transformers import AutoTokenizer
    where = resolve_base(base)
    _quiet()
    tok = AutoTokenizer.from_pretrained(where["path"], gguf_file=where["gguf_file"], trust_remote_code=False,
                                        local_files_only=where["kind"] != "hub")
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_base(base: str, *, dtype=None, device: str | None = None, tokenizer: bool = True):
    """(model, tokenizer) for `base`: "local:smollm2" (the bundled GGUF, dequantised by
    transformers' `gguf_file=`), a local model folder, or a hub id (downloaded by transformers
    if the user has a hub; a folder or the bundled model never touches the network).

    dtype: a torch dtype, or None for bfloat16 on a GPU that supports it, else float32.
    device: None = `pick_device()`. The model comes back in eval mode; tokenizer is None when
    tokenizer=False.
    """
    import torch
    from transformers import AutoModelForCausalLM
    where = resolve_base(base)
    if where["kind"] != "hub":
        settings.hub_offline()
    _quiet()
    if dtype is None:
        dtype = torch.bfloat16 if bf16_supported() else torch.float32
    model = AutoModelForCausalLM.from_pretrained(
        where["path"], gguf_file=where["gguf_file"], dtype=dtype, trust_remote_code=False,
        local_files_only=where["kind"] != "hub")
    if where["kind"] == "gguf":
        _drop_gguf_marker(model)
    model.to(device or pick_device())
    model.eval()
    return model, (load_tokenizer(base) if tokenizer else None)


def generate(model, tokenizer, prompts: list[str], max_new_tokens: int, batch_size: int,
             on_batch: Callable[[list[int], list[dict]], bool] | None = None) -> list[dict]:
    """Greedy answers to user prompts (chat template), batched with left padding, longest first.
    on_batch(indices, answers) after each batch; returning False stops. Returns answers by index
    ({answer, tokens_out, truncated}); prompts not reached are missing."""
    import torch
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    ids = [tokenizer.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                         tokenize=True, return_dict=False) for p in prompts]
    order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
    eos = {tokenizer.eos_token_id, *([model.generation_config.eos_token_id]
                                     if isinstance(model.generation_config.eos_token_id, int)
                                     else model.generation_config.eos_token_id or [])}
    out: list[dict | None] = [None] * len(ids)
    device = next(model.parameters()).device
    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        enc = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, padding=True, return_tensors="pt")
        with torch.no_grad():
            gen = model.generate(input_ids=enc["input_ids"].to(device), attention_mask=enc["attention_mask"].to(device),
                                 max_new_tokens=max_new_tokens, do_sample=False, temperature=None, top_p=None,
                                 top_k=None, pad_token_id=tokenizer.pad_token_id)
        width = enc["input_ids"].shape[1]
        answers = []
        for row, i in enumerate(batch):
            new = gen[row, width:].tolist()
            ended = [k for k, t in enumerate(new) if t in eos]
            kept = new[:ended[0]] if ended else new
            out[i] = {"answer": tokenizer.decode(kept, skip_special_tokens=True).strip(), "tokens_out": len(kept),
                      "truncated": not ended and len(new) >= max_new_tokens}
            answers.append(out[i])
        if on_batch is not None and on_batch(batch, answers) is False:
            break
    return out


def use_adapter(model, peft_model, adapter: str | os.PathLike, name: str):
    """The LoRA adapter folder `adapter` attached to `model` under `name` and made the active one,
    in eval mode. peft_model: what an earlier call returned for the same base (None the first
    time); adapters are loaded side by side into it and switched. Returns the peft model."""
    from peft import PeftModel
    if peft_model is None:
        peft_model = PeftModel.from_pretrained(model, str(adapter), adapter_name=name)
    else:
        peft_model.load_adapter(str(adapter), adapter_name=name)
    peft_model.set_adapter(name)
    peft_model.eval()
    return peft_model


def _drop_gguf_marker(model) -> None:
    """transformers dequantises GGUF tensors on load into plain float weights but keeps a GGUF
    'quantizer' on the model, which makes the Trainer refuse to train it. Remove the marker."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    for module in model.modules():
        if hasattr(module, "config") and getattr(module.config, "_is_quantized", False):
            module.config._is_quantized = False


def _quiet() -> None:
    from transformers.utils import logging as hf_logging
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
