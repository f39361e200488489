/**
 * A stored JSON value no reader can use (a conversation's bootstrap cursor, last compaction or last reset; message
 * or part meta; summary file ids): `lcm conversations` still lists every conversation, `lcm doctor` names the row, and
 * `lcm doctor --repair` clears the columns the engine rebuilds (the bootstrap cursor, the last compaction).
 */
import { describe, expect, it } from "vitest";
import { ConversationsOutputSchema, DoctorOutputSchema } from "../../src/cli/output-schemas.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { buildDatabase, exchanges, runJson } from "../cli/cli-harness.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

interface Doctor {
  findings: { kind: string; conversationId: number | null; subject: string; detail: string }[];
  needsOperator: { kind: string; subject: string }[];
  applied: { kind: string }[];
  healthy: boolean;
}

async function twoConversations() {
  const databasePath = tempDatabasePath();
  await buildDatabase({
    databasePath, compact: true,
    sessions: [
      { sessionKey: "agent:main:one", sessionId: "s1", messages: exchanges(30, 20, "a") },
      { sessionKey: "agent:main:two", sessionId: "s2", messages: exchanges(3, 5, "b") },
    ],
  });
  return databasePath;
}

function corrupt(databasePath: string, sql: string): void {
  const db = openDatabase(databasePath);
  try {
    db.writeNow(() => db.raw.exec(sql));
  } finally {
    db.close();
  }
}

describe("unreadable stored values", () => {
  it("a bootstrap cursor that is not JSON: conversations still lists every conversation, doctor names it, --repair clears it", async () => {
    const databasePath = await twoConversations();
    corrupt(databasePath, "UPDATE conversations SET bootstrap_state = '{\"source\": \"file\", broken' WHERE session_id = 's1'");
    const listed = await runJson<{ conversations: { sessionId: string }[] }>(["conversations", "--db", databasePath], ConversationsOutputSchema);
    expect(listed.conversations.map((conversation) => conversation.sessionId).sort()).toEqual(["s1", "s2"]);

    const found = await runJson<Doctor>(["doctor", "--db", databasePath], DoctorOutputSchema, { code: EXIT.problemsFound });
    expect(found.findings).toEqual([expect.objectContaining({ kind: "unreadable_value", conversationId: 1, subject: "conversation 1", detail: expect.stringMatching(/bootstrap_state/) })]);
    const repaired = await runJson<Doctor>(["doctor", "--db", databasePath, "--repair"], DoctorOutputSchema);
    expect(repaired).toMatchObject({ applied: [{ kind: "clear_unreadable_columns", conversationId: 1 }], healthy: true });
    const db = openDatabase(databasePath);
    expect(db.get<{ state: string | null }>("SELECT bootstrap_state AS state FROM conversations WHERE session_id = 's1'")!.state).toBeNull();
    db.close();
  });

  it("a cursor of the wrong shape, message meta and summary file ids that are not JSON are each named; only the cursor is repaired", async () => {
    const databasePath = await twoConversations();
    corrupt(databasePath, `
      UPDATE conversations SET bootstrap_state = '{"source":"file","file":"/t.jsonl"}', last_reset = '"yesterday"' WHERE session_id = 's2';
      UPDATE messages SET meta = 'not json' WHERE message_id = (SELECT min(message_id) FROM messages);
      UPDATE summaries SET file_ids = '{"file":1}' WHERE id = (SELECT min(id) FROM summaries);`);
    const found = await runJson<Doctor>(["doctor", "--db", databasePath], DoctorOutputSchema, { code: EXIT.problemsFound });
    expect(found.findings.filter((finding) => finding.kind === "unreadable_value").map((finding) => [finding.subject, finding.detail.split(" is ")[0]]).sort()).toEqual([
      ["conversation 2", "its bootstrap_state"], ["conversation 2", "its last_reset"], ["message 1", "its meta"], [expect.stringMatching(/^sum_/), "its file_ids"],
    ]);
    const repaired = await runJson<Doctor>(["doctor", "--db", databasePath, "--repair"], DoctorOutputSchema, { code: EXIT.problemsFound });
    expect(repaired.applied).toEqual([{ kind: "clear_unreadable_columns", conversationId: 2 }]);
    // The last reset, the meta and the file ids need an operator; the cleared cursor does not.
    expect(repaired.needsOperator.map((item) => item.subject).sort()).toEqual(["conversation 2", "message 1", expect.stringMatching(/^sum_/)]);
  });
});
