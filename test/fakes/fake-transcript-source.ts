/**
 * A TranscriptSource over an in-memory list, paging like OpenClaw's visible-message delta reader: the cursor is
 * the number of messages already returned. Records every read; `resetNext` makes the next read answer "reset".
 */
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import type { TranscriptPage, TranscriptScope, TranscriptSource } from "../../src/engine/transcript-source.js";

export class FakeTranscriptSource implements TranscriptSource {
  readonly reads: { scope: TranscriptScope; cursor: string | undefined; maxMessages: number }[] = [];
  resetNext = false;
  constructor(readonly messages: AgentMessage[] = []) {}

  async readPage(scope: TranscriptScope, cursor: string | undefined, maxMessages: number): Promise<TranscriptPage> {
    this.reads.push({ scope, cursor, maxMessages });
    if (this.resetNext) {
      this.resetNext = false;
      return { kind: "reset", cursor: "0", reason: "generation_mismatch" };
    }
    const start = cursor === undefined ? 0 : Number(cursor);
    const page = this.messages.slice(start, start + maxMessages);
    const next = start + page.length;
    return { kind: "page", messages: page, cursor: String(next), hasMore: next < this.messages.length };
  }
}
