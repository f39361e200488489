/**
 * What an import from lossless-claw did (or, in a dry run, would do): the source's counts per table, what was
 * written per table, and every kind of row that could not be mapped exactly, with a count and a few examples.
 * The `lcm import lossless-claw --json` output (schema in src/cli/output-schemas.ts).
 */
import type { PeerCounts } from "./peer-reader.js";

/** What an import wrote, counted per table as the peer's rows are (PeerCounts). */
export type WrittenCounts = PeerCounts;

export interface UnmappedKind {
  /** What was not mapped exactly, e.g. "message: tool result without its call id". */
  kind: string;
  count: number;
  /** A few peer ids (or "<conversation>/<message>") of such rows. */
  examples: string[];
}

export interface ImportReport {
  source: { path: string; schemaLine: string; versionRange: string; fingerprint: string };
  applied: boolean;
  sourceCounts: PeerCounts;
  conversations: {
    total: number;
    /** Imported in full by this run (dry run: would be). */
    imported: number;
    /** Picked up where an interrupted run stopped. */
    resumed: number;
    /** Imported by an earlier run: nothing written. */
    alreadyImported: number;
    /** Imported as archived (archived by the peer, or the session already has a live conversation here). */
    archived: number;
    /** Not imported, nothing of them written (rows that could not be read to the end, an id already taken): `unmapped` says why. */
    notImported: number;
  };
  written: WrittenCounts;
  unmapped: UnmappedKind[];
  /** Rows in peer tables the import does not read (pending compaction batches, focus briefs, …). */
  notImportedTables: Record<string, number>;
  durationMs: number;
  messagesPerSecond: number;
}

const EXAMPLES = 5;

/** Collects the unmapped rows of a run by kind. */
export class UnmappedTally {
  private readonly kinds = new Map<string, UnmappedKind>();

  add(kind: string, example: string, count = 1): void {
    const entry = this.kinds.get(kind) ?? { kind, count: 0, examples: [] };
    entry.count += count;
    if (entry.examples.length < EXAMPLES) entry.examples.push(example);
    this.kinds.set(kind, entry);
  }

  list(): UnmappedKind[] {
    return [...this.kinds.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
  }
}

export function emptyWritten(): WrittenCounts {
  return { conversations: 0, messages: 0, messageParts: 0, summaries: 0, summaryMessages: 0, summaryParents: 0, contextItems: 0, largeFiles: 0 };
}
