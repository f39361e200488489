/**
 * Reads the source text of a summary request as entries: one per message (or per line of a source summary),
 * each with its header (time, who), the gist of what was said and the exact identifiers found in it (paths,
 * URLs, ids, hashes, versions, error codes and messages, numbers). What the extractive summarizer ranks and packs.
 *
 * Linear in the source, each character read a bounded number of times: the cleaned text of all entries is joined
 * once, and each identifier pattern scans that string once (scanning each entry apart made ~1,800 scans per chunk
 * of ~180 entries), its matches handed to the entry they fall in. No match crosses a line and entries are joined
 * by a newline, so an entry gets exactly the matches a scan of its own text finds. A gist reads an entry's lines
 * only up to its first sentence, and an entry keeps at most MAX_IDENTIFIERS_PER_ENTRY identifiers.
 */
import { EXPAND_LINE_PREFIX } from "../compaction/summary-output.js";

export interface SourceEntry {
  index: number;
  header: string;
  gist: string;
  /** Distinct identifiers, most specific first: the error sentence, the strong patterns in order, then numbers. */
  identifiers: string[];
  /** How many of `identifiers` are strong (not bare numbers). */
  strongCount: number;
  hasError: boolean;
  isUser: boolean;
  /** An assistant reply that is not a tool call: usually what was concluded or done. */
  isConclusion: boolean;
}

const ENTRY_HEADER = /^\[([^\]]+)\] (.+):$/;
const LABEL_LINE = /^\[(tool call|tool result|image|summary|command|output)[^\]]*\]$/;
const TOOL_CALL_LABEL = /^\[tool call ([^\]]+)\]$/;
const TOOL_RESULT_LABEL = /^\[tool result ([^\]]+)\]$/;
/** A line of an extractive summary: "- 2026-11-03 08:11 UTC user: ...". */
const SUMMARY_BULLET = /^- (\d{4}-\d\d-\d\d \d\d:\d\d UTC[^:]*): (.*)$/;
const OMITTED_LINE = /^- \(\d+ less informative entries omitted\)$/;
const CALLED_LINE = /^called /gm;

/**
 * What a pattern scans: the whole text, or only the runs of `run` characters (path: [\w./@~-], word: [\w]) that
 * hold an `anchor`, found first so the text between runs is skipped (for these patterns a scan of the whole text
 * spent most of its time trying every word). A pattern given runs matches only inside them, and reads the
 * character around a run (outside its class) as it reads the end of the text, so it finds what a whole scan finds.
 */
interface IdentifierPattern {
  pattern: RegExp;
  run?: keyof typeof RUN_CHARACTERS;
  /** What every match holds: a string is found with indexOf, which is faster than any pattern. */
  anchor?: string | RegExp;
}

/** Identifiers worth keeping verbatim, most specific first (a later match inside an earlier one is skipped). */
const STRONG_PATTERNS: readonly IdentifierPattern[] = [
  { pattern: /\bhttps?:\/\/[^\s"'<>)\]]+/g },
  { pattern: /\b(?:file|sum)_[a-f0-9]{16}\b/g, run: "word", anchor: "_" },
  { pattern: /(?<![\w./-])[\w-]+(?:\/[\w.-]+)+\.[A-Za-z]\w{0,5}\b/g, run: "path", anchor: "/" },
  { pattern: /(?<![\w./-])(?:~|\.{1,2})?\/(?:[\w.@-]+\/)*[\w.@-]+/g, run: "path", anchor: "/" },
  // Hex of 7-64 characters with a digit and a letter: somewhere a digit stands next to a letter.
  { pattern: /\b(?=[a-f0-9]*\d)(?=[a-f0-9]*[a-f])[a-f0-9]{7,64}\b/g, run: "word", anchor: /\d(?:(?=[a-f])|(?<=[a-f]\d))/g },
  { pattern: /\bv?\d+\.\d+(?:\.\d+)+(?:-[\w.]+)?\b/g },
  { pattern: /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g, run: "word", anchor: "_" },
  { pattern: /\b[A-Z]{1,5}-\d{2,}\b/g, run: "path", anchor: /[A-Z]-\d\d/g },
];
/**
 * Identifiers kept from one entry, at most: a summary line lists 6 and the expand line 8; the benchmark's chunks
 * hold at most 169 in one entry, 99.9% of their entries fewer than 32.
 */
export const MAX_IDENTIFIERS_PER_ENTRY = 128;
/** Bare numbers: kept, but only a few per entry and with little weight. */
const NUMBER_PATTERN: IdentifierPattern = { pattern: /\b\d{3,}(?:[.,]\d+)?\b/g };
const MAX_NUMBERS = 2;
const ERROR_WORD = /\b(?:error|exception|failed|failure|denied|refused|not found|timeout|timed out)\b/gi;
const MAX_ERROR_CHARS = 160;
/** How much of a long sentence before its error word is kept. */
const ERROR_CONTEXT_BEFORE_CHARS = 60;
/** A sentence end in a gist line, or a line terminator that ends the search (the gist is then every line). */
const SENTENCE_END = /[.!?](?=\s|$)|[\r\u2028\u2029]/g;
const BULLET = /^[-*•]\s+/;
const TRAILING_PUNCTUATION = ".,;:?!";

const RUN_CHARACTERS = { path: characterTable("./@~-"), word: characterTable("") };

function characterTable(extra: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let code = 0; code < 128; code++) {
    const character = String.fromCharCode(code);
    if (/\w/.test(character) || extra.includes(character)) table[code] = 1;
  }
  return table;
}

/** An entry being read: its cleaned lines, where they sit in the joined text, and what was found in them. */
interface EntryDraft {
  header: string;
  resultOf: string | undefined;
  lines: string[];
  /** Whether a line of the entry (labels included) holds more than whitespace: entries without are left out. */
  hasText: boolean;
  start: number;
  end: number;
  found: string[];
  strongCount: number;
  numbers: number;
  hasError: boolean;
  callsTool: boolean;
}

export function readSourceEntries(sourceText: string, gistWords: number): SourceEntry[] {
  const drafts = splitEntries(sourceText);
  // Entries' lines joined by newlines, entries too: one string holds every entry's text at [start, end).
  const lines: string[] = [];
  let offset = 0;
  for (const draft of drafts) {
    draft.start = offset;
    for (const line of draft.lines) {
      lines.push(line);
      offset += line.length + 1;
    }
    draft.end = Math.max(draft.start, offset - 1);
    offset = draft.end + 1;
    if (draft.lines.length === 0) lines.push("");
  }
  const text = lines.join("\n");
  findErrorSentences(text, drafts);
  for (const identifier of STRONG_PATTERNS) forEachMatch(text, identifier, drafts, add);
  for (const draft of drafts) draft.strongCount = draft.found.length;
  forEachMatch(text, NUMBER_PATTERN, drafts, (draft, value) => {
    if (draft.numbers < MAX_NUMBERS && add(draft, value)) draft.numbers++;
  });
  forEachMatch(text, { pattern: CALLED_LINE }, drafts, (draft) => {
    draft.callsTool = true;
  });
  return drafts.map((draft, index) => ({
    index,
    header: draft.resultOf ? `${draft.header} (${draft.resultOf})` : draft.header,
    gist: gistOf(draft.lines, draft.resultOf ? Math.ceil(gistWords / 2) : gistWords),
    identifiers: draft.found,
    strongCount: draft.strongCount,
    hasError: draft.hasError,
    isUser: draft.header.endsWith(" user"),
    isConclusion: draft.header.endsWith(" assistant") && !draft.callsTool,
  }));
}

/**
 * Splits the source into entries (message headers, and the bullets of a source summary, re-ranked as entries),
 * their lines trimmed and without labels ("[tool call x]" becomes "called x:"); entries with only blank lines are
 * left out.
 */
function splitEntries(sourceText: string): EntryDraft[] {
  const drafts: EntryDraft[] = [];
  let current: EntryDraft | undefined;
  const open = (header: string) => {
    if (current?.hasText) drafts.push(current);
    current = {
      header, resultOf: undefined, lines: [], hasText: false, start: 0, end: 0,
      found: [], strongCount: 0, numbers: 0, hasError: false, callsTool: false,
    };
    return current;
  };
  let isInSummary = false;
  for (const line of sourceText.split("\n")) {
    const header = line.charCodeAt(0) === 91 /* [ */ ? ENTRY_HEADER.exec(line) : null;
    const bullet = isInSummary && !header && line.startsWith("- ") ? SUMMARY_BULLET.exec(line) : null;
    if (header) {
      isInSummary = header[2]!.startsWith("summary ");
      open(isInSummary ? header[1]! : `${header[1]} ${header[2]}`);
    } else if (bullet) {
      addLine(open(bullet[1]!), bullet[2]!);
    } else if (!current) {
      addLine(open("earlier"), line);
    } else if (!(isInSummary && (line.startsWith(EXPAND_LINE_PREFIX) || OMITTED_LINE.test(line)))) {
      addLine(current, line);
    }
  }
  if (current?.hasText) drafts.push(current);
  return drafts;
}

function addLine(draft: EntryDraft, line: string): void {
  let text = line.trim();
  if (text === "") {
    draft.lines.push(text);
    return;
  }
  draft.hasText = true;
  if (text.charCodeAt(0) === 91 /* [ */) {
    draft.resultOf ||= TOOL_RESULT_LABEL.exec(text)?.[1];
    text = text.replace(TOOL_CALL_LABEL, "called $1:");
    if (LABEL_LINE.test(text)) return;
  }
  draft.lines.push(text);
}

/**
 * Adds an identifier unless it is short or inside one already found, or the entry has MAX_IDENTIFIERS_PER_ENTRY;
 * says whether it was added. The bound keeps the containment check linear: a tool output listing 5,000 paths
 * compared each with all before it (12.5M substring searches, a block of seconds).
 */
function add(draft: EntryDraft, value: string): boolean {
  if (draft.found.length >= MAX_IDENTIFIERS_PER_ENTRY) return false;
  let length = value.length;
  while (length > 0 && TRAILING_PUNCTUATION.includes(value[length - 1]!)) length--;
  if (length < 3) return false;
  const clean = length === value.length ? value : value.slice(0, length);
  for (const known of draft.found) if (known.includes(clean)) return false;
  draft.found.push(clean);
  return true;
}

/**
 * Calls `onMatch` for every match of the pattern in `text`, in order, with the entry it falls in. Entries are
 * walked forward with the matches, so the whole call is one scan of the text.
 */
function forEachMatch(
  text: string, identifier: IdentifierPattern, drafts: readonly EntryDraft[], onMatch: (draft: EntryDraft, value: string) => void,
): void {
  let entry = 0;
  const deliver = (index: number, value: string) => {
    while (drafts[entry]!.end <= index) entry++;
    onMatch(drafts[entry]!, value);
  };
  const { pattern, run, anchor } = identifier;
  if (!run || !anchor) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      deliver(match.index, match[0]);
      if (match[0].length === 0) pattern.lastIndex++;
    }
    return;
  }
  const isRunCharacter = RUN_CHARACTERS[run];
  const inRun = (index: number) => {
    const code = text.charCodeAt(index);
    return code < 128 && isRunCharacter[code] === 1;
  };
  for (let found = findAnchor(text, anchor, 0); found !== null;) {
    let start = found.index;
    while (start > 0 && inRun(start - 1)) start--;
    let end = found.index + found.length;
    while (end < text.length && inRun(end)) end++;
    const runText = text.slice(start, end);
    pattern.lastIndex = 0;
    for (let match = pattern.exec(runText); match; match = pattern.exec(runText)) deliver(start + match.index, match[0]);
    found = findAnchor(text, anchor, end);
  }
}

function findAnchor(text: string, anchor: string | RegExp, from: number): { index: number; length: number } | null {
  if (typeof anchor === "string") {
    const index = text.indexOf(anchor, from);
    return index < 0 ? null : { index, length: anchor.length };
  }
  anchor.lastIndex = from;
  const match = anchor.exec(text);
  return match ? { index: match.index, length: match[0].length } : null;
}

/**
 * Each entry's first error word and the sentence (or line) around it, found from the word outwards within a
 * bounded window: a pattern matching the sentence as a whole (`[^.\n]*\berror\b[^.\n]*`) backtracked over every
 * start position of a long line without periods (JSON, logs): quadratic, blocks of 0.5 s per summary.
 */
function findErrorSentences(text: string, drafts: readonly EntryDraft[]): void {
  ERROR_WORD.lastIndex = 0;
  let word = ERROR_WORD.exec(text);
  for (const draft of drafts) {
    if (word && word.index < draft.start) {
      ERROR_WORD.lastIndex = draft.start;
      word = ERROR_WORD.exec(text);
    }
    if (!word) return;
    if (word.index >= draft.end) continue;
    draft.hasError = true;
    add(draft, errorSentenceAround(text, word.index, word.index + word[0].length));
  }
}

/**
 * From the sentence start (after the last period or newline), but at most ERROR_CONTEXT_BEFORE_CHARS before the
 * word, to the next period or newline, at most MAX_ERROR_CHARS in all. Entries are joined by newlines, so the
 * sentence never leaves its entry.
 */
function errorSentenceAround(text: string, wordStart: number, wordEnd: number): string {
  let start = Math.max(0, wordStart - ERROR_CONTEXT_BEFORE_CHARS);
  for (let index = wordStart - 1; index >= start; index--) {
    const character = text[index];
    if (character === "." || character === "\n") {
      start = index + 1;
      break;
    }
  }
  const limit = Math.min(text.length, start + MAX_ERROR_CHARS);
  let end = wordEnd;
  while (end < limit && text[end] !== "." && text[end] !== "\n") end++;
  return text.slice(start, end).trim();
}

/**
 * The words (runs of non-space, as `split(/\s+/)` cuts them) of the entry's first sentence, cut to `words`
 * words: its lines without bullets and expand lines, joined by spaces, up to the first [.!?] followed by a space
 * or the end. Lines are read only until the sentence ends or more than `words` words are in hand.
 */
function gistOf(lines: readonly string[], words: number): string {
  const parts: string[] = [];
  // Whether the sentence may still end: `.` of a sentence pattern does not cross \r, \u2028 or \u2029, so after
  // one of those the "sentence" is every line.
  let isSentenceOpen = true;
  for (const line of lines) {
    const first = line.charCodeAt(0);
    const text = first === 45 /* - */ || first === 42 /* * */ || first === 0x2022 /* • */ ? line.replace(BULLET, "").trim() : line;
    if (text === "" || text.startsWith(EXPAND_LINE_PREFIX)) continue;
    let until = text.length;
    let isLast = false;
    if (isSentenceOpen) {
      // The end of a line is followed by the space that joins the next one (or by the end): a sentence end there.
      SENTENCE_END.lastIndex = 0;
      const end = SENTENCE_END.exec(text);
      if (end && end[0] !== "\r" && end[0] !== "\u2028" && end[0] !== "\u2029") {
        until = end.index + 1;
        isLast = true;
      } else if (end) {
        isSentenceOpen = false;
      }
    }
    if (!pushWords(text, until, parts, words + 1) || isLast) break;
  }
  return parts.length <= words ? parts.join(" ") : `${parts.slice(0, words).join(" ")} ...`;
}

/** Pushes the words of `text` before `until` onto `parts` while it holds fewer than `limit`; false once full. */
function pushWords(text: string, until: number, parts: string[], limit: number): boolean {
  let index = 0;
  for (;;) {
    while (index < until && isSpace(text.charCodeAt(index))) index++;
    if (index >= until) return true;
    if (parts.length >= limit) return false;
    const start = index;
    while (index < until && !isSpace(text.charCodeAt(index))) index++;
    parts.push(text.slice(start, index));
  }
}

/** Exactly the code units `\s` matches (WhiteSpace and LineTerminator of ECMAScript; a test checks all 65,536). */
export function isSpace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 ||
    code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}
