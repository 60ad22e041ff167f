"""The one LLM interface of kgservice: :meth:`LLM.complete_json` over ``litellm.completion``.

Importing this package is cheap; litellm (several seconds to import) is imported only
when the first request is made, so ``kg`` commands that need no LLM never pay for it.
"""

from kgservice.llm.client import (
    PURPOSES,
    QUERY_PURPOSES,
    LLM,
    LLMError,
    LLMOutputError,
    LLMProviderError,
    PurposeUsage,
    Usage,
    request_key,
)
from kgservice.llm.prompts import Prompt, load_prompt

__all__ = [
    "PURPOSES",
    "QUERY_PURPOSES",
    "LLM",
    "LLMError",
    "LLMOutputError",
    "LLMProviderError",
    "Prompt",
    "PurposeUsage",
    "Usage",
    "load_prompt",
    "request_key",
]
