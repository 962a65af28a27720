/**
 * A Grafana dashboard's PromQL as Grafana sends it to Prometheus: the panels' targets (rows' own
 * panels too), and the variables filled in as Grafana's Prometheus data source fills them.
 */
export interface Target {
  expr: string;
  refId: string;
}
export interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
  panels?: Panel[];
}
export interface Variable {
  name: string;
  type: string;
  query: string;
  multi?: boolean;
  includeAll?: boolean;
}
export interface Dashboard {
  schemaVersion: number;
  templating: { list: Variable[] };
  panels: Panel[];
}

/** Every target of every panel, named by panel title and refId. */
export function panelTargets(dashboard: Dashboard): { where: string; panel: Panel; expr: string }[] {
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  return panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `panel "${panel.title}" ${target.refId}`,
      panel,
      expr: target.expr,
    })),
  );
}

/** `label_values(SELECTOR, LABEL)`, the query of a Prometheus label variable. */
export function labelValuesQuery(query: string): { selector: string; label: string } {
  const match = /^label_values\((.+),\s*(\w+)\)$/.exec(query.trim());
  if (!match) throw new Error(`not a label_values query: ${query}`);
  return { selector: match[1]!, label: match[2]! };
}

/**
 * A multi-value variable in a regex matcher (`=~"$instance"`), as Grafana writes it: each value with its
 * regex characters escaped (the backslash doubled, for the PromQL string), several as `(a|b)`.
 */
export function regexValue(values: string[]): string {
  const escaped = values.map((value) => value.replace(/[$^*{}[\]'+?.()|\\]/g, '\\\\$&'));
  return escaped.length === 1 ? escaped[0]! : `(${escaped.join('|')})`;
}

/** Grafana's $__rate_interval: max($__interval + scrape interval, 4 × scrape interval), in seconds. */
export const rateIntervalSeconds = (intervalSeconds: number, scrapeSeconds: number) =>
  Math.max(intervalSeconds + scrapeSeconds, 4 * scrapeSeconds);

/** `text` with `$name` and `${name}` replaced from `values`; a variable without a value throws. */
export function interpolate(text: string, values: Record<string, string>): string {
  return text.replace(/\$(?:\{(\w+)\}|(\w+))/g, (_, braced: string | undefined, bare: string | undefined) => {
    const name = (braced ?? bare)!;
    const value = values[name];
    if (value === undefined) throw new Error(`no value for the variable $${name} in ${text}`);
    return value;
  });
}
