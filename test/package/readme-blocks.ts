/** One fenced code block of the README or a docs page. */
export interface ReadmeBlock {
  /** Position among all fenced blocks, in document order. */
  index: number;
  lang: string;
  code: string;
  /** A block whose first line is a comment naming a file (`# toolwatch.yaml`) is that file. */
  file?: string;
  /** The prose between the previous block (or the page's start) and this one. */
  intro: string;
}

/** A Markdown page's fenced code blocks, in order. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const out: ReadmeBlock[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let end = 0;
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) {
    const code = m[2]!;
    const named = /^(?:#|\/\/) ([\w.-]+\.(?:ya?ml|json|m?js|ts))\n/.exec(code);
    const intro = markdown.slice(end, m.index);
    end = m.index + m[0].length;
    out.push({ index: out.length, lang: m[1] ?? '', code, intro, ...(named ? { file: named[1] } : {}) });
  }
  return out;
}
