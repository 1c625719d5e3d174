import { describe, expect, it } from 'vitest';
import { configDigest, sha256Hex } from '../../src/util/digest.js';

describe('sha256Hex', () => {
  it('hashes UTF-8 bytes', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('configDigest', () => {
  // Vectors computed by upstream ToolCallScorer.digest().
  it('matches agno ToolCallScorer digest vectors', () => {
    expect(configDigest({ expected_tools: ['search'], arguments: null, allow_additional: true })).toBe(
      'a49447512b83d31a985eb3156303543762fc63c39b90d575a5537c006014293b',
    );
    expect(configDigest({ allow_additional: false, expected_tools: ['search'], arguments: null })).toBe(
      '8818bf61542c1cc4a047e11a492853478614af3cb0ddda3802adabb11e14ba61',
    );
    expect(
      configDigest({ expected_tools: ['search', 'summarize'], arguments: null, allow_additional: true }),
    ).toBe('013d4744dd744a995ab9c1d4c5a13b681bc55952984bb3f79640850627a5b693');
    expect(
      configDigest({
        expected_tools: ['search'],
        arguments: { search: { query: 'agno' } },
        allow_additional: true,
      }),
    ).toBe('49840d8071c89ff46e4da02d4df237ac861566f0fecd7271dacec00a88850f1f');
    expect(
      configDigest({
        expected_tools: ['search'],
        arguments: { search: [{ query: 'agno' }] },
        allow_additional: true,
      }),
    ).toBe('979cfe3f75a43c497b79d0c300a9490e995a7656362fa1ef40b04ba14b0fefa2');
  });

  it('is sha256 of the canonical text', () => {
    expect(configDigest({ b: 1, a: 'é' })).toBe(sha256Hex('{"a":"\\u00e9","b":1}'));
  });
});
