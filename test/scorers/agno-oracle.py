"""Run agno's own ReliabilityEval and ToolCallScorer on cases given as JSON lines.

Each input line: {"kind": "reliability" | "tool_calls", "run": <node>, "options": {...}}
where <node> = {"kind"?: "agent"|"team", "tools"?: [call|name] | null,
"requests"?: [[name, ...], ...], "historyRequests"?: [name, ...], "members"?: [node]}
and call = {"name", "state"?, "args"?} (states as in agno-cases.ts). Floats arrive as JSON
floats (1.0), so Python sees the same int/float split as toolwatch.

Each output line is the full result: ReliabilityResult fields, or Score fields plus
digest(), or {"error": "<Type>: <message>"} when agno raises.

Usage: <python with agno installed> test/scorers/agno-oracle.py < cases.jsonl
"""

import json
import os
import sys
from dataclasses import asdict

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.eval.reliability import ReliabilityEval  # noqa: E402
from agno.models.message import Message  # noqa: E402
from agno.models.response import ToolExecution  # noqa: E402
from agno.run.agent import RunOutput  # noqa: E402
from agno.run.team import TeamRunOutput  # noqa: E402
from agno.scorer.tools import ToolCallScorer  # noqa: E402

STATES = {
    "ok": {},
    "explicit-ok": {"tool_call_error": False},
    "err": {"tool_call_error": True},
    "paused": {"requires_confirmation": True},
    "hitl-approved": {"requires_confirmation": False, "confirmed": True, "tool_call_error": False},
    "hitl-rejected": {"requires_confirmation": False, "confirmed": False, "tool_call_error": True},
}


def execution(raw, i):
    call = {"name": raw} if isinstance(raw, str) else raw
    return ToolExecution(
        tool_call_id=f"call_{i}",
        tool_name=call["name"],
        tool_args=call.get("args"),
        **STATES[call.get("state", "ok")],
    )


def request_message(names, from_history):
    calls = [
        {"id": f"req_{j}", "type": "function", "function": {"name": n, "arguments": "{}"}}
        for j, n in enumerate(names)
    ]
    return Message(role="assistant", tool_calls=calls, from_history=from_history)


def build(node):
    tools = node.get("tools")
    execs = None if tools is None else [execution(t, i) for i, t in enumerate(tools)]
    messages = [request_message(node["historyRequests"], True)] if node.get("historyRequests") else []
    messages += [request_message(m, False) for m in node.get("requests") or []]
    common = {"tools": execs, "messages": messages or None}
    if node.get("kind") == "team":
        return TeamRunOutput(member_responses=[build(m) for m in node.get("members") or []], **common)
    return RunOutput(**common)


def run_case(case):
    run = build(case["run"])
    o = case["options"]
    try:
        if case["kind"] == "reliability":
            key = "team_response" if isinstance(run, TeamRunOutput) else "agent_response"
            ev = ReliabilityEval(
                expected_tool_calls=o.get("expected_tool_calls"),
                allow_additional_tool_calls=o.get("allow_additional_tool_calls", False),
                expected_tool_call_arguments=o.get("expected_tool_call_arguments"),
                telemetry=False,
                show_spinner=False,
                **{key: run},
            )
            result = asdict(ev._evaluate(run_id="oracle"))
            result.pop("run_id", None)
            return result
        scorer = ToolCallScorer(
            o["expected_tools"],
            arguments=o.get("arguments"),
            allow_additional=o.get("allow_additional", True),
        )
        score = scorer.score(run)
        return {"value": score.value, "passed": score.passed, "reason": score.reason, "digest": scorer.digest()}
    except Exception as exc:  # noqa: BLE001 - the oracle reports what agno raises
        return {"error": f"{type(exc).__name__}: {exc}"}


for line in sys.stdin:
    if line.strip():
        print(json.dumps(run_case(json.loads(line)), ensure_ascii=False))
