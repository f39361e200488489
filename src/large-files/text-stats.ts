/** Counts over a text that several explorers report, computed without splitting the whole text into arrays. */

/** Lines of a text: newlines + 1, not counting a final newline; 0 for "". */
export function countLines(text: string): number {
  if (text === "") return 0;
  let count = 1;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) count++;
  return text.endsWith("\n") ? count - 1 : count;
}

/** Whitespace-separated words. */
export function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const isSpace = code === 32 || (code >= 9 && code <= 13) || code === 160;
    if (!isSpace && !inWord) count++;
    inWord = !isSpace;
  }
  return count;
}
