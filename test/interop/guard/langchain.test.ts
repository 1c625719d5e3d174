import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as callbackManager from '@langchain/core/callbacks/manager';
import { type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, createMiddleware } from 'langchain';
import { describe, it } from 'vitest';
import { toolwatchWrapToolCall } from '../../../src/guard/adapters/langchain.js';
import { createCapture, settle } from '../harness/capture.js';
import { toMessage, weatherTools } from '../harness/langchain.js';
import { WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { expectGuarded } from './expect-guarded.js';
import { GUARD_CASES, runGuarded } from './guarded-run.js';

describe('LangChain: a createMiddleware wrapToolCall', () => {
  it.each(GUARD_CASES)(
    'answers the %s call with a ToolMessage; the model reads it and answers',
    async (check) => {
      const run = await runGuarded(
        'langchain',
        async ({ policy, spanProcessors, script, recorder }) => {
          const capture = createCapture(spanProcessors);
          const instrumentation = new LangChainInstrumentation({ tracerProvider: capture.provider });
          instrumentation.manuallyInstrument(callbackManager);
          const inputs: string[] = [];
          const model = fakeModel();
          for (let i = 0; i < 3; i++) {
            model.respond((messages: BaseMessage[]) => {
              inputs.push(JSON.stringify(messages.map((m) => ({ type: m.type, content: m.content }))));
              // As ChatOpenAI returns it: the OpenInference tracer reads tool calls from additional_kwargs.
              return toMessage(script.next(WEATHER_AGENT));
            });
          }
          const agent = createAgent({
            model,
            name: WEATHER_AGENT,
            tools: weatherTools(recorder, WEATHER_AGENT),
            middleware: [
              createMiddleware({
                name: 'toolwatch',
                wrapToolCall: toolwatchWrapToolCall(policy, { ToolMessage }),
              }),
            ],
          });
          const result = await agent.invoke({
            messages: [{ role: 'user', content: 'What is the weather in Paris, in °F?' }],
          });
          await settle();
          const last = result.messages.at(-1)!;
          instrumentation.disable();
          return { spans: await capture.finish(), modelInputs: inputs, text: String(last.content) };
        },
        check,
      );
      expectGuarded(run, { viaProcessor: false });
    },
    60_000,
  );
});
