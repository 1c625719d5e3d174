/** One tool call the scripted model asks for. */
export interface ScriptedCall {
  id: string;
  name: string;
  args: unknown;
}

/** One model turn: either tool calls or a final text. */
export type ScriptedTurn = { calls: ScriptedCall[] } | { text: string };

export interface AgentScript {
  agent: string;
  parent: string | null;
  turns: ScriptedTurn[];
}

/**
 * The scripted models of one scenario. Each agent's model pulls its next turn from here, so the
 * script also knows which turns were really served (an aborted run serves fewer).
 */
export class Script {
  readonly agents: AgentScript[];
  private readonly _next = new Map<string, number>();
  /** Turns actually handed to a framework, per agent, in order. */
  readonly served = new Map<string, ScriptedTurn[]>();

  constructor(agents: AgentScript[]) {
    this.agents = agents;
  }

  /**
   * Forgets what was served so far (the turn position is kept): the ground truth then covers
   * only the runs after this point, e.g. the second turn of a conversation.
   */
  forgetServed(): void {
    this.served.clear();
  }

  next(agent: string): ScriptedTurn {
    const script = this.agents.find((a) => a.agent === agent);
    if (!script) throw new Error(`no script for agent ${agent}`);
    const i = this._next.get(agent) ?? 0;
    // A framework that asks for more turns than scripted gets a closing text, not a crash.
    const turn = script.turns[i] ?? { text: 'Done.' };
    this._next.set(agent, i + 1);
    const served = this.served.get(agent) ?? [];
    served.push(turn);
    this.served.set(agent, served);
    return turn;
  }
}

export function isCallTurn(turn: ScriptedTurn): turn is { calls: ScriptedCall[] } {
  return 'calls' in turn;
}
