import { RE2JS } from 're2js';

/**
 * Static check for regular expressions that can backtrack catastrophically, used to refuse
 * `matches` patterns when a policy is loaded (a policy is configuration, but a pattern that
 * takes minutes on one long argument would stall the span processor on the hot path).
 *
 * The check is conservative: it parses the pattern (JavaScript syntax, no flags, as the
 * scorer compiles it) and refuses
 * - a repeated group (`*`, `+`, `{n,}`, `{n,m}` with m > 1) whose body can match the empty
 *   string (`(a*)*`, `(.*)*`, `(a?)+`);
 * - a repeated group whose body contains a repetition that can end where the next
 *   character could equally continue it (`(a+)+`, `(\w+\s?)+`, `(.*a)*`) — the classic
 *   exponential shape; `(\d+\.)+` is accepted because the `.` separates the iterations;
 * - a repeated group containing an alternation whose branches can start with the same
 *   character (`(a|a)*`, `(a|ab)+`, `(\w|\d)*`);
 * - backreferences (their cost cannot be bounded statically), and patterns longer than
 *   `MAX_PATTERN_LENGTH`;
 * - syntax RE2 does not have (lookarounds, backreferences, `\u` escapes), since patterns are
 *   matched with RE2JS, a linear-time engine (`compileSafeRegex`).
 * Polynomial shapes such as `.*.*=` are accepted: RE2JS runs them in linear time.
 */

/** A compiled `matches` pattern: linear-time search, whatever the input length. */
export interface SafeRegex {
  readonly source: string;
  /** True when the pattern occurs anywhere in `text` (search, like Python `re.search`). */
  test(text: string): boolean;
}

/**
 * Compiles a pattern that passed `checkRegexSafety`; throws with the reason otherwise.
 * Matching runs on RE2JS (linear time): the static check alone cannot bound polynomial
 * shapes such as `\w+@` searched in a multi-megabyte argument, which take hours with a
 * backtracking engine.
 */
export function compileSafeRegex(pattern: string): SafeRegex {
  const safety = checkRegexSafety(pattern);
  if (!safety.safe) throw new Error(safety.reason);
  const re = RE2JS.compile(pattern);
  return { source: pattern, test: (text) => re.test(text) };
}

/** Longest pattern accepted, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 1000;

export type RegexSafety = { safe: true } | { safe: false; reason: string };

/** Whether `pattern` compiles (no flags) and cannot backtrack catastrophically. */
export function checkRegexSafety(pattern: string): RegexSafety {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return { safe: false, reason: `pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  }
  try {
    new RegExp(pattern);
  } catch (e) {
    return { safe: false, reason: (e as Error).message };
  }
  try {
    RE2JS.compile(pattern);
  } catch (e) {
    return {
      safe: false,
      reason: `not supported by the linear-time engine (RE2 syntax): ${(e as Error).message}`,
    };
  }
  let ast: Node;
  try {
    ast = new Parser(pattern).parse();
  } catch (e) {
    return { safe: false, reason: (e as Error).message };
  }
  const reason = findHazard(ast);
  return reason === undefined ? { safe: true } : { safe: false, reason };
}

// ---------------------------------------------------------------------------------------
// Character sets as sorted, disjoint, inclusive code-unit ranges.

type Ranges = ReadonlyArray<readonly [number, number]>;

const MAX_CHAR = 0x10ffff;
const ANY: Ranges = [[0, MAX_CHAR]];
const NONE: Ranges = [];
const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: Ranges = normalize([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const DOT: Ranges = complement(
  normalize([
    [0x0a, 0x0a],
    [0x0d, 0x0d],
    [0x2028, 0x2029],
  ]),
);

function normalize(ranges: Array<readonly [number, number]>): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function union(a: Ranges, b: Ranges): Ranges {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return normalize([...a, ...b]);
}

function complement(a: Ranges): Ranges {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [lo, hi] of a) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CHAR) out.push([next, MAX_CHAR]);
  return out;
}

function overlaps(a: Ranges, b: Ranges): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [alo, ahi] = a[i]!;
    const [blo, bhi] = b[j]!;
    if (alo <= bhi && blo <= ahi) return true;
    if (ahi < bhi) i++;
    else j++;
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// AST

type Node =
  | { type: 'char'; set: Ranges }
  | { type: 'empty' }
  | { type: 'seq'; items: Node[] }
  | { type: 'alt'; branches: Node[] }
  | { type: 'group'; body: Node; lookaround: boolean }
  | { type: 'quant'; body: Node; min: number; max: number };

class Parser {
  private _i = 0;

  constructor(private readonly _s: string) {}

  parse(): Node {
    const node = this._alternation();
    if (this._i < this._s.length) throw new Error(`unexpected '${this._s[this._i]}' at ${this._i}`);
    return node;
  }

  private _alternation(): Node {
    const branches = [this._sequence()];
    while (this._s[this._i] === '|') {
      this._i++;
      branches.push(this._sequence());
    }
    return branches.length === 1 ? branches[0]! : { type: 'alt', branches };
  }

  private _sequence(): Node {
    const items: Node[] = [];
    while (this._i < this._s.length && this._s[this._i] !== '|' && this._s[this._i] !== ')') {
      const atom = this._atom();
      items.push(this._quantifier(atom));
    }
    return { type: 'seq', items };
  }

  private _quantifier(atom: Node): Node {
    const c = this._s[this._i];
    let min: number;
    let max: number;
    if (c === '*') {
      min = 0;
      max = Number.POSITIVE_INFINITY;
      this._i++;
    } else if (c === '+') {
      min = 1;
      max = Number.POSITIVE_INFINITY;
      this._i++;
    } else if (c === '?') {
      min = 0;
      max = 1;
      this._i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this._s.slice(this._i));
      // Annex B: a `{` that does not start a valid quantifier is a literal.
      if (!m) return atom;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
      this._i += m[0].length;
    } else {
      return atom;
    }
    if (this._s[this._i] === '?') this._i++;
    return this._quantifier({ type: 'quant', body: atom, min, max });
  }

  private _atom(): Node {
    const s = this._s;
    const c = s[this._i]!;
    if (c === '(') {
      this._i++;
      let lookaround = false;
      if (s.startsWith('?:', this._i)) this._i += 2;
      else if (s.startsWith('?=', this._i) || s.startsWith('?!', this._i)) {
        this._i += 2;
        lookaround = true;
      } else if (s.startsWith('?<=', this._i) || s.startsWith('?<!', this._i)) {
        this._i += 3;
        lookaround = true;
      } else if (s.startsWith('?<', this._i)) {
        const end = s.indexOf('>', this._i);
        if (end < 0) throw new Error('unterminated group name');
        this._i = end + 1;
      } else if (s[this._i] === '?') {
        throw new Error(`unsupported group syntax at ${this._i - 1}`);
      }
      const body = this._alternation();
      if (s[this._i] !== ')') throw new Error('unterminated group');
      this._i++;
      return { type: 'group', body, lookaround };
    }
    if (c === '[') return { type: 'char', set: this._class() };
    if (c === '.') {
      this._i++;
      return { type: 'char', set: DOT };
    }
    if (c === '^' || c === '$') {
      this._i++;
      return { type: 'empty' };
    }
    if (c === '\\') return this._escape();
    this._i++;
    return { type: 'char', set: [[c.charCodeAt(0), c.charCodeAt(0)]] };
  }

  private _escape(): Node {
    const s = this._s;
    const c = s[this._i + 1];
    if (c === undefined) throw new Error('pattern ends with a backslash');
    if (c === 'b' || c === 'B') {
      this._i += 2;
      return { type: 'empty' };
    }
    if (/[1-9]/.test(c) || (c === 'k' && s[this._i + 2] === '<')) {
      throw new Error('backreferences are not allowed (their cost cannot be bounded)');
    }
    return { type: 'char', set: this._classEscape() };
  }

  /** An escape inside or outside a class, as a set; advances past it. */
  private _classEscape(): Ranges {
    const s = this._s;
    const c = s[this._i + 1]!;
    this._i += 2;
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return complement(DIGIT);
      case 'w':
        return WORD;
      case 'W':
        return complement(WORD);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 'n':
        return [[0x0a, 0x0a]];
      case 'r':
        return [[0x0d, 0x0d]];
      case 't':
        return [[0x09, 0x09]];
      case 'f':
        return [[0x0c, 0x0c]];
      case 'v':
        return [[0x0b, 0x0b]];
      case '0':
        return [[0, 0]];
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(s.slice(this._i));
        if (!m) return [[0x78, 0x78]];
        this._i += 2;
        const v = Number.parseInt(m[0], 16);
        return [[v, v]];
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(s.slice(this._i));
        if (!m) return [[0x75, 0x75]];
        this._i += 4;
        const v = Number.parseInt(m[0], 16);
        return [[v, v]];
      }
      case 'c':
        // `\cX` is a control character; its exact value does not matter for overlap tests.
        return ANY;
      default:
        return [[c.charCodeAt(0), c.charCodeAt(0)]];
    }
  }

  private _class(): Ranges {
    const s = this._s;
    this._i++;
    let negated = false;
    if (s[this._i] === '^') {
      negated = true;
      this._i++;
    }
    let set: Ranges = NONE;
    while (this._i < s.length && s[this._i] !== ']') {
      const lo = this._classAtom();
      if (s[this._i] === '-' && s[this._i + 1] !== ']' && this._i + 1 < s.length) {
        this._i++;
        const hi = this._classAtom();
        if (lo.length === 1 && hi.length === 1 && lo[0]![0] === lo[0]![1] && hi[0]![0] === hi[0]![1]) {
          set = union(set, [[lo[0]![0], hi[0]![0]]]);
        } else {
          // `[\d-z]` (Annex B): the dash is literal.
          set = union(union(union(set, lo), hi), [[0x2d, 0x2d]]);
        }
      } else {
        set = union(set, lo);
      }
    }
    if (s[this._i] !== ']') throw new Error('unterminated character class');
    this._i++;
    return negated ? complement(set) : set;
  }

  private _classAtom(): Ranges {
    const s = this._s;
    if (s[this._i] === '\\') {
      if (s[this._i + 1] === 'b') {
        this._i += 2;
        return [[0x08, 0x08]];
      }
      return this._classEscape();
    }
    const code = s.charCodeAt(this._i);
    this._i++;
    return [[code, code]];
  }
}

// ---------------------------------------------------------------------------------------
// Analysis

interface Summary {
  /** Characters that can start a non-empty match. */
  first: Ranges;
  nullable: boolean;
}

function summarize(node: Node): Summary {
  switch (node.type) {
    case 'char':
      return { first: node.set, nullable: false };
    case 'empty':
      return { first: NONE, nullable: true };
    case 'group':
      // Lookarounds consume nothing.
      return node.lookaround ? { first: NONE, nullable: true } : summarize(node.body);
    case 'quant': {
      const inner = summarize(node.body);
      return { first: node.max === 0 ? NONE : inner.first, nullable: node.min === 0 || inner.nullable };
    }
    case 'alt': {
      let first: Ranges = NONE;
      let nullable = false;
      for (const b of node.branches) {
        const sb = summarize(b);
        first = union(first, sb.first);
        nullable ||= sb.nullable;
      }
      return { first, nullable };
    }
    case 'seq': {
      let first: Ranges = NONE;
      for (const item of node.items) {
        const si = summarize(item);
        first = union(first, si.first);
        if (!si.nullable) return { first, nullable: false };
      }
      return { first, nullable: true };
    }
  }
}

function repeats(node: Node): node is Extract<Node, { type: 'quant' }> {
  return node.type === 'quant' && node.max > 1;
}

/** The first hazard found in the tree, as a message; undefined when none. */
function findHazard(root: Node): string | undefined {
  let hazard: string | undefined;
  const visit = (node: Node): void => {
    if (hazard !== undefined) return;
    if (repeats(node)) {
      hazard = loopHazard(node.body);
      if (hazard !== undefined) return;
    }
    for (const child of children(node)) visit(child);
  };
  visit(root);
  return hazard;
}

function children(node: Node): Node[] {
  switch (node.type) {
    case 'seq':
      return node.items;
    case 'alt':
      return node.branches;
    case 'group':
    case 'quant':
      return [node.body];
    default:
      return [];
  }
}

/** Why repeating `body` is dangerous, or undefined. */
function loopHazard(body: Node): string | undefined {
  const whole = summarize(body);
  if (whole.nullable) return 'a repeated group can match the empty string (nested quantifier such as (a*)*)';
  let hazard: string | undefined;
  // `follow` = what can come right after `node` inside one iteration, plus (when the rest of
  // the iteration is optional) the start of the next iteration.
  const walk = (node: Node, follow: Ranges): void => {
    if (hazard !== undefined) return;
    switch (node.type) {
      case 'seq': {
        for (let i = 0; i < node.items.length; i++) {
          let after: Ranges = NONE;
          let restNullable = true;
          for (let j = i + 1; j < node.items.length; j++) {
            const sj = summarize(node.items[j]!);
            after = union(after, sj.first);
            if (!sj.nullable) {
              restNullable = false;
              break;
            }
          }
          walk(node.items[i]!, restNullable ? union(after, follow) : after);
        }
        return;
      }
      case 'alt': {
        const firsts = node.branches.map((b) => summarize(b).first);
        for (let i = 0; i < firsts.length; i++) {
          for (let j = i + 1; j < firsts.length; j++) {
            if (overlaps(firsts[i]!, firsts[j]!)) {
              hazard = 'a repeated group contains alternatives that can match the same text (such as (a|a)*)';
              return;
            }
          }
        }
        for (const b of node.branches) walk(b, follow);
        return;
      }
      case 'group':
        if (!node.lookaround) walk(node.body, follow);
        return;
      case 'quant': {
        const inner = summarize(node.body);
        if (node.max > 1 && overlaps(inner.first, follow)) {
          hazard =
            'a repeated group contains a repetition that can match the same text in more than one way (nested quantifier such as (a+)+)';
          return;
        }
        walk(node.body, node.max > 1 ? union(follow, inner.first) : follow);
        return;
      }
      default:
        return;
    }
  };
  walk(body, whole.first);
  return hazard;
}
