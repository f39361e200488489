/**
 * The peer database most import tests read: one conversation compacted by the peer (two leaf summaries condensed into
 * one, the rest of the messages fresh in context), with a tool call and its result, a thinking block and a stored
 * file; on the 1.x line also an archived conversation and rows in the peer's own bookkeeping tables.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { AgentMessage } from "../../../src/host/openclaw-types.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { PeerWriter, type PeerLine } from "./peer-fixtures.js";

export const SESSION_ID = "7f1c1e7e-peer-session";
export const SESSION_KEY = "agent:ops:telegram:direct:42";
export const FILE_ID = "file_0123456789abcdef";
export const FILE_CONTENT = "line one of the notes\nline two: the deploy key is rotated monthly\n";
/** With `files`: a PNG image the peer kept as bytes, and a file whose content is gone from disk. */
export const IMAGE_FILE_ID = "file_1111111111111111";
export const IMAGE_BYTES = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
export const MISSING_FILE_ID = "file_2222222222222222";
export const LEAF_IDS = ["sum_aaaaaaaaaaaaaaaa", "sum_bbbbbbbbbbbbbbbb"] as const;
export const CONDENSED_ID = "sum_cccccccccccccccc";

export interface PeerScenario {
  path: string;
  line: PeerLine;
  /** Messages in the compacted conversation (all of them, summarized or fresh). */
  messages: number;
  /** Peer message ids of the fresh tail (in context after the condensed summary). */
  freshMessageIds: number[];
  /** The host messages the compacted conversation was written from, in order (what OpenClaw's transcript holds). */
  hostMessages: AgentMessage[];
  /** The agent the conversation belongs to once imported. */
  agentId: string;
  sessionKey: string | undefined;
}

export function buildPeerScenario(line: PeerLine, options: { extraMessages?: number; files?: boolean } = {}): PeerScenario {
  const path = join(tempDir("peer-"), "lcm.db");
  const peer = new PeerWriter(path, line);
  peer.db.exec("BEGIN"); // one transaction: a few ms per hundred messages instead of a sync per row
  const sessionKey = line === "1.x" ? SESSION_KEY : undefined;
  const conversation = peer.conversation(SESSION_ID, sessionKey ? { sessionKey } : {});
  const ids: number[] = [];
  const hostMessages: AgentMessage[] = [];
  const add = (message: Record<string, unknown>) => {
    hostMessages.push(message as AgentMessage);
    ids.push(peer.message(conversation, message as AgentMessage, { inContext: ids.length >= 12 }));
  };
  let stamp = Date.UTC(2026, 1, 18, 7, 0, 0);
  const time = () => (stamp += 1_000);
  for (let turn = 1; turn <= 4; turn++) {
    add({ role: "user", content: `turn ${turn}: what about marker${turn}?`, timestamp: time() });
    add({ role: "assistant", content: [{ type: "text", text: `answer ${turn} mentions detail${turn}` }], provider: "anthropic", api: "anthropic-messages", model: "claude", timestamp: time() });
  }
  add({ role: "user", content: "read my notes", timestamp: time() });
  add({
    role: "assistant", timestamp: time(), provider: "anthropic", api: "anthropic-messages", model: "claude",
    content: [{ type: "thinking", thinking: "the user wants the notes file" }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "notes.txt" } }],
  });
  add({ role: "toolResult", toolCallId: "call_1", toolName: "read", isError: false, timestamp: time(),
    content: [{ type: "text", text: `[LCM File: ${FILE_ID} | notes.txt | text/plain | 66 bytes]` }] });
  add({ role: "assistant", content: [{ type: "text", text: "the notes say the deploy key rotates monthly" }], provider: "anthropic", api: "anthropic-messages", model: "claude", timestamp: time() });
  for (let turn = 5; turn <= 6 + (options.extraMessages ?? 0) / 2; turn++) {
    add({ role: "user", content: `turn ${turn}: fresh question marker${turn}`, timestamp: time() });
    add({ role: "assistant", content: [{ type: "text", text: `fresh answer ${turn} detail${turn}` }], provider: "anthropic", api: "anthropic-messages", model: "claude", timestamp: time() });
  }
  peer.largeFile(conversation, FILE_ID, FILE_CONTENT, "notes.txt", "text/plain");
  if (options.files) {
    peer.largeFile(conversation, IMAGE_FILE_ID, IMAGE_BYTES, "screenshot.png", "image/png");
    rmSync(peer.largeFile(conversation, MISSING_FILE_ID, "a report the user deleted since", "report.md", "text/markdown"));
  }
  peer.summary(conversation, LEAF_IDS[0], "leaf", "Turns 1-3: the user asked about marker1..marker3.", ids.slice(0, 6));
  peer.summary(conversation, LEAF_IDS[1], "leaf", `Turn 4 and the notes (${FILE_ID}): the deploy key rotates monthly.`, ids.slice(6, 12), [FILE_ID]);
  peer.summary(conversation, CONDENSED_ID, "condensed", "Earlier: markers 1-4 and the notes about the deploy key.", [...LEAF_IDS]);
  // The peer's context after compaction: the condensed summary first, then the fresh tail.
  const db = peer.db;
  db.exec(`DELETE FROM context_items WHERE conversation_id = ${conversation}`);
  peer.contextItem(conversation, { summaryId: CONDENSED_ID });
  for (const id of ids.slice(12)) peer.contextItem(conversation, { messageId: id });
  if (line === "1.x") {
    const archived = peer.conversation(SESSION_ID, { sessionKey, active: false, archiveCause: "reset" });
    peer.message(archived, { role: "user", content: "an older session, before /reset", timestamp: time() });
    db.exec("UPDATE messages SET identity_hash = 'h-' || message_id, transcript_entry_id = 'entry-' || message_id");
    db.prepare("INSERT INTO focus_briefs (brief_id, conversation_id, prompt, content, status) VALUES ('fb1', ?, 'p', 'c', 'active')").run(conversation);
  }
  peer.db.exec("COMMIT");
  peer.close();
  return { path, line, messages: ids.length, freshMessageIds: ids.slice(12), hostMessages, agentId: line === "1.x" ? "ops" : "main", sessionKey };
}
