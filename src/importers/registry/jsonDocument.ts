/**
 * A JSON text parsed strictly (no comments, no trailing commas, no duplicate keys), keeping where each
 * value was, so that errors can name their line. jsonc-parser (VS Code's) gives node offsets and reports
 * every syntax error with its position, which JSON.parse does not.
 */
import jsonc from 'jsonc-parser';
import type { RegistryPath } from './registryTypes.js';

const SYNTAX: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'malformed number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: "expected ':'",
  CommaExpected: "expected ','",
  CloseBraceExpected: "expected '}'",
  CloseBracketExpected: "expected ']'",
  EndOfFileExpected: 'unexpected text after the end of the document',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'malformed number',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape sequence',
  InvalidCharacter: 'control character inside a string',
};

export type JsonParse =
  | { ok: true; value: unknown; lineOf: (path: RegistryPath) => number }
  | { ok: false; line: number; reason: string };

export function parseJsonDocument(text: string): JsonParse {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lineStarts = findLineStarts(body);
  const lineAt = (offset: number) => lineOfOffset(lineStarts, offset);
  const errors: jsonc.ParseError[] = [];
  const tree = jsonc.parseTree(body, errors, { disallowComments: true, allowTrailingComma: false });
  // Only the first: after a syntax error the parser's recovery guesses, and its later errors mislead.
  const first = errors[0];
  if (first || !tree) {
    return {
      ok: false,
      line: lineAt(first?.offset ?? 0),
      reason: first ? SYNTAX[jsonc.printParseErrorCode(first.error)]! : 'expected a value',
    };
  }
  const duplicate = findDuplicateKey(tree);
  if (duplicate)
    return { ok: false, line: lineAt(duplicate.offset), reason: `duplicate key "${duplicate.value}"` };
  return {
    ok: true,
    value: jsonc.getNodeValue(tree),
    lineOf: (path) => {
      // A missing field has no node: point at the nearest enclosing value instead.
      for (let length = path.length; length >= 0; length--) {
        const node = jsonc.findNodeAtLocation(tree, path.slice(0, length) as jsonc.JSONPath);
        if (node) return lineAt(node.offset);
      }
      return 1;
    },
  };
}

/** JSON.parse would silently keep the last of two equal keys; an operator's typo deserves a message. */
function findDuplicateKey(node: jsonc.Node): jsonc.Node | undefined {
  if (node.type === 'object') {
    const seen = new Set<unknown>();
    for (const property of node.children ?? []) {
      const key = property.children?.[0];
      if (key && seen.has(key.value)) return key;
      seen.add(key?.value);
    }
  }
  for (const child of node.children ?? []) {
    const found = findDuplicateKey(child);
    if (found) return found;
  }
  return undefined;
}

function findLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line of a character offset. */
function lineOfOffset(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}
