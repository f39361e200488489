/**
 * TextCompletion over the host's `api.runtime.llm.complete` (OpenClaw's plugin LLM access), so text files are
 * explored by the session's configured model. A model override is passed only when configured: OpenClaw
 * refuses overrides unless the operator allowed them for this plugin.
 */
import type { HostLlm } from "../host/openclaw-types.js";
import type { TextCompletion, TextCompletionRequest } from "./text-explorer.js";

export function hostTextCompletion(llm: HostLlm, model?: string): TextCompletion {
  return {
    async complete(request: TextCompletionRequest, signal: AbortSignal): Promise<string> {
      const result = await llm.complete({
        messages: [{ role: "user", content: request.prompt }],
        systemPrompt: request.systemPrompt,
        maxTokens: request.maxTokens,
        purpose: request.purpose,
        signal,
        ...(model ? { model } : {}),
      });
      return typeof result?.text === "string" ? result.text : "";
    },
  };
}
