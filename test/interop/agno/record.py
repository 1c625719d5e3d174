"""Record real agno + OpenInference traces as OTLP/JSON fixtures, with ground truth.

No network: every agent uses ScriptedModel, which replays a fixed list of model turns
(tool calls or text). Tools are real Python functions that log each call, so the
`*.truth.json` files say what actually ran, next to what agno's RunOutput reports.

Usage (outside the repo's node tooling):
    python3 -m venv /tmp/agno-venv
    /tmp/agno-venv/bin/pip install -r test/interop/agno/requirements.txt
    /tmp/agno-venv/bin/python test/interop/agno/record.py [out_dir]

out_dir defaults to test/fixtures/agno. CI never re-records; it reads the committed files.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import os
import sys
from collections import deque
from pathlib import Path
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

# agno phones home unless told not to; the recording must stay offline.
os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.base import Model  # noqa: E402
from agno.models.message import Message  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402
from agno.team import Team  # noqa: E402
from agno.tools import tool  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from openinference.instrumentation import TraceConfig  # noqa: E402
from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402
from openinference.instrumentation.agno._model_wrapper import _ModelWrapper  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from wrapt import wrap_function_wrapper  # noqa: E402

# ---------------------------------------------------------------------------
# Scripted model
# ---------------------------------------------------------------------------

# Turns live outside the model object because agno deep-copies models (Model.__deepcopy__)
# and a copied list would replay from the start.
SCRIPTS: Dict[str, deque] = {}
_CALL_SEQ = [0]


def script(model_id: str, turns: List[Dict[str, Any]]) -> "ScriptedModel":
    SCRIPTS[model_id] = deque(turns)
    return ScriptedModel(id=model_id, name="ScriptedModel", provider="scripted")


def _next_turn(model_id: str) -> ModelResponse:
    queue = SCRIPTS.get(model_id)
    if not queue:
        raise RuntimeError(f"script for {model_id} is exhausted")
    turn = queue.popleft()
    response = ModelResponse(role="assistant")
    if "tool_calls" in turn:
        calls = []
        for name, args in turn["tool_calls"]:
            _CALL_SEQ[0] += 1
            calls.append(
                {
                    "id": f"call_{_CALL_SEQ[0]:03d}",
                    "type": "function",
                    # A str is sent verbatim: that is how a model produces unparseable arguments.
                    "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
                }
            )
        response.tool_calls = calls
    if "content" in turn:
        response.content = turn["content"]
    return response


class ScriptedModel(Model):
    """A provider-less Model: `invoke` returns the next scripted turn as a ModelResponse,
    exactly what a real provider's `invoke` returns after `_parse_provider_response`."""

    def invoke(
        self,
        messages: List[Message],
        assistant_message: Message,
        response_format: Any = None,
        tools: Optional[List[Dict[str, Any]]] = None,
        tool_choice: Any = None,
        run_response: Any = None,
        compress_tool_results: bool = False,
    ) -> ModelResponse:
        return _next_turn(self.id)

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return _next_turn(self.id)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        yield _next_turn(self.id)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        yield _next_turn(self.id)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response


# ---------------------------------------------------------------------------
# Tools that log what really ran
# ---------------------------------------------------------------------------

EXECUTED: List[Dict[str, Any]] = []


def _log(name: str, args: Dict[str, Any], status: str, result: Any = None, error: Optional[str] = None) -> None:
    entry: Dict[str, Any] = {"name": name, "args": args, "status": status}
    if result is not None:
        entry["result"] = result
    if error is not None:
        entry["error"] = error
    EXECUTED.append(entry)


def get_weather(city: str) -> str:
    """Current weather for a city."""
    result = f"Sunny, 21C in {city}"
    _log("get_weather", {"city": city}, "ok", result)
    return result


def lookup_policy(topic: str) -> str:
    """Look up the company policy on a topic."""
    result = f"Policy on {topic}: 30 days"
    _log("lookup_policy", {"topic": topic}, "ok", result)
    return result


def search_flights(origin: str, destination: str, max_stops: int) -> str:
    """Find flights between two airports."""
    result = json.dumps([{"flight": "AF1234", "price": 180}])
    _log("search_flights", {"origin": origin, "destination": destination, "max_stops": max_stops}, "ok", result)
    return result


def book_flight(flight: str, passengers: int) -> str:
    """Book a flight."""
    result = f"Booked {flight} for {passengers}"
    _log("book_flight", {"flight": flight, "passengers": passengers}, "ok", result)
    return result


def notify_customer(message: str) -> str:
    """Send the customer a message."""
    _log("notify_customer", {"message": message}, "ok", "sent")
    return "sent"


def fetch_invoice(invoice_id: str) -> str:
    """Fetch an invoice by id."""
    message = f"invoice service unavailable for {invoice_id}"
    _log("fetch_invoice", {"invoice_id": invoice_id}, "error", error=message)
    raise ConnectionError(message)


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file (needs a human's confirmation)."""
    result = f"deleted {path}"
    _log("delete_file", {"path": path}, "ok", result)
    return result


# ---------------------------------------------------------------------------
# Ground truth from agno's own objects
# ---------------------------------------------------------------------------


def _tool_execution(t: Any) -> Dict[str, Any]:
    return {
        "tool_call_id": t.tool_call_id,
        "tool_name": t.tool_name,
        "tool_args": t.tool_args,
        "tool_call_error": t.tool_call_error,
        "is_paused": bool(t.is_paused),
        "requires_confirmation": t.requires_confirmation,
        "confirmed": t.confirmed,
        "result": t.result,
    }


def _message_tool_calls(messages: Optional[List[Message]]) -> List[Dict[str, Any]]:
    out = []
    for m in messages or []:
        for tc in m.tool_calls or []:
            fn = tc.get("function") or {}
            out.append(
                {
                    "id": tc.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments"),
                    "from_history": bool(m.from_history),
                }
            )
    return out


def run_output_truth(out: Any, top: bool = True) -> Dict[str, Any]:
    node: Dict[str, Any] = {
        "kind": "team" if hasattr(out, "member_responses") else "agent",
        "name": getattr(out, "team_name", None) or getattr(out, "agent_name", None),
        "id": getattr(out, "team_id", None) or getattr(out, "agent_id", None),
        "run_id": out.run_id,
        "status": getattr(out.status, "value", out.status),
        "is_paused": bool(out.is_paused),
        "content": out.content if isinstance(out.content, str) else None,
        "tools": [_tool_execution(t) for t in out.tools or []],
        "message_tool_calls": _message_tool_calls(out.messages),
    }
    if top:
        node["agno_evals"] = agno_evals(out)
    if hasattr(out, "member_responses"):
        node["members"] = [run_output_truth(m, top=False) for m in out.member_responses or []]
    return node


# ---------------------------------------------------------------------------
# agno's own verdicts on the same RunOutput (differential oracle for the TS scorers)
# ---------------------------------------------------------------------------


def _evidence_tools(out: Any) -> List[Any]:
    """agno ReliabilityEval's evidence order: the node's tools, then each member subtree."""
    tools = list(out.tools or [])
    for member in getattr(out, "member_responses", None) or []:
        tools.extend(_evidence_tools(member))
    return tools


def agno_evals(out: Any) -> List[Dict[str, Any]]:
    from dataclasses import asdict

    from agno.eval.reliability import ReliabilityEval
    from agno.scorer.tools import ToolCallScorer

    is_team = hasattr(out, "member_responses")
    union = _evidence_tools(out)
    names = list(dict.fromkeys(t.tool_name for t in union if t.tool_name))
    own = list(dict.fromkeys(t.tool_name for t in out.tools or [] if t.tool_name))
    first = union[0] if union else None
    reliability_configs: List[Dict[str, Any]] = [
        {"expected_tool_calls": names, "allow_additional_tool_calls": False},
        {"expected_tool_calls": [], "allow_additional_tool_calls": False},
        {"expected_tool_calls": [], "allow_additional_tool_calls": True},
        {"expected_tool_calls": ["never_called"], "allow_additional_tool_calls": True},
    ]
    tool_call_configs: List[Dict[str, Any]] = [{"expected_tools": ["never_called"], "allow_additional": True}]
    if first is not None:
        fargs = dict(first.tool_args or {})
        wrong = {k: "WRONG" for k in fargs} or {"x": "WRONG"}
        reliability_configs += [
            {"expected_tool_calls": [first.tool_name], "allow_additional_tool_calls": False},
            {"expected_tool_calls": [first.tool_name, "never_called"], "allow_additional_tool_calls": True},
            {"expected_tool_call_arguments": {first.tool_name: fargs}},
            {"expected_tool_call_arguments": {first.tool_name: [fargs, wrong]}},
        ]
    if own:
        oargs = dict((out.tools or [])[0].tool_args or {})
        tool_call_configs += [
            {"expected_tools": own, "allow_additional": True},
            {"expected_tools": own[:1], "allow_additional": False},
            {"expected_tools": [], "arguments": {own[0]: oargs}, "allow_additional": True},
        ]
    seen: set = set()
    reliability_configs = [
        c for c in reliability_configs if not (json.dumps(c, sort_keys=True) in seen or seen.add(json.dumps(c, sort_keys=True)))
    ]
    results = []
    for cfg in reliability_configs:
        kwargs = {"team_response": out} if is_team else {"agent_response": out}
        ev = ReliabilityEval(telemetry=False, show_spinner=False, **kwargs, **cfg)
        r = asdict(ev.run())
        r.pop("run_id", None)
        results.append({"kind": "reliability", "config": cfg, "result": r})
    for cfg in tool_call_configs:
        scorer = ToolCallScorer(cfg["expected_tools"], arguments=cfg.get("arguments"), allow_additional=cfg["allow_additional"])
        sc = scorer.score(out)
        results.append(
            {
                "kind": "tool_calls",
                "config": cfg,
                "result": {"value": sc.value, "passed": sc.passed, "reason": sc.reason},
                "digest": scorer.digest(),
            }
        )
    return results


# ---------------------------------------------------------------------------
# OTLP/JSON
# ---------------------------------------------------------------------------


def _b64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def _hexify(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                out[k] = _b64_to_hex(v)
            else:
                out[k] = _hexify(v)
        return out
    if isinstance(node, list):
        return [_hexify(v) for v in node]
    return node


def to_otlp_json(spans: List[Any]) -> Dict[str, Any]:
    # OTLP/JSON wants hex ids and integer enums; protobuf's JSON mapping gives base64 bytes.
    request = encode_spans(spans)
    return _hexify(MessageToDict(request, use_integers_for_enums=True))


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


def _text(s: str) -> Dict[str, Any]:
    return {"content": s}


def _calls(*pairs: Any) -> Dict[str, Any]:
    return {"tool_calls": list(pairs)}


def scenario_team_depth3() -> Dict[str, Any]:
    worker = Agent(
        id="weather-agent",
        name="Weather Agent",
        model=script("m-weather-agent", [_calls(("get_weather", {"city": "Paris"})), _text("Paris: sunny, 21C.")]),
        tools=[get_weather],
        telemetry=False,
    )
    inner = Team(
        id="research-team",
        name="Research Team",
        members=[worker],
        model=script(
            "m-research-team",
            [
                _calls(("delegate_task_to_member", {"member_id": "weather-agent", "task": "Weather in Paris"})),
                _text("The weather agent reports sunny, 21C in Paris."),
            ],
        ),
        store_member_responses=True,
        telemetry=False,
    )
    outer = Team(
        id="travel-desk",
        name="Travel Desk",
        members=[inner],
        tools=[lookup_policy, notify_customer],
        model=script(
            "m-travel-desk",
            [
                _calls(("lookup_policy", {"topic": "refunds"})),
                _calls(("delegate_task_to_member", {"member_id": "research-team", "task": "Find the Paris weather"})),
                # A leader call after the member team returned: the instrumentor leaks the member
                # team's span context (detach order), so this TOOL span's OTel parent is the member.
                _calls(("notify_customer", {"message": "Refunds: 30 days. Paris: sunny."})),
                _text("Refunds within 30 days; Paris is sunny."),
            ],
        ),
        store_member_responses=True,
        telemetry=False,
    )
    out = outer.run("Refund policy, and is it sunny in Paris?")
    return {"runs": [run_output_truth(out)]}


def scenario_team_depth3_async() -> Dict[str, Any]:
    """team_depth3 through Team.arun (async model calls, async delegate generator)."""
    worker = Agent(
        id="weather-agent",
        name="Weather Agent",
        model=script("m-weather-agent-a", [_calls(("get_weather", {"city": "Lima"})), _text("Lima: sunny.")]),
        tools=[get_weather],
        telemetry=False,
    )
    inner = Team(
        id="research-team",
        name="Research Team",
        members=[worker],
        model=script(
            "m-research-team-a",
            [
                _calls(("delegate_task_to_member", {"member_id": "weather-agent", "task": "Weather in Lima"})),
                _text("Lima is sunny."),
            ],
        ),
        store_member_responses=True,
        telemetry=False,
    )
    outer = Team(
        id="travel-desk",
        name="Travel Desk",
        members=[inner],
        tools=[lookup_policy, notify_customer],
        model=script(
            "m-travel-desk-a",
            [
                _calls(("lookup_policy", {"topic": "refunds"})),
                _calls(("delegate_task_to_member", {"member_id": "research-team", "task": "Find the Lima weather"})),
                _calls(("notify_customer", {"message": "Lima: sunny."})),
                _text("Lima is sunny."),
            ],
        ),
        store_member_responses=True,
        telemetry=False,
    )
    out = asyncio.run(outer.arun("Refund policy, and is it sunny in Lima?"))
    return {"runs": [run_output_truth(out)]}


def scenario_team_then_agent() -> Dict[str, Any]:
    """A sync Team run, then an unrelated Agent run on the same thread."""
    helper = Agent(
        id="helper-agent",
        name="Helper Agent",
        model=script("m-helper", [_calls(("get_weather", {"city": "Oslo"})), _text("Oslo: sunny.")]),
        tools=[get_weather],
        telemetry=False,
    )
    team = Team(
        id="front-desk",
        name="Front Desk",
        members=[helper],
        model=script(
            "m-front-desk",
            [
                _calls(("delegate_task_to_member", {"member_id": "helper-agent", "task": "Weather in Oslo"})),
                _text("Oslo is sunny."),
            ],
        ),
        store_member_responses=True,
        telemetry=False,
    )
    standalone = Agent(
        id="booking-agent",
        name="Booking Agent",
        model=script("m-standalone", [_calls(("book_flight", {"flight": "SK100", "passengers": 1})), _text("Done.")]),
        tools=[book_flight],
        telemetry=False,
    )
    team_out = team.run("Is it sunny in Oslo?")
    agent_out = standalone.run("Book SK100 for one")
    return {"runs": [run_output_truth(team_out), run_output_truth(agent_out)]}


def scenario_history() -> Dict[str, Any]:
    db = InMemoryDb()
    agent = Agent(
        id="weather-agent",
        name="Weather Agent",
        model=script(
            "m-history",
            [
                _calls(("get_weather", {"city": "Paris"})),
                _text("Paris is sunny."),
                _calls(("get_weather", {"city": "Rome"})),
                _text("Rome is sunny too."),
            ],
        ),
        tools=[get_weather],
        db=db,
        add_history_to_context=True,
        telemetry=False,
    )
    first = agent.run("Weather in Paris?", session_id="s-history")
    return {"first": first, "agent": agent}


def scenario_tool_error() -> Dict[str, Any]:
    agent = Agent(
        id="billing-agent",
        name="Billing Agent",
        model=script(
            "m-billing",
            [_calls(("fetch_invoice", {"invoice_id": "INV-42"})), _text("The invoice service is down.")],
        ),
        tools=[fetch_invoice],
        telemetry=False,
    )
    out = agent.run("Show invoice INV-42")
    return {"runs": [run_output_truth(out)]}


def scenario_paused() -> Dict[str, Any]:
    agent = Agent(
        id="files-agent",
        name="Files Agent",
        model=script(
            "m-files",
            [_calls(("delete_file", {"path": "/tmp/report.txt"})), _text("Deleted /tmp/report.txt.")],
        ),
        tools=[delete_file],
        db=InMemoryDb(),
        telemetry=False,
    )
    out = agent.run("Delete /tmp/report.txt", session_id="s-paused")
    return {"out": out, "agent": agent}


def scenario_paused_rejected() -> Dict[str, Any]:
    agent = Agent(
        id="files-agent",
        name="Files Agent",
        model=script(
            "m-files-rejected",
            [_calls(("delete_file", {"path": "/etc/hosts"})), _text("Understood, I did not delete /etc/hosts.")],
        ),
        tools=[delete_file],
        db=InMemoryDb(),
        telemetry=False,
    )
    paused = agent.run("Delete /etc/hosts", session_id="s-rejected")
    return {"out": paused, "agent": agent}


def scenario_tool_call_limit() -> Dict[str, Any]:
    """Two calls in one model turn with tool_call_limit=1: agno runs one, refuses the other."""
    agent = Agent(
        id="weather-agent",
        name="Weather Agent",
        model=script(
            "m-limit",
            [
                _calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})),
                _text("Paris is sunny; I could not check Rome."),
            ],
        ),
        tools=[get_weather],
        tool_call_limit=1,
        telemetry=False,
    )
    out = agent.run("Weather in Paris and Rome?")
    return {"runs": [run_output_truth(out)]}


def scenario_unknown_tool() -> Dict[str, Any]:
    """The model misspells a tool, agno answers with an error message, the model retries."""
    agent = Agent(
        id="weather-agent",
        name="Weather Agent",
        model=script(
            "m-unknown",
            [
                _calls(("get_wether", {"city": "Oslo"})),
                _calls(("get_weather", {"city": "Oslo"})),
                _text("Oslo is sunny."),
            ],
        ),
        tools=[get_weather],
        telemetry=False,
    )
    out = agent.run("Weather in Oslo?")
    return {"runs": [run_output_truth(out)]}


def scenario_invalid_args() -> Dict[str, Any]:
    """The model sends arguments that are not JSON, then retries with valid ones."""
    agent = Agent(
        id="weather-agent",
        name="Weather Agent",
        model=script(
            "m-invalid",
            [
                _calls(("get_weather", '{"city": "Oslo"')),
                _calls(("get_weather", {"city": "Oslo"})),
                _text("Oslo is sunny."),
            ],
        ),
        tools=[get_weather],
        telemetry=False,
    )
    out = agent.run("Weather in Oslo?")
    return {"runs": [run_output_truth(out)]}


def scenario_multi_step_stream() -> Dict[str, Any]:
    """multi_step through run(stream=True): run_stream and invoke_stream wrappers."""
    agent = Agent(
        id="booking-agent",
        name="Booking Agent",
        model=script(
            "m-booking-stream",
            [
                _calls(("search_flights", {"origin": "CDG", "destination": "FCO", "max_stops": 0})),
                _calls(("book_flight", {"flight": "AF1234", "passengers": 2})),
                _text("Booked AF1234 for 2."),
            ],
        ),
        tools=[search_flights, book_flight],
        telemetry=False,
    )
    final = None
    for item in agent.run("Book a nonstop CDG to FCO for two", stream=True, yield_run_output=True):
        final = item
    return {"runs": [run_output_truth(final)]}


def scenario_multi_step() -> Dict[str, Any]:
    agent = Agent(
        id="booking-agent",
        name="Booking Agent",
        model=script(
            "m-booking",
            [
                _calls(("search_flights", {"origin": "CDG", "destination": "FCO", "max_stops": 0})),
                _calls(("book_flight", {"flight": "AF1234", "passengers": 2})),
                _text("Booked AF1234 for 2."),
            ],
        ),
        tools=[search_flights, book_flight],
        telemetry=False,
    )
    out = agent.run("Book a nonstop CDG to FCO for two")
    return {"runs": [run_output_truth(out)]}


_MODEL_METHODS = {"invoke": "run", "invoke_stream": "run_stream", "ainvoke": "arun", "ainvoke_stream": "arun_stream"}


def instrument(provider: TracerProvider, config: Optional[TraceConfig] = None) -> AgnoInstrumentor:
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider, **({"config": config} if config else {}))
    # The instrumentor wraps only Model subclasses it finds inside the agno.models package;
    # apply its own wrapper to the scripted model the same way.
    model_wrapper = _ModelWrapper(tracer=instrumentor._tracer)
    for method, wrapper in _MODEL_METHODS.items():
        wrap_function_wrapper(ScriptedModel, method, getattr(model_wrapper, wrapper))
    return instrumentor


def uninstrument(instrumentor: AgnoInstrumentor) -> None:
    instrumentor.uninstrument()
    for method in _MODEL_METHODS:
        setattr(ScriptedModel, method, getattr(ScriptedModel, method).__wrapped__)


def scenario_masked() -> Dict[str, Any]:
    """ok, errored and limit-refused calls under OPENINFERENCE_HIDE_INPUTS/OUTPUTS."""
    agent = Agent(
        id="billing-agent",
        name="Billing Agent",
        model=script(
            "m-masked",
            [
                _calls(("get_weather", {"city": "Paris"})),
                _calls(("fetch_invoice", {"invoice_id": "INV-7"})),
                _calls(("book_flight", {"flight": "AF1", "passengers": 1})),
                _text("Done."),
            ],
        ),
        tools=[get_weather, fetch_invoice, book_flight],
        tool_call_limit=2,
        telemetry=False,
    )
    out = agent.run("Weather in Paris, invoice INV-7, weather in Rome")
    return {"runs": [run_output_truth(out)], "trace_config": {"hide_inputs": True, "hide_outputs": True}}


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "fixtures" / "agno"
    out_dir.mkdir(parents=True, exist_ok=True)

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "agno-fixtures"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = instrument(provider)

    versions = {}
    from importlib.metadata import version

    for pkg in ("agno", "openinference-instrumentation-agno", "opentelemetry-sdk"):
        versions[pkg] = version(pkg)

    def write(name: str, truth: Dict[str, Any]) -> None:
        spans = list(exporter.get_finished_spans())
        exporter.clear()
        truth = {"scenario": name, "versions": versions, "executed": list(EXECUTED), **truth}
        EXECUTED.clear()
        (out_dir / f"{name}.otlp.json").write_text(json.dumps(to_otlp_json(spans), indent=1) + "\n")
        (out_dir / f"{name}.truth.json").write_text(json.dumps(truth, indent=1, default=str) + "\n")
        print(f"{name}: {len(spans)} spans")

    # Each scenario runs in a fresh copy of the (clean) root context: a sync Team run leaves
    # its span attached to the context afterwards (see scenario_team_then_agent), which would
    # otherwise make every later scenario a child of the first team's span.
    def isolated(fn: Any, *args: Any) -> Any:
        return contextvars.copy_context().run(fn, *args)

    write("team_depth3", isolated(scenario_team_depth3))
    write("team_depth3_async", isolated(scenario_team_depth3_async))
    write("team_then_agent", isolated(scenario_team_then_agent))

    # history: only the second run's trace is the fixture; the first run is recorded as truth.
    h = isolated(scenario_history)
    first_truth = run_output_truth(h["first"])
    first_executed = list(EXECUTED)
    exporter.clear()
    EXECUTED.clear()
    second = isolated(lambda: h["agent"].run("And in Rome?", session_id="s-history"))
    write(
        "history",
        {
            "previous_run": {"run": first_truth, "executed": first_executed},
            "runs": [run_output_truth(second)],
        },
    )

    write("tool_error", isolated(scenario_tool_error))

    p = isolated(scenario_paused)
    paused_truth = run_output_truth(p["out"])
    write("paused", {"runs": [paused_truth]})
    # The continuation (confirm, then continue_run) is its own fixture: the instrumentor
    # version matters here.
    for requirement in p["out"].active_requirements:
        requirement.confirm()
    continued = isolated(
        lambda: p["agent"].continue_run(run_id=p["out"].run_id, requirements=p["out"].requirements, session_id="s-paused")
    )
    write("paused_continued", {"paused_run_id": p["out"].run_id, "runs": [run_output_truth(continued)]})

    write("multi_step", isolated(scenario_multi_step))

    # Rejected HITL: the paused run, then continue_run after reject(); only the continuation
    # is the fixture (the paused half looks exactly like `paused`).
    r = isolated(scenario_paused_rejected)
    rejected_paused_truth = run_output_truth(r["out"])
    exporter.clear()
    for requirement in r["out"].active_requirements:
        requirement.reject(note="Not allowed to touch /etc")
    rejected = isolated(
        lambda: r["agent"].continue_run(run_id=r["out"].run_id, requirements=r["out"].requirements, session_id="s-rejected")
    )
    write(
        "paused_rejected",
        {"paused_run_id": r["out"].run_id, "paused_run": rejected_paused_truth, "runs": [run_output_truth(rejected)]},
    )

    write("tool_call_limit", isolated(scenario_tool_call_limit))
    write("unknown_tool", isolated(scenario_unknown_tool))
    write("invalid_args", isolated(scenario_invalid_args))
    write("multi_step_stream", isolated(scenario_multi_step_stream))

    # Same instrumentor with inputs and outputs hidden (TraceConfig, as the
    # OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS environment variables set it).
    uninstrument(instrumentor)
    instrumentor = instrument(provider, TraceConfig(hide_inputs=True, hide_outputs=True))
    write("masked", isolated(scenario_masked))

    leftover = {k: len(v) for k, v in SCRIPTS.items() if v}
    if leftover:
        raise RuntimeError(f"unused scripted turns {leftover}")


if __name__ == "__main__":
    main()
