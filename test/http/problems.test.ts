/**
 * The error surface over real HTTP: every error is application/problem+json with the fields
 * docs/clients.md lists ("Errors"), every response carries API-Version, and only GET and HEAD are served.
 */
import { METHODS } from 'node:http';
import t, { type Test } from 'tap';
import { addKey, addWell } from '../../testkit/fixtures.js';
import { startApi } from '../helpers/api.js';
import { get, type HttpResponse, parseRaw, send, sendRaw } from '../helpers/http.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const measurementsOf = (id: string) => `/v1/groundwater-monitoring-tubes/${id}/measurements`;
const KNOWN_PATHS = [WELLS, measurementsOf('2f1c7a4e-9b1d-4c3e-8f55-0a6d3c9e1b42'), '/v1/openapi.json'];

/** A problem document as the contract defines it; `errors` only on 400. */
function checkProblem(t: Test, response: HttpResponse, status: number, instance?: string) {
  t.equal(response.status, status, 'status');
  t.equal(response.headers['content-type'], 'application/problem+json', 'media type');
  t.equal(response.headers['api-version'], '1.4.0', 'API-Version');
  const body = JSON.parse(response.body);
  t.equal(body.type, 'about:blank');
  t.equal(body.status, status);
  t.equal(typeof body.title, 'string');
  t.equal(typeof body.detail, 'string');
  if (instance !== undefined) t.equal(body.instance, instance, 'instance is the path without query');
  if (status !== 400) t.notOk('errors' in body, 'no errors member outside 400');
  return body;
}

t.test('problem documents and API-Version', async (t) => {
  const api = await startApi(t);
  const [tube] = await addWell(api.db.sql, 'W', [{ number: '1' }]);
  const { key } = await addKey(api.db.sql, { tubeIds: [tube!.id] });

  t.test('unknown paths are 404 problems, whatever the method or body', async (t) => {
    for (const path of ['/', '/v1', '/v2/groundwater-monitoring-wells', `${WELLS}/`, '/V1/openapi.json']) {
      const body = checkProblem(t, await get(api.base, `${path}?x=1`), 404, path);
      t.equal(body.title, 'Not Found');
    }
    // A body of a media type nobody parses: the route decides first (404), not the body parser (415).
    const posted = await send(api.base, 'POST', '/nowhere', { 'content-type': 'application/xml' });
    checkProblem(t, posted, 404, '/nowhere');
  });

  t.test('every method but GET and HEAD is 405 with Allow on every known path', async (t) => {
    const others = METHODS.filter((m) => !['GET', 'HEAD', 'CONNECT'].includes(m));
    for (const path of KNOWN_PATHS) {
      for (const method of others) {
        const response = await send(api.base, method, path, { 'content-type': 'application/xml' });
        const body = checkProblem(t, response, 405, path);
        t.equal(body.title, 'Method Not Allowed');
        t.equal(response.headers.allow, 'GET, HEAD', `${method} ${path}: Allow`);
      }
    }
  });

  t.test('methods the HTTP parser does not know, and CONNECT, are 405 on known paths too', async (t) => {
    for (const method of ['FOO', 'get', 'CONNECT']) {
      const known = parseRaw(await sendRaw(api.port, `${method} ${WELLS} HTTP/1.1\r\nHost: x\r\n\r\n`));
      checkProblem(t, known, 405, WELLS);
      t.equal(known.headers.allow, 'GET, HEAD');
      const unknown = parseRaw(await sendRaw(api.port, `${method} /nowhere HTTP/1.1\r\nHost: x\r\n\r\n`));
      checkProblem(t, unknown, 404, '/nowhere');
    }
  });

  t.test('405 comes before the key is checked', async (t) => {
    const response = await send(api.base, 'DELETE', WELLS, { 'x-api-key': 'nonsense' });
    checkProblem(t, response, 405, WELLS);
  });

  t.test('malformed requests that never reach a route are problems too', async (t) => {
    const badRequest = parseRaw(await sendRaw(api.port, 'GET /a b c\r\n\r\n'));
    checkProblem(t, badRequest, 400);
    const huge = parseRaw(
      await sendRaw(api.port, `GET ${WELLS} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    checkProblem(t, huge, 431);
    const badEncoding = await get(api.base, `${WELLS}/%zz`, { 'x-api-key': key });
    checkProblem(t, badEncoding, 400);
    const badTubeEncoding = await get(api.base, measurementsOf('%E0%A4%A'), { 'x-api-key': key });
    checkProblem(t, badTubeEncoding, 400);
  });

  t.test('a very long tube identifier is the ordinary 404 of a malformed identifier', async (t) => {
    for (const id of ['x'.repeat(2000), 'x'.repeat(999)]) {
      const response = await get(
        api.base,
        `${measurementsOf(id)}?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z`,
        {
          'x-api-key': key,
        },
      );
      checkProblem(t, response, 404, measurementsOf(id));
    }
  });

  t.test('API-Version on successes, 304 and HEAD', async (t) => {
    const ok = await get(api.base, WELLS, { 'x-api-key': key });
    t.equal(ok.status, 200);
    t.equal(ok.headers['api-version'], '1.4.0');
    const doc = await get(api.base, '/v1/openapi.json');
    t.equal(doc.headers['api-version'], '1.4.0');
    const notModified = await get(api.base, '/v1/openapi.json', {
      'if-none-match': String(doc.headers.etag),
    });
    t.equal(notModified.status, 304);
    t.equal(notModified.headers['api-version'], '1.4.0');
    const head = await send(api.base, 'HEAD', WELLS, { 'x-api-key': key });
    t.equal(head.status, 200);
    t.equal(head.headers['api-version'], '1.4.0');
    t.equal(head.body, '');
  });

  t.test('every response has a request id, and a new one each time', async (t) => {
    const a = await get(api.base, '/nowhere');
    const b = await get(api.base, '/nowhere');
    t.match(a.headers['x-request-id'], /^[0-9a-f-]{36}$/);
    t.not(a.headers['x-request-id'], b.headers['x-request-id']);
  });
});
