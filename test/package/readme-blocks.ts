/** One fenced code block of the README. */
export interface ReadmeBlock {
  /** Position among all fenced blocks, in document order. */
  index: number;
  lang: string;
  code: string;
  /** A block whose first line is a comment naming a file (`# toolwatch.yaml`) is that file. */
  file?: string;
}

/** The README's fenced code blocks, in order. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const out: ReadmeBlock[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) {
    const code = m[2]!;
    const named = /^(?:#|\/\/) ([\w.-]+\.(?:ya?ml|json|m?js|ts))\n/.exec(code);
    out.push({ index: out.length, lang: m[1] ?? '', code, ...(named ? { file: named[1] } : {}) });
  }
  return out;
}
