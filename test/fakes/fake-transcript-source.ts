/**
 * A TranscriptSource over an in-memory list, paging like OpenClaw's visible-message delta reader: the cursor is
 * the number of messages already returned, and a page holds at most `maxBytes` of serialized messages (1 MB when
 * not given, as the host's default): a message larger than that comes back as an empty page naming the bytes it
 * needs. Records every read; `resetNext` makes the next read answer "reset"; `stuck` makes every page empty.
 */
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import type { TranscriptPage, TranscriptScope, TranscriptSource } from "../../src/ingest/transcript-source.js";

export class FakeTranscriptSource implements TranscriptSource {
  readonly reads: { scope: TranscriptScope; cursor: string | undefined; maxMessages: number; maxBytes: number | undefined }[] = [];
  resetNext = false;
  stuck = false;
  constructor(readonly messages: AgentMessage[] = []) {}

  async readPage(scope: TranscriptScope, cursor: string | undefined, maxMessages: number, maxBytes?: number): Promise<TranscriptPage> {
    this.reads.push({ scope, cursor, maxMessages, maxBytes });
    if (this.resetNext) {
      this.resetNext = false;
      return { kind: "reset", cursor: "0", reason: "generation_mismatch" };
    }
    const start = cursor === undefined ? 0 : Number(cursor);
    if (this.stuck) return { kind: "page", messages: [], cursor: String(start), hasMore: start < this.messages.length };
    const limit = maxBytes ?? 1_000_000;
    const page: AgentMessage[] = [];
    let bytes = 0;
    for (const message of this.messages.slice(start, start + maxMessages)) {
      const size = Buffer.byteLength(JSON.stringify(message));
      if (bytes + size > limit) {
        if (page.length === 0) return { kind: "page", messages: [], cursor: String(start), hasMore: true, requiredBytes: size };
        break;
      }
      page.push(message);
      bytes += size;
    }
    const next = start + page.length;
    return { kind: "page", messages: page, cursor: String(next), hasMore: next < this.messages.length };
  }
}
