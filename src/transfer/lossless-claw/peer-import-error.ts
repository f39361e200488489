/**
 * Why an import from lossless-claw could not start: the source is missing, unreadable or not the peer's file. The
 * CLI turns `reason` into its exit code; the message says what was found and what to pass instead.
 */
export type PeerImportFailure = "source-missing" | "source-unreadable" | "not-peer";

export class PeerImportError extends Error {
  override readonly name = "PeerImportError";
  constructor(readonly reason: PeerImportFailure, message: string) {
    super(message);
  }
}
