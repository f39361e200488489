/**
 * Repair proposals the inspector has shown and not yet applied, by an unguessable id: "apply" writes exactly what was
 * previewed (the page never sends the text back to be trusted). Bounded: the oldest are forgotten past MAX_PROPOSALS,
 * and each expires after PROPOSAL_TTL_MS.
 */
import { randomUUID } from "node:crypto";

const MAX_PROPOSALS = 64;
const PROPOSAL_TTL_MS = 30 * 60_000;

export class ProposalBook<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  add(value: T): string {
    const id = randomUUID();
    this.entries.set(id, { value, expiresAt: this.now() + PROPOSAL_TTL_MS });
    while (this.entries.size > MAX_PROPOSALS) this.entries.delete(this.entries.keys().next().value!);
    return id;
  }

  /** The proposal, removed from the book (it can be applied once); undefined when unknown or expired. */
  take(id: string): T | undefined {
    const entry = this.entries.get(id);
    this.entries.delete(id);
    return entry && entry.expiresAt > this.now() ? entry.value : undefined;
  }
}
