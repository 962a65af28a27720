/**
 * The metric names a PromQL expression reads, without a PromQL parser: strings, label matchers, ranges
 * and label lists (`by (…)`, `on (…)`) are removed first, then every remaining identifier not called
 * like a function and not an operator keyword is a metric (or recorded series) name.
 */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring']);
const LABEL_LISTS = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;
const IDENTIFIER = /(?<![\w.:])[a-zA-Z_:][\w:]*/g;

export function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(LABEL_LISTS, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(IDENTIFIER)) {
    const calledAsFunction = /^\s*\(/.test(bare.slice(match.index + match[0].length));
    if (!calledAsFunction && !KEYWORDS.has(match[0])) names.add(match[0]);
  }
  return [...names];
}

/** Every metric name a Prometheus text exposition declares or samples (histograms: with their suffixes). */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      const [, name, kind] = type as unknown as [string, string, string];
      names.add(name);
      if (kind === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      if (kind === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
    } else if (line !== '' && !line.startsWith('#')) {
      names.add(/^[^{\s]+/.exec(line)![0]);
    }
  }
  return names;
}

/** A comparison with a number that ends an alert expression or one of its `or` branches. */
const THRESHOLD = /\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\s*$/i;

/**
 * What an alert compares with its threshold: `a > 1 or b > 60` becomes `a or b`. Unchanged when no
 * branch ends in a comparison with a number.
 */
export const withoutThreshold = (expression: string) =>
  expression
    .split(/\s+or\s+/)
    .map((branch) => branch.replace(THRESHOLD, ''))
    .join(' or ');
