"""One SDK call of a hosted backend, and how its failures map, for both the ``openai`` and the
``anthropic`` SDK (generated alike: the same exception classes, ``with_raw_response``).

A paced client (``backend.on_headers`` set) gets every answer's headers, an error's too, for
their rate limits. A timeout or a lost connection, a 429 and a 5xx are worth retrying (with the
wait the refusal asks); a refused key and an unknown model stop the stage naming the setting;
any other refusal fails the call with the server's message, redacted.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from pipelines.errors import LLMError
from pipelines.llm.backends.base import Backend, CallFailed, TransientError
from pipelines.retry import refusal_wait_s


def call_sdk(
    backend: Backend,
    sdk: ModuleType,
    endpoint: Any,
    message: Callable[[Any], str],
    **body: Any,
) -> Any:
    """``endpoint.create(**body)`` (through ``with_raw_response`` when paced), its errors
    mapped; ``message`` reads a refusal's server message. ``backend`` names ``base_url``,
    ``key_env`` and ``model`` in what it raises."""
    where = getattr(backend, "base_url", "")
    try:
        if backend.on_headers is None:
            return endpoint.create(**body)
        raw = endpoint.with_raw_response.create(**body)
        backend.on_headers(raw.headers)
        return raw.parse()
    except sdk.APITimeoutError:
        raise TransientError("timeout") from None
    except sdk.APIConnectionError as exc:
        raise TransientError(f"connection failed: {exc.__cause__ or exc}") from None
    except (sdk.AuthenticationError, sdk.PermissionDeniedError) as exc:
        key_env = getattr(backend, "key_env", "")
        raise LLMError(f"{where} refused the key (HTTP {exc.status_code}); set {key_env}") from None
    except sdk.NotFoundError:
        raise LLMError(
            f"{where} has no model {backend.model!r} (HTTP 404); check llm.model and llm.base_url"
        ) from None
    except sdk.APIStatusError as exc:
        status, headers = exc.status_code, exc.response.headers
        if backend.on_headers is not None:
            backend.on_headers(headers)
        if status == 429 or status >= 500:  # Anthropic's 529: overloaded
            wait = refusal_wait_s(headers)
            raise TransientError(f"HTTP {status}", wait, rate_limited=status == 429) from None
        raise CallFailed(f"HTTP {status}: {message(exc)}") from None
