/**
 * How OpenClaw lists the recall tools: the manifest's `toolMetadata` (which built-in tool profiles offer each tool
 * without the user allowing it by name) and the catalog entry the plugin registers (`api.registerToolMetadata`: the
 * name and one-line description people read in the tool catalog). One table, so the manifest and the runtime agree.
 *
 * OpenClaw's `coding` and `messaging` profiles offer a plugin's tool only when the manifest contributes it to them;
 * `full` and an unset profile offer every non-optional plugin tool. A context engine that summarizes history promises
 * the model it can get the detail back, so the recall tools belong in every profile an agent does real work under.
 */

/** The built-in tool profiles a plugin tool may be contributed to (OpenClaw's manifest `toolMetadata.<tool>.profiles`). */
export type ToolProfile = "minimal" | "coding" | "messaging" | "full";

export interface RecallToolCatalogEntry {
  name: string;
  /** Shown as the tool's name in OpenClaw's tool catalog. */
  displayName: string;
  /** One line for the catalog (the model reads the tool's own, longer description). */
  catalogDescription: string;
  profiles: readonly ToolProfile[];
  /** Running it again after an interrupted turn is harmless (it only reads). */
  replaySafe: boolean;
}

/** The profiles the recall tools join: every one but `minimal`, which an operator chooses to offer almost nothing. */
export const RECALL_TOOL_PROFILES: readonly ToolProfile[] = ["coding", "messaging", "full"];

export const RECALL_TOOL_CATALOG: readonly RecallToolCatalogEntry[] = [
  {
    name: "lcm_grep",
    displayName: "Search conversation history",
    catalogDescription: "Finds words, identifiers or a pattern anywhere in the stored history, including what summaries replaced.",
    profiles: RECALL_TOOL_PROFILES,
    replaySafe: true,
  },
  {
    name: "lcm_describe",
    displayName: "Read a summary or stored file",
    catalogDescription: "Reads one summary (sum_…) with its sources, or a large file stored aside (file_…), by id.",
    profiles: RECALL_TOOL_PROFILES,
    replaySafe: true,
  },
  {
    name: "lcm_expand_query",
    displayName: "Ask the conversation history",
    catalogDescription: "Answers a question from the full detail under the summaries, with a helper that reads the original messages.",
    profiles: RECALL_TOOL_PROFILES,
    replaySafe: false,
  },
  {
    name: "lcm_expand",
    displayName: "Open a summary (recall helper)",
    catalogDescription: "Used by the lcm_expand_query helper only: opens a summary down to its original messages.",
    profiles: RECALL_TOOL_PROFILES,
    replaySafe: true,
  },
];
