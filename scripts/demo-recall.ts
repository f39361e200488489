/**
 * The end of `npm run demo`: recalling the detail of turn 2 the way the agent does, through the registered tools
 * only. lcm_grep finds the raw message and the summary that now covers it; lcm_describe reads that summary and,
 * through parentSummaryIds, the older summary that still names the detail; lcm_grep scope "files" finds the line
 * of the large deploy log of turn 3, and lcm_describe reads the lines around it. Each step prints the call and a
 * compact view of what the model reads back.
 */
import type { AgentTool } from "../src/host/openclaw-types.js";
import type { FileMatch, MessageMatch } from "../src/search/grep.js";
import type { FileDescription, SummaryDescription } from "../src/retrieval/describe.js";
import { RECALL_DETAIL } from "./demo-session.js";

type ToolNamed = (name: string) => AgentTool;

/** Longest excerpt printed per step. */
const EXCERPT_CHARACTERS = 150;

export async function recallAsAgent(toolNamed: ToolNamed): Promise<void> {
  const call = async <T>(name: string, params: Record<string, unknown>): Promise<T> => {
    const shown = Object.entries(params).map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ");
    console.log(`  > ${name}(${shown})`);
    const result = await toolNamed(name).execute(`demo-${name}`, params);
    if (result.isError) throw new Error(result.content.map((block) => block.text).join("\n"));
    return result.details as T;
  };

  const grep = await call<{ matches: MessageMatch[] }>("lcm_grep", { pattern: "OPS-\\d{4}", scope: "messages" });
  const oldest = grep.matches.at(-1);
  if (!oldest) return console.log("    no match (unexpected)");
  console.log(`    ${grep.matches.length} matches; oldest: message seq ${oldest.seq} (${oldest.role}) "${clip(oldest.snippet)}"`);
  console.log(`    coveringSummaryId: ${oldest.coveringSummaryId ?? "none (still in the context)"}`);

  // The covering summary stands for the message in the context. If it no longer names the detail, follow its
  // parents (oldest first) down to the one that covers the message and still does: what an agent does with
  // lcm_describe before paying for lcm_expand_query.
  const describe = async (id: string) => {
    const summary = await call<SummaryDescription>("lcm_describe", { id });
    const line = summary.content.split("\n").find((text) => text.includes(RECALL_DETAIL));
    console.log(
      `    ${summary.kind} depth ${summary.depth}, seq ${summary.seqStart}-${summary.seqEnd}, ${summary.tokenCount} tokens, ` +
        `inContext ${summary.inContext}: ${line ? `names it: "${clip(line.trim())}"` : `does not name it; parentSummaryIds: ${summary.parentSummaryIds.length}`}`,
    );
    return { summary, namesIt: line !== undefined };
  };
  let current = oldest.coveringSummaryId ? await describe(oldest.coveringSummaryId) : null;
  while (current && !current.namesIt) {
    let next: typeof current | null = null;
    for (const parentId of current.summary.parentSummaryIds) {
      const parent = await describe(parentId);
      if (parent.summary.seqStart <= oldest.seq && oldest.seq <= parent.summary.seqEnd) {
        next = parent;
        break;
      }
    }
    current = next;
  }

  const files = await call<{ matches: FileMatch[]; filesInScope: number }>("lcm_grep", { pattern: RECALL_DETAIL, mode: "full_text", scope: "files" });
  const hit = files.matches[0];
  if (!hit) return console.log(`    no match in ${files.filesInScope} stored files`);
  console.log(`    ${hit.fileId} (${hit.fileName}) line ${hit.lineNumber}, column ${hit.column}: "${clip(hit.snippet)}"`);
  console.log(`    hint: ${hit.hint}`);
  const page = await call<FileDescription>("lcm_describe", { id: hit.fileId, startLine: hit.lineNumber - 1, maxLines: 3 });
  const lines = page.content;
  if (lines?.unit !== "lines") return console.log(`    ${page.contentNote ?? "no content"}`);
  console.log(`    ${page.byteSize} bytes, lines ${lines.startLine}-${lines.endLine} of ${lines.totalLines}, nextStartLine ${lines.nextStartLine}:`);
  lines.text.split("\n").forEach((text, index) => console.log(`      ${lines.startLine + index} | ${clip(text)}`));
}

function clip(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, " ");
  return flat.length > EXCERPT_CHARACTERS ? `${flat.slice(0, EXCERPT_CHARACTERS - 1)}…` : flat;
}
