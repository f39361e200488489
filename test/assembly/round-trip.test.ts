import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { createTestEngine } from "../helpers/engine.js";

const T = Date.UTC(2026, 10, 1, 12, 0, 0);

const toolCallTurn: AgentMessage[] = [
  {
    role: "assistant", timestamp: T + 3, api: "openai-completions", provider: "fake", model: "m", stopReason: "toolUse",
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
    content: [
      { type: "text", text: "reading" },
      { type: "toolCall", id: "call_1", name: "read_file", arguments: { path: "/etc/hosts", range: [1, 20], nested: { deep: [{ a: null }] } } },
      { type: "toolCall", id: "call_2", name: "noop", arguments: {}, thoughtSignature: "ts", executionMode: "parallel" },
    ],
  },
  {
    role: "toolResult", toolCallId: "call_1", toolName: "read_file", isError: true, timestamp: T + 4,
    content: [{ type: "text", text: "ENOENT: no such file" }, { type: "image", data: "AAAA", mimeType: "image/jpeg" }],
    details: { exitCode: 2, lines: ["a", "b"] },
  },
  { role: "toolResult", toolCallId: "call_2", toolName: "noop", isError: false, timestamp: T + 5, content: [] },
];

const cases: [string, AgentMessage[]][] = [
  ["user text as a string", [{ role: "user", content: "plain string", timestamp: T, idempotencyKey: "r:user", __openclaw: { senderIsOwner: true } }]],
  ["user text and image blocks", [{
    role: "user", timestamp: T + 1,
    content: [{ type: "text", text: "look" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }],
  }]],
  ["assistant with thinking, text and signatures", [{
    role: "assistant", timestamp: T + 2, api: "anthropic-messages", provider: "anthropic", model: "claude",
    usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3 }, stopReason: "stop", responseId: "msg_1",
    content: [
      { type: "thinking", thinking: "let me think", thinkingSignature: "sig==" },
      { type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true },
      { type: "text", text: "answer", textSignature: "t-sig" },
    ],
  }]],
  ["tool calls with arguments, and their results with details, images and error flags", toolCallTurn],
  ["custom message", [{ role: "custom", customType: "note", content: "custom body", display: false, details: { x: 1 }, timestamp: T + 5 }]],
  ["compaction summary (text in a field)", [{ role: "compactionSummary", summary: "what happened", tokensBefore: 900, timestamp: "2026-11-01T12:00:05.000Z" }]],
  ["bash execution", [{ role: "bashExecution", command: "ls -la", output: "total 0", exitCode: 0, cancelled: false, truncated: false, timestamp: T + 6 }]],
  ["unknown block types", [{ role: "user", timestamp: T + 7, content: [{ type: "audio", data: "xx", format: "wav" }, "bare string", 42, null] }]],
  ["empty content", [{ role: "user", content: "", timestamp: T + 8 }]],
  ["CJK, emoji and NUL characters", [{ role: "user", content: "日本語 🎉 a\u0000b", timestamp: T + 9 }]],
];

describe("a stored message round-trips block for block", () => {
  it.each(cases)("%s", async (_name, messages) => {
    const { newEngine } = createTestEngine();
    await newEngine().ingestBatch({ sessionId: "s1", messages });
    const assembled = await newEngine().assemble({ sessionId: "s1", messages: [] });
    expect(assembled.messages).toEqual(messages);
  });

  it("stores ill-formed UTF-16 (a lone surrogate) as U+FFFD, the one change SQLite's UTF-8 text forces", async () => {
    const { newEngine } = createTestEngine();
    await newEngine().ingest({ sessionId: "s1", message: { role: "user", content: "a\ud800b", timestamp: T } });
    const [message] = (await newEngine().assemble({ sessionId: "s1", messages: [] })).messages;
    expect(message?.content).toBe("a\ufffdb");
  });

  it("keeps a message without content (an unexpected shape) verbatim", async () => {
    const { newEngine } = createTestEngine();
    const message: AgentMessage = { role: "custom", customType: "x", content: { nested: true }, display: true, timestamp: T };
    await newEngine().ingest({ sessionId: "s1", message });
    expect((await newEngine().assemble({ sessionId: "s1", messages: [] })).messages).toEqual([message]);
  });

  it("keeps a tool result's details that copy its text once, and gives them back as they were", async () => {
    const { newEngine, db } = createTestEngine();
    const file = Array.from({ length: 60 }, (_, line) => `${line}: line of the file read`).join("\n");
    // As OpenClaw's read tool answers: the text for the model, and the same file again in details.
    const read: AgentMessage = {
      role: "toolResult", toolCallId: "call_1", toolName: "read", isError: false, timestamp: T,
      content: [{ type: "text", text: `${file}\n\n[60 lines]` }], details: { kind: "text", content: file, lines: [file.slice(0, 300)] },
    };
    // A details object that already uses the marker's key is kept verbatim.
    const clash: AgentMessage = { ...read, toolCallId: "call_2", timestamp: T + 1, details: { content: file, inner: { $lcmSpan: [0, 3] } } };
    const call: AgentMessage = {
      role: "assistant", timestamp: T - 1, stopReason: "toolUse",
      content: [{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "a" } }, { type: "toolCall", id: "call_2", name: "read", arguments: { path: "a" } }],
    };
    await newEngine().ingestBatch({ sessionId: "s1", messages: [call, read, clash] });
    expect((await newEngine().assemble({ sessionId: "s1", messages: [] })).messages).toEqual([call, read, clash]);
    const meta = db.all<{ length: number }>("SELECT length(meta) AS length FROM messages WHERE role = 'toolResult' ORDER BY message_id").map((row) => row.length);
    expect(meta[0]).toBeLessThan(200);
    expect(meta[1]).toBeGreaterThan(file.length);
  });

  it("stores each text payload once: parts point into the message's plain text", async () => {
    const { newEngine, db } = createTestEngine();
    const long = "unique-payload ".repeat(2_000);
    await newEngine().ingest({ sessionId: "s1", message: { role: "user", content: [{ type: "text", text: long }], timestamp: T } });
    const stored = db.get<{ content: number; parts: number }>(
      "SELECT length(m.content) AS content, (SELECT sum(coalesce(length(data), 0) + coalesce(length(meta), 0)) FROM message_parts) AS parts FROM messages m",
    )!;
    expect(stored.content).toBe(long.length);
    expect(stored.parts).toBe(0);
  });
});
