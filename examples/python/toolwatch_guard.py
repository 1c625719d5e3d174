"""A toolwatch guard for agno agents: an agno tool hook that asks a toolwatch gateway
(`POST /v1/guard`) before every tool call, and answers a refused call with the reason
instead of running the tool.

    from toolwatch_guard import toolwatch_guard
    agent = Agent(..., tool_hooks=[toolwatch_guard("http://127.0.0.1:4318")])

The run is identified by the current OpenTelemetry trace id (the agent run's trace, as
openinference-instrumentation-agno exports it), else by agno's run id. On a deny the hook
writes the decision on the current span (toolwatch.guard.* attributes and a
`gen_ai.tool.call.decision` event), so the trace the gateway judges records a refused call as
refused, not executed.

Standard library only (plus opentelemetry-api when installed).
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Dict, Optional

try:
    from opentelemetry import trace as _otel_trace
except ImportError:  # the hook still guards, keyed by agno's run id
    _otel_trace = None

_log = logging.getLogger("toolwatch.guard")


def toolwatch_guard(
    gateway: str,
    *,
    token: Optional[str] = None,
    timeout: float = 2.0,
    fail_closed: bool = False,
    message: Optional[Callable[[str, Dict[str, Any]], str]] = None,
) -> Callable[..., Any]:
    """An agno tool hook guarding every tool call through the gateway at `gateway`
    (its OTLP/HTTP address, e.g. http://127.0.0.1:4318).

    token: the gateway's bearer token (`toolwatch serve --token`). Default none.
    timeout: seconds to wait for a decision. Default 2.
    fail_closed: when the gateway cannot be reached or answers with an error, refuse the call
        (True) or run it (False, the default: an outage of the guard must not stop every agent;
        the verdict on the exported trace still judges the call).
    message: the text the model receives for a refused call, from the tool name and the
        decision. Default "Refused by policy: the <tool> call was not run (<reasons>)."
    """
    url = gateway.rstrip("/") + "/v1/guard"

    def hook(function_name: str, function_call: Callable[..., Any], arguments: Dict[str, Any], agent: Any = None, team: Any = None, run_context: Any = None) -> Any:
        body = {
            "trace_id": _trace_id(run_context),
            "agent": _name(agent) or _name(team) or "agent",
            "tool": function_name,
            "arguments": arguments or {},
        }
        decision = _ask(url, body, token, timeout)
        if decision is None:
            if not fail_closed:
                return function_call(**arguments)
            decision = {"allowed": False, "decision": "deny", "enforced": True, "reasons": ["the toolwatch guard could not be reached"]}
        _record_decision(function_name, decision)
        if decision.get("allowed", True):
            return function_call(**arguments)
        if message is not None:
            return message(function_name, decision)
        reasons = "; ".join(decision.get("reasons") or []) or "denied by policy"
        return f"Refused by policy: the {function_name} call was not run ({reasons})."

    return hook


def _ask(url: str, body: Dict[str, Any], token: Optional[str], timeout: float) -> Optional[Dict[str, Any]]:
    """The gateway's decision, or None when it cannot be had (logged, never raised)."""
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        detail = err.read().decode("utf-8", "replace")
        _log.warning("toolwatch guard answered %s for %s: %s", err.code, body["tool"], detail)
    except Exception as err:  # unreachable, timeout, not JSON
        _log.warning("toolwatch guard unavailable for %s: %s", body["tool"], err)
    return None


def _trace_id(run_context: Any) -> str:
    if _otel_trace is not None:
        context = _otel_trace.get_current_span().get_span_context()
        if context.is_valid:
            return format(context.trace_id, "032x")
    run_id = getattr(run_context, "run_id", None)
    try:
        return uuid.UUID(str(run_id)).hex
    except ValueError:
        return uuid.uuid4().hex


def _name(owner: Any) -> Optional[str]:
    return getattr(owner, "name", None) or getattr(owner, "id", None)


def _record_decision(tool: str, decision: Dict[str, Any]) -> None:
    """A deny (refused, or only observed) on the current span, the tool's under agno's
    instrumentation, in the attributes toolwatch's reconstruction reads: the trace the gateway
    judges then counts a refused call as refused, never executed."""
    if _otel_trace is None or decision.get("decision") != "deny":
        return
    span = _otel_trace.get_current_span()
    if not span.is_recording():
        return
    refused = not decision.get("allowed", True)
    attributes = {
        "toolwatch.guard.decision": "deny",
        "toolwatch.guard.enforced": bool(decision.get("enforced")),
        "toolwatch.guard.reason": "; ".join(decision.get("reasons") or []),
    }
    for key in ("rule", "kind"):
        if decision.get(key):
            attributes[f"toolwatch.guard.{key}"] = decision[key]
    span.set_attributes(attributes)
    span.add_event(
        "gen_ai.tool.call.decision",
        {"gen_ai.tool.call.decision.outcome": "deny" if refused else "allow", "gen_ai.tool.name": tool},
    )
