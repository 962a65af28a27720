/** The tube registry as the import file (and the demo) states it. */
export interface RegistryTube {
  /** The tube's public UUID; case does not matter. */
  identifier: string;
  number: string;
  /** Default `m`. */
  unit?: string;
  /** Default `NAP`. */
  verticalDatum?: string;
  /** Elevations in the tube's unit, relative to its vertical datum; left out: unknown. */
  groundLevel?: number;
  tubeTop?: number;
  /** Given together with screenBottom, and above it. */
  screenTop?: number;
  screenBottom?: number;
}

/** WGS 84 decimal degrees. */
export interface RegistryLocation {
  longitude: number;
  latitude: number;
}

export interface RegistryWell {
  name: string;
  /** Left out: unknown. */
  location?: RegistryLocation;
  tubes: readonly RegistryTube[];
}

/** Where in the registry a value sits, as a JSON path: `[3, 'tubes', 0, 'identifier']`. */
export type RegistryPath = readonly (string | number)[];

/** One reason a registry is refused. */
export interface RegistryIssue {
  path: RegistryPath;
  reason: string;
  /** For duplicates: where the value was first used. */
  sameAs?: RegistryPath;
}

/** `[3].tubes[0].identifier`: the path as the operator reads it. */
export function formatPath(path: RegistryPath): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

/** A registry that was refused; nothing of it was written. */
export class RegistryRejected extends Error {
  override name = 'RegistryRejected';
  constructor(readonly issues: readonly RegistryIssue[]) {
    super(
      `registry refused: ${issues
        .map(
          (i) => `${formatPath(i.path)}: ${i.reason}${i.sameAs ? ` (first at ${formatPath(i.sameAs)})` : ''}`,
        )
        .join('; ')}`,
    );
  }
}
