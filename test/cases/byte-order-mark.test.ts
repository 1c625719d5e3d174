import { describe, expect, it } from 'vitest';
import { parseCasesText } from '../../src/cases/load-cases.js';

const BOM = '\uFEFF';

describe('case files written by Windows tools', () => {
  it('reads a YAML list and JSON Lines (CRLF) that start with a byte-order mark', () => {
    const yaml = `${BOM}- id: refund\n  input: I want a refund\n  expected_tools: [get_order]\n`;
    expect(parseCasesText(yaml, 'cases.yaml').map((c) => c.id)).toEqual(['refund']);
    const jsonl = `${BOM}{"id":"refund","input":"I want a refund","expected_tools":["get_order"]}\r\n{"id":"other","input":"hi","expected_tools":["x"]}\r\n`;
    expect(parseCasesText(jsonl, 'cases.jsonl').map((c) => c.id)).toEqual(['refund', 'other']);
  });
});
