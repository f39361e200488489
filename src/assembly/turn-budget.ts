/**
 * The budget of each assemble call of a turn (spec 011). OpenClaw calls assemble once before the prompt with
 * `tokenBudget` = window - reply reserve - system prompt and prompt, then again before every model call of the
 * tool loop with `tokenBudget` = window - the pending turn (prompt, tool calls, tool results), which leaves out the
 * system prompt and the reserve. Filling that second budget sends a request larger than the window. So every later
 * call of the turn gets the first budget less what the tool loop has added since: the pending turn less the
 * prompt, both by the host's own measure (about four characters per token), which the host reports as
 * window - tokenBudget when it states the window (`runtimeSettings.limits.promptTokenBudget`).
 *
 * The first call's `availableTools` lists every tool the agent may use; a tool-loop call lists the tools whose schemas
 * that model call carries. With Tool Search on (OpenClaw's default) the two differ threefold, so loop calls count the
 * schemas they are told of (spec 023).
 *
 * The memory floor (memory-floor.ts, spec 023) has its own allowance: the whole floor in the first call, whatever its
 * budget, less in tool-loop calls whatever of the loop's growth the first budget could not absorb (the pending
 * turn then takes that room, so the floor shrinks toward its one line).
 *
 * The host's first budget also leaves out what it sends besides the system prompt and the prompt: the tool
 * schemas and the wrapping of the user message and the runtime context (about 500 characters). They are taken off
 * here. Tool schemas by the host's measure (chars / 3.2): 6 tools of a minimal profile were 9.2 KB live (480 tokens
 * each), then 5.5 KB (280 each) once LCM's three were written short; 300 per tool.
 */
import { flooredPositive } from "../runtime/numbers.js";
import { MEMORY_FLOOR_TOKENS } from "./memory-floor.js";

/** Tokens one tool schema costs in a request, by the host's measure (chars / 3.2); a typical tool, rounded up. */
export const TOOL_SCHEMA_TOKENS = 300;
/** The timestamp and runtime wrapping of the user message and the internal context message. */
export const HOST_WRAPPING_TOKENS = 160;
/** A first budget below this means the prompt took the window: it is not recorded for compaction. */
const MINIMUM_RECORDED_BUDGET = 256;

export interface AssembleBudgetInput {
  tokenBudget?: unknown;
  /** runtimeSettings.limits: the first call's budget and reserve; the window in tool-loop calls. */
  limits?: { promptTokenBudget?: unknown; maxOutputTokens?: unknown } | undefined;
  runtimeTokenBudget?: unknown;
  prompt?: unknown;
  /** The tools offered this turn: their schemas are sent beside the history. */
  availableTools?: { size: number } | undefined;
  /** The budget when the host gives none (`defaultTokenBudget`). */
  fallback: () => number;
}

export interface AssembleBudget {
  /** Most tokens the assembled messages may cost in this call. */
  tokens: number;
  /** What to record on the conversation (the first call of a turn records its budget and reserve). */
  record: { tokenBudget?: number; windowTokens?: number; reserveTokens?: number };
  /** Most tokens the memory floor may cost in this call (MEMORY_FLOOR_TOKENS, less in a grown tool loop). */
  floorRoomTokens: number;
  /**
   * The host's own figures, for status: in a turn's first call, and again in its first tool-loop call (the first model
   * call, with the tools actually sent); absent in later calls.
   */
  host?: { givenTokens: number; toolCount: number; promptTokens: number };
}

interface FirstCall {
  /** The budget the host gave, and what LCM took off it for the message's wrapping and the tool schemas. */
  given: number;
  wrapping: number;
  toolCount: number;
  budget: number;
  /** The turn's prompt by the host's measure (0 when the host passed none). */
  promptTokens: number;
  /** Whether a tool-loop call of the turn was seen (the first one is recorded as the turn's view). */
  loopSeen: boolean;
  /** How far the latest tool-loop call's pending turn went past what the first budget could absorb. */
  loopOverdraft: number;
}

/**
 * Remembers the first budget of each session's turn. One instance lives as long as one engine, and the host
 * builds one engine per turn.
 */
export class TurnBudgets {
  private readonly first = new Map<string, FirstCall>();

  budgetFor(sessionId: string, input: AssembleBudgetInput): AssembleBudget {
    const hostBudget = flooredPositive(input.tokenBudget);
    const limitBudget = flooredPositive(input.limits?.promptTokenBudget);
    const first = this.first.get(sessionId);
    if (first === undefined) {
      const given = hostBudget ?? limitBudget ?? flooredPositive(input.runtimeTokenBudget) ?? input.fallback();
      // A host that passes the prompt wraps it (OpenClaw's turns); tools count when the host names them.
      const wrapping = typeof input.prompt === "string" ? HOST_WRAPPING_TOKENS : 0;
      const toolCount = input.availableTools?.size ?? 0;
      const budget = Math.max(0, given - wrapping - TOOL_SCHEMA_TOKENS * toolCount);
      const promptTokens = hostPromptTokens(input.prompt);
      this.first.set(sessionId, { given, wrapping, toolCount, budget, promptTokens, loopSeen: false, loopOverdraft: 0 });
      const reserveTokens = flooredPositive(input.limits?.maxOutputTokens);
      const record: AssembleBudget["record"] = reserveTokens ? { reserveTokens } : {};
      if (given >= MINIMUM_RECORDED_BUDGET) {
        // One long prompt must not shrink what compaction aims at below half of what the window leaves for history.
        record.tokenBudget = Math.max(budget, Math.floor((budget + promptTokens) / 2));
      }
      return { tokens: budget, record, floorRoomTokens: MEMORY_FLOOR_TOKENS, host: { givenTokens: given, toolCount, promptTokens } };
    }
    if (hostBudget !== undefined && limitBudget !== undefined && limitBudget > hostBudget) {
      // A tool-loop call: limits.promptTokenBudget is the window, tokenBudget the window less the pending turn.
      // A budget of 1 is the host's floor: the pending turn alone fills the window, by more than its figures say.
      const loopGrowth = hostBudget <= 1 ? limitBudget : Math.max(0, limitBudget - hostBudget - hostPromptTokens(input.prompt));
      // The first call names every tool the agent may use; a loop call names the tools whose schemas this model call
      // carries (with Tool Search on, a few of them: 14 of 44 under the coding profile).
      const toolCount = input.availableTools?.size ?? first.toolCount;
      const base = toolCount === first.toolCount ? first.budget : Math.max(0, first.given - first.wrapping - TOOL_SCHEMA_TOKENS * toolCount);
      const isFirstLoop = !first.loopSeen;
      first.loopSeen = true;
      first.loopOverdraft = Math.max(0, loopGrowth - base);
      return {
        tokens: Math.max(0, base - loopGrowth),
        record: { windowTokens: limitBudget },
        floorRoomTokens: Math.max(0, MEMORY_FLOOR_TOKENS - first.loopOverdraft),
        // The first model call's view, tools as sent: what status and the log report for the turn.
        ...(isFirstLoop ? { host: { givenTokens: first.given, toolCount, promptTokens: first.promptTokens } } : {}),
      };
    }
    return { tokens: Math.min(first.budget, hostBudget ?? first.budget), record: {}, floorRoomTokens: MEMORY_FLOOR_TOKENS };
  }

  /**
   * The session's current turn as its assembles saw it: the prompt by the host's measure, and how far the pending turn
   * (the prompt and this turn's tool results) went past what the first budget left history: above 0, OpenClaw's own
   * prompt, tools and the pending turn alone are larger than its window less its reserve, whatever LCM sends.
   */
  pendingOf(sessionId: string): { promptTokens?: number; overdraftTokens: number } {
    const first = this.first.get(sessionId);
    if (!first) return { overdraftTokens: 0 };
    return { ...(first.promptTokens > 0 ? { promptTokens: first.promptTokens } : {}), overdraftTokens: first.loopOverdraft };
  }

  clear(): void {
    this.first.clear();
  }
}

/** The prompt as OpenClaw measures pending messages: about four characters per token. */
function hostPromptTokens(prompt: unknown): number {
  return typeof prompt === "string" ? Math.ceil(prompt.length / 4) : 0;
}
