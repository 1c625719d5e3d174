"""A real agno agent guarded by examples/python/toolwatch_guard.py: agno's tool_hooks ask the
toolwatch gateway before each call, and the run's spans are exported to the same gateway
(openinference-instrumentation-agno, OTLP/HTTP). The scripted model of
test/interop/agno/record.py looks the account up, asks for the forbidden delete_account, then
answers. Prints one JSON line: what ran, what the model saw last, the answer, the trace id.

Usage: python guarded_agent.py http://127.0.0.1:4318 [token]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("AGNO_TELEMETRY", "false")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "test" / "interop" / "agno"))
sys.path.insert(0, str(ROOT / "examples" / "python"))

from agno.agent import Agent  # noqa: E402
from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from record import ScriptedModel, script  # noqa: E402
from toolwatch_guard import toolwatch_guard  # noqa: E402

EXECUTED: list[str] = []
SEEN: list[list[str]] = []


def lookup_account(account_id: str) -> str:
    """Look an account up."""
    EXECUTED.append("lookup_account")
    return f"account {account_id}: active"


def delete_account(account_id: str) -> str:
    """Delete an account (the policy forbids it)."""
    EXECUTED.append("delete_account")
    return f"deleted {account_id}"


# What the model receives on each call: the messages' contents, as the provider would get them.
_invoke = ScriptedModel.invoke


def _recording_invoke(self, messages, *args, **kwargs):
    SEEN.append([str(m.content) for m in messages])
    return _invoke(self, messages, *args, **kwargs)


ScriptedModel.invoke = _recording_invoke


def main() -> None:
    gateway = sys.argv[1]
    token = sys.argv[2] if len(sys.argv) > 2 else None
    headers = {"authorization": f"Bearer {token}"} if token else {}
    provider = TracerProvider(resource=Resource.create({"service.name": "python-support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{gateway}/v1/traces", headers=headers)))
    AgnoInstrumentor().instrument(tracer_provider=provider)
    model = script(
        "support-model",
        [
            {"tool_calls": [("lookup_account", {"account_id": "A-1"})]},
            {"tool_calls": [("delete_account", {"account_id": "A-1"})]},
            {"content": "I cannot delete the account; it stays active."},
        ],
    )
    trace_ids: list[str] = []

    def remember_trace(function_name, function_call, arguments):
        trace_ids.append(format(trace.get_current_span().get_span_context().trace_id, "032x"))
        return function_call(**arguments)

    agent = Agent(
        name="support_agent",
        model=model,
        tools=[lookup_account, delete_account],
        tool_hooks=[remember_trace, toolwatch_guard(gateway, token=token)],
    )
    output = agent.run("Please close my account A-1")
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({"executed": EXECUTED, "seen": SEEN, "content": output.content, "trace_ids": trace_ids}), flush=True)


if __name__ == "__main__":
    main()
