/**
 * Writes retention archives: gzip-compressed JSONL, one record per line, owner-only. A file is written under a
 * temporary name, flushed to disk, then renamed, so an archive that exists is complete; only then does retention
 * remove anything from the database. Compression runs on libuv's thread pool (node:zlib streams), so writing a large
 * conversation never holds the event loop; the records come from an async source that yields between pages.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";

/** What an archive file holds and where it is. */
export interface WrittenArchive {
  path: string;
  /** Compressed size on disk. */
  bytes: number;
  records: number;
}

/**
 * Contract: `write` resolves only once the archive is complete on disk (fsynced and renamed into place); it rejects
 * when anything fails, and then no file is left under `name`. Each record is one JSON object per line.
 */
export interface ArchiveWriter {
  readonly directory: string;
  write(name: string, records: AsyncIterable<object>): Promise<WrittenArchive>;
}

export class GzipJsonlArchiveWriter implements ArchiveWriter {
  constructor(readonly directory: string) {}

  async write(name: string, records: AsyncIterable<object>): Promise<WrittenArchive> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const path = join(this.directory, name);
    const temporary = join(this.directory, `.${name}.${randomBytes(4).toString("hex")}.tmp`);
    let count = 0;
    async function* lines(): AsyncGenerator<string> {
      for await (const record of records) {
        count++;
        yield `${JSON.stringify(record)}\n`;
      }
    }
    try {
      await pipeline(Readable.from(lines()), createGzip({ level: 6 }), createWriteStream(temporary, { mode: 0o600 }));
      const handle = await open(temporary, "r+");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return { path, bytes: (await stat(path)).size, records: count };
  }
}

/** A file name for an archive: sortable by time, unique, saying what it holds. */
export function archiveFileName(kind: "conversation" | "messages", conversationId: number, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `lcm-${stamp}-conversation-${conversationId}-${kind}-${randomBytes(3).toString("hex")}.jsonl.gz`;
}
