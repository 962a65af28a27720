/**
 * The CSV line rules beyond "split at commas": fields optionally in double quotes, `""` for a quote
 * inside them. Lines without a quote never come here (the fast path splits them in place). A quoted
 * field may not span lines: no measurement field can contain a line break, and line numbers stay true.
 */

export type SplitLine = { ok: true; fields: string[] } | { ok: false; reason: string };

export function splitQuotedLine(line: string): SplitLine {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34 /* " */) {
      let value = '';
      let from = i + 1;
      for (;;) {
        const quote = line.indexOf('"', from);
        if (quote === -1)
          return { ok: false, reason: 'unterminated quoted field (a field cannot span lines)' };
        value += line.slice(from, quote);
        if (line.charCodeAt(quote + 1) === 34) {
          value += '"';
          from = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return { ok: true, fields };
      if (line.charCodeAt(i) !== 44 /* , */) return { ok: false, reason: 'text after a closing quote' };
      i++;
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      const value = line.slice(i, end);
      if (value.includes('"')) return { ok: false, reason: 'a double quote inside an unquoted field' };
      fields.push(value);
      if (comma === -1) return { ok: true, fields };
      i = comma + 1;
    }
  }
}
