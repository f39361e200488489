/**
 * Backfill from OpenClaw (`lcm import openclaw`): every session in the host's state folder is read with bootstrap's
 * own importer (engine/transcript-import.ts), so history from before the plugin was installed is stored, searchable
 * and deduplicated exactly as bootstrap would have stored it. Sessions are found in each agent's session index
 * (`<state>/agents/<agent>/sessions/sessions.json`: session key → session id, transcript file) and among the
 * transcript files beside it (`<sessionId>.jsonl`, sessions no longer in the index). A session whose transcript is
 * in the host's own store rather than a file is read through the host's transcript reader, when there is one.
 *
 * Resumable: each conversation's bootstrap cursor (byte offset or host cursor) records how far it was read, so a run
 * that stops part-way continues there, and a finished session costs one stat. Writes go through appendMessages, in
 * chunks of a few hundred messages per transaction with the event loop running between them.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, isAbsolute, join } from "node:path";
import { describeError } from "../errors.js";
import { importTranscript, type TranscriptImportDeps } from "../engine/transcript-import.js";
import type { SessionFilter } from "../engine/session-filter.js";
import type { BootstrapState } from "../records.js";

/** One session of the host. `transcriptFile` is null when its transcript is only in the host's store. */
export interface HostSession {
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  transcriptFile: string | null;
}

export type BackfillStatus = "imported" | "up-to-date" | "ignored" | "empty" | "unavailable" | "failed";

export interface SessionBackfill {
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  source: "file" | "host" | null;
  conversationId: number | null;
  status: BackfillStatus;
  imported: number;
  note: string | null;
}

export interface BackfillDeps extends TranscriptImportDeps {
  filter: Pick<SessionFilter, "treatmentOf">;
}

/** Every session under `stateDir` (optionally one agent's), agents and sessions in name order. */
export async function listHostSessions(stateDir: string, agentId?: string): Promise<HostSession[]> {
  const agentsDirectory = join(stateDir, "agents");
  const agents = agentId !== undefined ? [agentId] : (await directoryNames(agentsDirectory)).sort();
  const sessions: HostSession[] = [];
  for (const agent of agents) {
    const directory = join(agentsDirectory, agent, "sessions");
    const index = await readSessionIndex(join(directory, "sessions.json"));
    const indexedFiles = new Set<string>();
    const seen = new Set<string>();
    for (const [sessionKey, entry] of index) {
      if (seen.has(entry.sessionId)) continue;
      seen.add(entry.sessionId);
      const candidates = [
        ...(entry.sessionFile ? [isAbsolute(entry.sessionFile) ? entry.sessionFile : join(directory, entry.sessionFile)] : []),
        join(directory, `${entry.sessionId}.jsonl`),
      ];
      const transcriptFile = candidates.find((file) => existsSync(file)) ?? null;
      if (transcriptFile) indexedFiles.add(transcriptFile);
      sessions.push({ agentId: agent, sessionId: entry.sessionId, sessionKey, transcriptFile });
    }
    // Transcripts of sessions the index no longer names (an earlier session of a key, before /new).
    const files = (await fileNames(directory)).filter((name) => name.endsWith(".jsonl")).sort();
    for (const name of files) {
      const file = join(directory, name);
      const sessionId = basename(name, ".jsonl");
      if (indexedFiles.has(file) || seen.has(sessionId)) continue;
      seen.add(sessionId);
      sessions.push({ agentId: agent, sessionId, sessionKey: null, transcriptFile: file });
    }
  }
  return sessions;
}

/**
 * Imports one session completely (bootstrap reads a bounded amount per call; this calls it until the transcript is
 * read to its end or stops making progress). Contract: never throws; a failure is reported in the result.
 */
export async function backfillSession(session: HostSession, deps: BackfillDeps): Promise<SessionBackfill> {
  const result: SessionBackfill = {
    agentId: session.agentId, sessionId: session.sessionId, sessionKey: session.sessionKey,
    source: session.transcriptFile ? "file" : deps.transcriptSource ? "host" : null, conversationId: null, status: "up-to-date", imported: 0, note: null,
  };
  if (deps.filter.treatmentOf(session.sessionKey ?? undefined) !== "store") {
    return { ...result, status: "ignored", note: "the session's key matches ignoreSessionPatterns or statelessSessionPatterns" };
  }
  if (result.source === null) {
    return { ...result, status: "unavailable", note: "no transcript file, and the host's transcript reader is not available here (run it as `openclaw lcm import openclaw`)" };
  }
  try {
    const existing = await deps.store.findConversation({ agentId: session.agentId, sessionId: session.sessionId });
    if (!existing && session.transcriptFile && (await stat(session.transcriptFile)).size === 0) return { ...result, status: "empty" };
    let conversation = existing ?? await deps.store.getOrCreateConversation(
      { agentId: session.agentId, sessionId: session.sessionId, ...(session.sessionKey ? { sessionKey: session.sessionKey } : {}) }, deps.clock.now(),
    );
    result.conversationId = conversation.conversationId;
    for (;;) {
      const before = cursorOf(conversation.bootstrapState);
      const step = await importTranscript(conversation, session.transcriptFile ?? undefined, deps);
      result.imported += step.imported;
      conversation = (await deps.store.getConversation(conversation.conversationId)) ?? conversation;
      const advanced = cursorOf(conversation.bootstrapState) !== before;
      if (!step.note) break;
      if (!advanced || !/follows on later turns/.test(step.note)) {
        result.note = step.note;
        if (!advanced && result.imported === 0) result.status = "unavailable";
        break;
      }
    }
    if (result.status === "up-to-date" && result.imported > 0) result.status = "imported";
    return result;
  } catch (error) {
    return { ...result, status: "failed", note: describeError(error) };
  }
}

function cursorOf(state: BootstrapState | null): string {
  if (state === null) return "";
  return state.source === "file" ? `${state.file}:${state.offset}:${state.size}` : `host:${state.cursor}`;
}

async function readSessionIndex(path: string): Promise<[string, { sessionId: string; sessionFile?: string }][]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return []; // no index for this agent: its transcript files alone name its sessions
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`The OpenClaw session index ${path} is not valid JSON (${describeError(error)}); fix it or pass --agent to skip that agent.`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return [];
  return Object.entries(parsed as Record<string, unknown>).flatMap(([key, value]) => {
    const entry = value as { sessionId?: unknown; sessionFile?: unknown } | null;
    if (!entry || typeof entry.sessionId !== "string" || entry.sessionId === "") return [];
    return [[key, { sessionId: entry.sessionId, ...(typeof entry.sessionFile === "string" ? { sessionFile: entry.sessionFile } : {}) }]];
  });
}

async function directoryNames(path: string): Promise<string[]> {
  try {
    return (await readdir(path, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return [];
  }
}

async function fileNames(path: string): Promise<string[]> {
  try {
    return (await readdir(path, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch {
    return [];
  }
}
