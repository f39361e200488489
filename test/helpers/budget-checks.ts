/**
 * The budget guarantee as tests check it (spec 011, spec 023): an assembled context is within its budget, recounted as
 * sent with a real tokenizer, or, where the budget cannot hold it, the memory floor alone within its allowance (the
 * floor's one line whatever the allowance).
 */
import { expect } from "vitest";
import { lineFloorTokens, MEMORY_FLOOR_TOKENS } from "../../src/assembly/memory-floor.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { sentTokens } from "./sent-tokens.js";

/**
 * Within `budget`, or, beyond it, the memory floor alone within its allowance (the floor's line whatever the allowance).
 */
export function expectWithinBudgetOrFloor(
  result: { messages: AgentMessage[]; estimatedTokens: number }, budget: number, floorAllowance: number, storedMessages: number, label: string,
): void {
  if (result.estimatedTokens <= budget) {
    // What is sent, recounted with a real tokenizer (summary XML included), fits too.
    expect(sentTokens(result), `${label}, recounted`).toBeLessThanOrEqual(budget);
    return;
  }
  expect(result.messages, `${label}: over its budget, so the floor alone`).toHaveLength(1);
  expect(String(result.messages[0]!.content), label).toMatch(/^<earlier_history>/);
  const line = lineFloorTokens(storedMessages, new DefaultTokenEstimator());
  expect(result.estimatedTokens, label).toBeLessThanOrEqual(Math.max(line, Math.min(MEMORY_FLOOR_TOKENS, floorAllowance)));
}
