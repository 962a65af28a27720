/**
 * /v1/docs over HTTP: a public page whose every asset is served under /v1/docs/ with a strict
 * Content-Security-Policy, the very document of /v1/openapi.json behind it, GET and HEAD only, and the
 * contract's 404 problem for anything else under it. test/v1/docs/browser.test.ts runs the page.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { startApi } from '../../helpers/api.js';
import { get, parseRaw, send, sendRaw } from '../../helpers/http.js';
import { scriptedLimits } from '../../helpers/scriptedLimits.js';

const PAGE = '/v1/docs';
const CSP =
  "default-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The href and src attributes of an HTML page. */
const linksOf = (html: string) => [...html.matchAll(/\b(?:href|src)="([^"]*)"/g)].map((match) => match[1]!);

t.test('the interactive reference', async (t) => {
  const limits = scriptedLimits();
  const api = await startApi(t, { limits });
  const page = await get(api.base, PAGE);
  const assets = linksOf(page.body);

  t.test('is a public HTML page with a strict CSP, counted against no limit', async (t) => {
    for (const path of [PAGE, `${PAGE}/`]) {
      const response = await get(api.base, path);
      t.equal(response.status, 200, path);
      t.equal(response.headers['content-type'], 'text/html; charset=utf-8');
      t.equal(response.headers['content-security-policy'], CSP);
      t.equal(response.headers['api-version'], '1.4.0');
      t.match(response.body, '<title>Groundwater Monitoring Read API</title>');
    }
    t.same(limits.admitted, [], 'no admission asked for');
    t.same(limits.failedAuth, []);
  });

  t.test('loads every asset from /v1/docs/, each under the same CSP', async (t) => {
    t.same(
      assets.filter((link) => link.endsWith('.js')),
      [
        '/v1/docs/static/swagger-ui-bundle.js',
        '/v1/docs/static/swagger-ui-standalone-preset.js',
        '/v1/docs/static/swagger-initializer.js',
      ],
    );
    for (const asset of assets) {
      t.match(asset, /^\/v1\/docs\/static\/[\w.-]+$/, `${asset} is the service's own`);
      const response = await get(api.base, asset);
      t.equal(response.status, 200, asset);
      t.equal(response.headers['content-security-policy'], CSP, `${asset}: CSP`);
      t.equal(response.headers['api-version'], '1.4.0');
    }
    const initializer = await get(api.base, '/v1/docs/static/swagger-initializer.js');
    t.match(initializer.body, "url: resolveUrl('./json')", 'the page reads the document at /v1/docs/json');
    t.match(initializer.body, 'validatorUrl: null', 'and sends it to no validator');
    t.notMatch(page.body, /https?:\/\//, 'no absolute address in the page');
  });

  t.test('renders the document of /v1/openapi.json', async (t) => {
    const served = await get(api.base, '/v1/openapi.json');
    const rendered = await get(api.base, `${PAGE}/json`);
    t.equal(rendered.status, 200);
    t.equal(rendered.headers['content-type'], 'application/json; charset=utf-8');
    t.same(JSON.parse(rendered.body), JSON.parse(served.body));
    t.equal(rendered.headers['api-version'], served.headers['api-version']);
  });

  t.test('answers HEAD like GET, without a body', async (t) => {
    for (const path of [PAGE, `${PAGE}/json`, assets[0]!]) {
      const [full, head] = [await get(api.base, path), await send(api.base, 'HEAD', path)];
      t.equal(head.status, 200, path);
      t.equal(head.body, '');
      for (const header of ['content-type', 'content-length', 'content-security-policy', 'api-version']) {
        t.equal(head.headers[header], full.headers[header], `${path}: ${header}`);
      }
    }
  });

  t.test('compresses what it sends when the client accepts a coding', async (t) => {
    const decoders = { br: brotliDecompressSync, gzip: gunzipSync };
    for (const path of [PAGE, `${PAGE}/json`, ...assets]) {
      const plain = await get(api.base, path);
      t.equal(plain.headers['content-encoding'], undefined, `${path}: identity unless asked`);
      t.match(plain.headers.vary, /Accept-Encoding/i, `${path}: Vary`);
      for (const [coding, decode] of Object.entries(decoders)) {
        const compressed = await get(api.base, path, { 'accept-encoding': coding });
        t.equal(compressed.status, 200);
        t.equal(compressed.headers['content-encoding'], coding, `${path}: ${coding}`);
        t.match(compressed.headers.vary, /Accept-Encoding/i);
        t.ok(decode(compressed.bytes!).equals(plain.bytes!), `${path}: ${coding} holds the same bytes`);
      }
    }
    const bundle = assets[0]!;
    const [plain, compressed] = [
      await get(api.base, bundle),
      await get(api.base, bundle, { 'accept-encoding': 'gzip, br' }),
    ];
    t.ok(compressed.bytes!.length < plain.bytes!.length / 3, 'the bundle shrinks to under a third');
    t.equal(compressed.headers['content-length'], undefined);
    t.equal(compressed.headers['accept-ranges'], undefined, 'no ranges of a compressed body');
    t.match(compressed.headers.etag, /^W\//, 'a weak ETag: the compressed body is not the file');
    t.equal(compressed.headers.etag, plain.headers.etag);
    const revalidated = await get(api.base, bundle, {
      'accept-encoding': 'br',
      'if-none-match': compressed.headers.etag!,
    });
    t.equal(revalidated.status, 304, 'revalidation with the weak ETag');
    t.equal(revalidated.body, '');
  });

  t.test('is read-only: any other method is 405 with Allow', async (t) => {
    for (const path of [PAGE, `${PAGE}/json`, assets[0]!]) {
      for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
        const response = await send(api.base, method, path, { 'content-type': 'application/json' });
        t.equal(response.status, 405, `${method} ${path}`);
        t.equal(response.headers.allow, 'GET, HEAD');
        t.equal(response.headers['content-type'], 'application/problem+json');
      }
      const unknownMethod = parseRaw(await sendRaw(api.port, `FOO ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
      t.equal(unknownMethod.status, 405, `FOO ${path}: a method the HTTP parser does not know`);
    }
  });

  t.test('answers anything else under /v1/docs/ with the 404 problem', async (t) => {
    const paths = [
      `${PAGE}/nowhere`,
      `${PAGE}/static/nowhere.js`,
      // A folder of the UI's files is no page (@fastify/static would show the distribution's own).
      `${PAGE}/static/`,
      `${PAGE}/static/..%2f..%2fpackage.json`,
    ];
    for (const path of paths) {
      const response = await get(api.base, path);
      t.equal(response.status, 404, path);
      t.equal(response.headers['content-type'], 'application/problem+json');
      t.equal(response.headers['api-version'], '1.4.0');
      t.match(JSON.parse(response.body), { type: 'about:blank', title: 'Not Found', status: 404 });
    }
  });
});
