/**
 * Where bootstrap reads the host's transcript from. OpenClaw 2026.9.6 keeps transcripts in its own SQLite
 * store (bootstrap's `sessionFile` is then the session key, not a path) and exposes an append-stable, paged
 * reader in `openclaw/plugin-sdk/session-transcript-runtime`. The SDK is imported lazily, only when bootstrap
 * needs it, so the plugin never loads OpenClaw at module load and still works on hosts without it.
 */
import type { AgentMessage } from "../host/openclaw-types.js";

export interface TranscriptScope {
  agentId: string;
  sessionId: string;
  sessionKey?: string;
}

export type TranscriptPage =
  /** `requiredBytes`: the next message alone is larger than the page's byte limit (the page is then empty). */
  | { kind: "page"; messages: AgentMessage[]; cursor: string; hasMore: boolean; requiredBytes?: number }
  /** The cursor no longer applies (new generation, rewritten history): read again from `cursor`. */
  | { kind: "reset"; cursor: string; reason: string }
  | { kind: "missing" | "unavailable"; reason: string };

/** Contract: reads one bounded page after `cursor` (from the start when undefined); may reject. */
export interface TranscriptSource {
  readPage(scope: TranscriptScope, cursor: string | undefined, maxMessages: number, maxBytes?: number): Promise<TranscriptPage>;
}

const SDK_MODULE = "openclaw/plugin-sdk/session-transcript-runtime";

interface SdkDeltaResult {
  kind?: string;
  cursor?: string;
  hasMore?: boolean;
  requiredBytes?: number;
  reason?: string;
  entries?: { message?: AgentMessage }[];
}

interface SessionTranscriptSdk {
  readSessionTranscriptVisibleMessageDelta(
    params: TranscriptScope & { cursor?: string; maxMessages?: number; maxBytes?: number },
  ): Promise<SdkDeltaResult>;
}

/** A reader that can tell, before reading, whether it works here (OpenClaw's SDK is loadable). */
export interface ProbedTranscriptSource extends TranscriptSource {
  /** Contract: never rejects; false when every page would answer "unavailable". */
  isAvailable(): Promise<boolean>;
}

/** The OpenClaw SDK reader; resolves to "unavailable" pages when the SDK cannot be loaded. */
export function openClawTranscriptSource(): ProbedTranscriptSource {
  let sdk: Promise<SessionTranscriptSdk | null> | undefined;
  const load = () => {
    sdk ??= (import(SDK_MODULE as string) as Promise<SessionTranscriptSdk>).then(
      (module) => (typeof module.readSessionTranscriptVisibleMessageDelta === "function" ? module : null),
      () => null,
    );
    return sdk;
  };
  return {
    isAvailable: async () => (await load()) !== null,
    async readPage(scope, cursor, maxMessages, maxBytes) {
      const module = await load();
      if (!module) return { kind: "unavailable", reason: `${SDK_MODULE} is not available in this host` };
      const result = await module.readSessionTranscriptVisibleMessageDelta({
        ...scope,
        ...(cursor === undefined ? {} : { cursor }),
        maxMessages,
        ...(maxBytes === undefined ? {} : { maxBytes }),
      });
      if (result.kind === "page" && typeof result.cursor === "string") {
        const messages = (result.entries ?? []).flatMap((entry) => (entry.message ? [entry.message] : []));
        const requiredBytes = typeof result.requiredBytes === "number" ? { requiredBytes: result.requiredBytes } : {};
        return { kind: "page", messages, cursor: result.cursor, hasMore: result.hasMore === true, ...requiredBytes };
      }
      if (result.kind === "reset" && typeof result.cursor === "string") {
        return { kind: "reset", cursor: result.cursor, reason: result.reason ?? "reset" };
      }
      return { kind: result.kind === "missing" ? "missing" : "unavailable", reason: result.reason ?? String(result.kind) };
    },
  };
}
