"""The model request's own cost, beside ``bench --talk --speculation``'s calls: Strands' ``OpenAIModel`` (a
client and a connection made for each request) and the app's ``openai:`` model (its client kept open between
requests, :mod:`agentcore_app.kept_client`), their requests alternated against a stand-in that answers at
once (the OpenAI-compatible server, :mod:`strands_voice_tools.openai_stand_in`). What is timed: from asking
to the model's first token (what a caller's answer waits on), and to the end of the answer.
"""

from __future__ import annotations

import time
from typing import Any, Final

from strands_voice_tools.bench.call_figures import ms_summary

__all__ = ["CLIENTS", "bench_model_client", "format_model_client"]

#: The two clients, as the figures name them.
CLIENTS: Final = ("a client per request", "kept client")
_QUESTION: Final[Any] = [{"role": "user", "content": [{"text": "What does the premium plan cost?"}]}]


async def _request(model: Any) -> tuple[float, float]:
    """One answer: seconds to its first token, and to its end."""
    started = time.perf_counter()
    first: float | None = None
    async for event in model.stream(_QUESTION):
        if first is None and "contentBlockDelta" in event:
            first = time.perf_counter() - started
    return first if first is not None else float("nan"), time.perf_counter() - started


async def bench_model_client(requests: int) -> dict[str, Any]:
    """``requests`` answers through each client, alternated (after one each uncounted); a JSON-ready
    mapping of each client's first-token and whole-answer times."""
    from agentcore_app.kept_client import KeptClientOpenAIModel
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server
    from strands.models.openai import OpenAIModel

    from strands_voice_tools.openai_stand_in import STAND_IN_MODEL_ID, openai_stand_in_app

    answering = ScriptedModel(text="Okay.", first_sentence_s=0.0, total_s=0.0)
    with running_server(openai_stand_in_app(answering)) as server:
        client_args = {"base_url": f"{server.base_url}/v1", "api_key": "stand-in"}
        per_request = OpenAIModel(client_args=client_args, model_id=STAND_IN_MODEL_ID)
        kept = KeptClientOpenAIModel(client_args=client_args, model_id=STAND_IN_MODEL_ID)
        models = dict(zip(CLIENTS, (per_request, kept), strict=True))
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in CLIENTS}
        try:
            for model in models.values():
                await _request(model)  # imports, and the kept client's first connection
            for _ in range(requests):
                for name, model in models.items():
                    times[name].append(await _request(model))
        finally:
            await kept.aclose()
    return {
        name: {
            "first_token_ms": ms_summary([first for first, _ in pairs]),
            "answer_ms": ms_summary([whole for _, whole in pairs]),
        }
        for name, pairs in times.items()
    }


def format_model_client(results: dict[str, Any]) -> str:
    """One line per client: first token and whole answer, medians."""
    lines = ["The model's request to a stand-in that answers at once (median, p95)"]
    for name in CLIENTS:
        first, whole = results[name]["first_token_ms"], results[name]["answer_ms"]
        lines.append(
            f"  {name:<22} first token {first['median']:.1f} / {first['p95']:.1f} ms, "
            f"answer {whole['median']:.1f} / {whole['p95']:.1f} ms ({first['n']} requests)"
        )
    return "\n".join(lines)
