/**
 * The context items of one assemble call, newest first, read from the store in pages and kept for the call: the
 * selection and the second selection after the memory floor's cost both walk down from the newest item, so each
 * re-read is answered from what was read (on a server database every page is a round trip and its rows are parsed
 * again), and the call sees one list even while another process appends.
 */
import type { ContextItemRecord, ConversationId } from "../records.js";
import type { ContextStore } from "../store/store.js";

export class NewestContextItems {
  /** Items read so far, newest first, contiguous from the newest. */
  private readonly items: ContextItemRecord[] = [];
  private readAll = false;
  /** Pages are answered one after another, so callers running at once never read the same items twice. */
  private reading: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: Pick<ContextStore, "listContextNewestFirst">, private readonly conversationId: ConversationId) {}

  /** As ContextStore.listContextNewestFirst: at most `limit` items with ordinal < `beforeOrdinal` (null: from the newest). */
  page(beforeOrdinal: number | null, limit: number): Promise<ContextItemRecord[]> {
    const answer = this.reading.then(() => this.pageInTurn(beforeOrdinal, limit));
    this.reading = answer.catch(() => undefined);
    return answer;
  }

  private async pageInTurn(beforeOrdinal: number | null, limit: number): Promise<ContextItemRecord[]> {
    if (limit <= 0) return [];
    for (;;) {
      const start = this.indexBelow(beforeOrdinal);
      if (this.readAll || this.items.length - start >= limit) return this.items.slice(start, start + limit);
      // Read a page of `limit` past what is kept: the caller's next request is most often the next page.
      const next = await this.store.listContextNewestFirst(this.conversationId, this.items.at(-1)?.ordinal ?? null, limit);
      this.items.push(...next);
      if (next.length < limit) this.readAll = true;
    }
  }

  /** Index of the first kept item with ordinal < `beforeOrdinal` (items are in descending ordinal order). */
  private indexBelow(beforeOrdinal: number | null): number {
    if (beforeOrdinal === null) return 0;
    let low = 0;
    let high = this.items.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.items[middle]!.ordinal < beforeOrdinal) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}
