"""Judge providers, chosen by a SPEC string and imported lazily (torch only for `local:`):

    openai:MODEL@BASE_URL   any OpenAI-compatible chat-completions server
    local:smollm2           the bundled SmolLM2-135M-Instruct GGUF, in-process (transformers)
    fake:NAME[?k=v&...]     a deterministic simulated judge
    distilled:DIR           a student classifier `judgeaudit distil` wrote (numpy and scikit-learn)
"""

from ._constraint import MECHANISMS, check_server, settings_for as constraint_settings
from ._spec import PROVIDERS, JudgeSpec, parse_judge
from ._urls import public_endpoint
from .base import CallHints, Judge, JudgeError, JudgeReply
from .strategies import Strategy, parse_strategy, with_strategy

__all__ = ["CallHints", "Judge", "JudgeError", "JudgeReply", "JudgeSpec", "MECHANISMS", "PROVIDERS", "Strategy", "check_server",
           "constraint_settings", "parse_judge", "parse_strategy", "public_endpoint", "with_strategy"]
