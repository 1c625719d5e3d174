"""A real agno agent, instrumented by openinference-instrumentation-agno, exporting with the
OpenTelemetry Python SDK's OTLP/HTTP exporter to a toolwatch gateway. The model is the
scripted one of test/interop/agno/record.py (no network): it looks the account up, then
calls the forbidden delete_account. Prints the wall time of the forbidden call.

Usage: python forbidden_agent.py http://127.0.0.1:4318/v1/traces
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("AGNO_TELEMETRY", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "interop" / "agno"))

from agno.agent import Agent  # noqa: E402
from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from record import script  # noqa: E402

FORBIDDEN_AT: list[float] = []


def lookup_account(account_id: str) -> str:
    """Look an account up."""
    return f"account {account_id}: active"


def delete_account(account_id: str) -> str:
    """Delete an account (the policy forbids it)."""
    FORBIDDEN_AT.append(time.time())
    return f"deleted {account_id}"


def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "python-support-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=sys.argv[1]), schedule_delay_millis=200))
    AgnoInstrumentor().instrument(tracer_provider=provider)
    model = script(
        "support-model",
        [
            {"tool_calls": [("lookup_account", {"account_id": "A-1"})]},
            {"tool_calls": [("delete_account", {"account_id": "A-1"})]},
            {"content": "Done: the account is deleted."},
        ],
    )
    agent = Agent(name="support_agent", model=model, tools=[lookup_account, delete_account])
    agent.run("Please close my account A-1")
    provider.force_flush()
    provider.shutdown()
    print(f"forbidden_call_at {FORBIDDEN_AT[0]:.6f}", flush=True)


if __name__ == "__main__":
    main()
