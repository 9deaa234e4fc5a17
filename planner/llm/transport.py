"""The HTTP client under litellm's OpenAI-compatible provider, with a cap on the reply's size.

Why: the OpenAI SDK reads a whole reply into memory before litellm sees it, so a broken or
hostile server answering gigabytes would fill the machine. An httpx response hook reads the body
itself, up to ``max_bytes``, and raises past it; the client then reports a "too_large" failure
naming the server. The SDK's own retries are switched off (``max_retries=0``): the LLM client has
its own bounded retry loop, and SDK retries would multiply every timeout by three.

httpx and openai are imported lazily (they come with litellm), so importing the planner stays
cheap.
"""

from __future__ import annotations

import threading
from typing import Any


class ResponseTooLargeError(RuntimeError):
    """The server's reply exceeded ``LLMConfig.max_response_bytes`` (the rest was not read)."""


class CappedTransport:
    """One httpx client per LLM client (connection reuse); ``tripped()`` says whether the last
    request on this thread was cut off by the cap (the SDK wraps the hook's exception in its
    own connection error, so the cause is kept here)."""

    def __init__(self, max_bytes: int, timeout: float) -> None:
        import httpx

        self.max_bytes = max_bytes
        self._local = threading.local()
        self._http = httpx.Client(event_hooks={"response": [self._cap]}, timeout=timeout)

    def _cap(self, response: Any) -> None:
        self._local.tripped = False
        length = response.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            self._local.tripped = True
            response.close()
            raise ResponseTooLargeError(f"Content-Length {length} is over the {self.max_bytes}-byte cap")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                self._local.tripped = True
                response.close()
                raise ResponseTooLargeError(f"the reply is over the {self.max_bytes}-byte cap")
            chunks.append(chunk)
        response._content = b"".join(chunks)  # what response.read() returns from now on

    def take_tripped(self) -> bool:
        tripped = bool(getattr(self._local, "tripped", False))
        self._local.tripped = False
        return tripped

    def openai_client(self, api_base: str | None, api_key: str | None, timeout: float) -> Any:
        import openai

        return openai.OpenAI(api_key=api_key or "unused", base_url=api_base, http_client=self._http,
                             max_retries=0, timeout=timeout)

    def close(self) -> None:
        self._http.close()


def uses_openai_transport(model: str) -> bool:
    """Models litellm sends through the OpenAI SDK (where the capped client can be passed in)."""
    return model.startswith("openai/")
