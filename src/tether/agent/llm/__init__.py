"""tether.agent.llm: the model seam (`ctx.llm`), its transport protocol and the OpenAI adapter."""

from .config import LlmConfig as LlmConfig
from .config import LlmRoute as LlmRoute
from .config import resolve_route as resolve_route
from .errors import ABORTED as ABORTED
from .errors import LLM_STREAM_IDLE_TIMEOUT as LLM_STREAM_IDLE_TIMEOUT
from .errors import RETRYABLE_CODES as RETRYABLE_CODES
from .errors import LlmError as LlmError
from .openai import OpenAICompatibleTransport as OpenAICompatibleTransport
from .retry import RetryPolicy as RetryPolicy
from .retry import sleep_unless_aborted as sleep_unless_aborted
from .service import Generation as Generation
from .service import Llm as Llm
from .service import RetryNotice as RetryNotice
from .transport import LlmRequest as LlmRequest
from .transport import LlmTransport as LlmTransport

__all__ = [
    "ABORTED",
    "LLM_STREAM_IDLE_TIMEOUT",
    "RETRYABLE_CODES",
    "Generation",
    "Llm",
    "LlmConfig",
    "LlmError",
    "LlmRequest",
    "LlmRoute",
    "LlmTransport",
    "OpenAICompatibleTransport",
    "RetryNotice",
    "RetryPolicy",
    "resolve_route",
    "sleep_unless_aborted",
]
