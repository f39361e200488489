/**
 * Finds every OpenClaw session under a state folder, for `lcm import openclaw`, in both layouts OpenClaw has used:
 * - 2026.9.6: each agent's database, `agents/<agent>/agent/openclaw-agent.sqlite` (transfer/openclaw-agent-store.ts),
 *   one session per window;
 * - earlier releases: `agents/<agent>/sessions/sessions.json` (session key → session id, transcript file) and the
 *   `<sessionId>.jsonl` transcripts beside it (also sessions the index no longer names).
 * A session found in both is listed once (its database). What is found but cannot be read is listed with why: an
 * agent database that cannot be opened or is of another layout, a session index that is not JSON, the transcripts
 * OpenClaw archived when it deleted or reset a session.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, isAbsolute, join } from "node:path";
import { describeError } from "../errors.js";
import { OpenClawAgentStore } from "./openclaw-agent-store.js";

/** One session of the host: its transcript is a JSONL file, or in the agent's database. */
export interface HostSession {
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  /** The JSONL transcript (earlier layout); null for a session of the agent database. */
  transcriptFile: string | null;
}

/** Something found under the state folder that the backfill does not read, and why. */
export interface UnreadTranscript {
  agentId: string;
  /** A session id, or the file that could not be read. */
  subject: string;
  sessionKey: string | null;
  reason: string;
}

/** What was found for one agent. */
export interface AgentSurvey {
  agentId: string;
  /** The agent database, when there is one (read or not: see `unread`). */
  database: string | null;
  /** The earlier layout's sessions folder, when there is one. */
  sessionsDirectory: string | null;
  sessions: number;
}

export interface HostSessionSurvey {
  agents: AgentSurvey[];
  sessions: HostSession[];
  unread: UnreadTranscript[];
  /** The agent databases opened (read-only), by agent: close them when done. */
  stores: Map<string, OpenClawAgentStore>;
}

export const AGENT_DATABASE = join("agent", "openclaw-agent.sqlite");

/** Every session under `stateDir` (optionally one agent's), agents in name order, each agent's sessions oldest first. */
export async function surveyHostSessions(stateDir: string, agentId?: string): Promise<HostSessionSurvey> {
  const agentsDirectory = join(stateDir, "agents");
  const agents = agentId !== undefined ? [agentId] : (await directoryNames(agentsDirectory)).sort();
  const survey: HostSessionSurvey = { agents: [], sessions: [], unread: [], stores: new Map() };
  for (const agent of agents) {
    const seen = new Set<string>();
    const databasePath = join(agentsDirectory, agent, AGENT_DATABASE);
    const sessionsDirectory = join(agentsDirectory, agent, "sessions");
    const before = survey.sessions.length;
    if (existsSync(databasePath)) readAgentDatabase(survey, agent, databasePath, seen);
    await readSessionsFolder(survey, agent, sessionsDirectory, seen);
    survey.agents.push({
      agentId: agent, database: existsSync(databasePath) ? databasePath : null,
      sessionsDirectory: existsSync(sessionsDirectory) ? sessionsDirectory : null, sessions: survey.sessions.length - before,
    });
  }
  return survey;
}

function readAgentDatabase(survey: HostSessionSurvey, agentId: string, path: string, seen: Set<string>): void {
  let store: OpenClawAgentStore;
  try {
    store = OpenClawAgentStore.open(path, agentId);
  } catch (error) {
    survey.unread.push({ agentId, subject: path, sessionKey: null, reason: `${describeError(error)}; its sessions are not read` });
    return;
  }
  survey.stores.set(agentId, store);
  for (const session of store.sessions()) {
    seen.add(session.sessionId);
    survey.sessions.push({ agentId, sessionId: session.sessionId, sessionKey: session.sessionKey, transcriptFile: null });
  }
  for (const archived of store.archivedTranscripts()) {
    if (seen.has(archived.sessionId)) continue;
    survey.unread.push({
      agentId, subject: archived.sessionId, sessionKey: archived.sessionKey,
      reason: `OpenClaw ${archived.reason === "deleted" ? "deleted" : "reset"} this session on ${new Date(archived.createdAt).toISOString()} ` +
        `and archived its transcript (${archived.archiveName}); archived transcripts are not imported`,
    });
  }
}

async function readSessionsFolder(survey: HostSessionSurvey, agentId: string, directory: string, seen: Set<string>): Promise<void> {
  const indexPath = join(directory, "sessions.json");
  const indexedFiles = new Set<string>();
  let index: [string, { sessionId: string; sessionFile?: string }][] = [];
  try {
    index = await readSessionIndex(indexPath);
  } catch (error) {
    survey.unread.push({ agentId, subject: indexPath, sessionKey: null, reason: `${describeError(error)}; the transcript files beside it are still read` });
  }
  for (const [sessionKey, entry] of index) {
    if (seen.has(entry.sessionId)) continue;
    seen.add(entry.sessionId);
    const candidates = [
      ...(entry.sessionFile ? [isAbsolute(entry.sessionFile) ? entry.sessionFile : join(directory, entry.sessionFile)] : []),
      join(directory, `${entry.sessionId}.jsonl`),
    ];
    const transcriptFile = candidates.find((file) => existsSync(file)) ?? null;
    if (transcriptFile) indexedFiles.add(transcriptFile);
    survey.sessions.push({ agentId, sessionId: entry.sessionId, sessionKey, transcriptFile });
  }
  // Transcripts of sessions the index no longer names (an earlier session of a key, before /new).
  const files = (await fileNames(directory)).filter((name) => name.endsWith(".jsonl")).sort();
  for (const name of files) {
    const file = join(directory, name);
    const sessionId = basename(name, ".jsonl");
    if (indexedFiles.has(file) || seen.has(sessionId)) continue;
    seen.add(sessionId);
    survey.sessions.push({ agentId, sessionId, sessionKey: null, transcriptFile: file });
  }
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
    throw new Error(`the session index ${path} is not valid JSON (${describeError(error)})`);
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
    return []; // no agents folder: the command reports it before calling this
  }
}

async function fileNames(path: string): Promise<string[]> {
  try {
    return (await readdir(path, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch {
    return []; // no sessions folder: the agent keeps its sessions in its database only
  }
}
