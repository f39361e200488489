/**
 * Two texts in two columns, for previews that compare what is stored with what would replace it (`lcm repair`).
 * Each text is wrapped to its column's width at spaces (a word longer than the column is cut), line breaks kept.
 */
export function sideBySide(left: { title: string; text: string }, right: { title: string; text: string }, width = 110): string {
  const column = Math.max(20, Math.floor((width - 3) / 2));
  const leftLines = [left.title, "─".repeat(column), ...wrap(left.text, column)];
  const rightLines = [right.title, "─".repeat(column), ...wrap(right.text, column)];
  const rows = Math.max(leftLines.length, rightLines.length);
  const lines: string[] = [];
  for (let row = 0; row < rows; row++) {
    lines.push(`${(leftLines[row] ?? "").padEnd(column)} │ ${rightLines[row] ?? ""}`.trimEnd());
  }
  return lines.join("\n");
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(" ")) {
      for (let piece = word; piece.length > 0; piece = piece.slice(width)) {
        const part = piece.slice(0, width);
        if (line.length > 0 && line.length + 1 + part.length > width) {
          lines.push(line);
          line = part;
        } else {
          line = line.length > 0 ? `${line} ${part}` : part;
        }
      }
    }
    lines.push(line);
  }
  return lines;
}
