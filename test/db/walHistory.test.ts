/**
 * Timeline histories alone: a history file's text as PostgreSQL writes it, where a place lies on it, and
 * which places are on it (the rule every sync token is checked by). test/v1/replicas/history.test.ts runs
 * the same rule on real promotions.
 */
import t from 'tap';
import {
  lsnOf,
  parseTimelineHistory,
  placeOn,
  placeOnHistory,
  type TimelineHistory,
} from '../../src/db/walHistory.js';

const SYSTEM = 7_312_415_190_288_741_234n;
/** Timeline 3: 1 ended at 0/40385E8 (a switch-over), 2 at 0/4044B10 (a restore to a point). */
const TEXT = '1\t0/40385E8\tno recovery target specified\n\n2\t0/4044B10\tbefore 2026-11-27 20:00:00+00\n';
const history: TimelineHistory = { system: SYSTEM, spans: parseTimelineHistory(TEXT, 3), began: new Date(0) };
const place = (timeline: number, begin: string, lsn: string) => ({
  system: SYSTEM,
  timeline,
  begin: lsnOf(begin),
  lsn: lsnOf(lsn),
});

t.test('a history file: each timeline ends where the next begins', async (t) => {
  t.same(history.spans, [
    { timeline: 1, begin: 0n, end: 0x40385e8n },
    { timeline: 2, begin: 0x40385e8n, end: 0x4044b10n },
    { timeline: 3, begin: 0x4044b10n, end: (1n << 64n) - 1n },
  ]);
  t.same(parseTimelineHistory(null, 5), [{ timeline: 5, begin: 0n, end: (1n << 64n) - 1n }], 'unreadable');
  t.same(parseTimelineHistory(undefined, 1), [{ timeline: 1, begin: 0n, end: (1n << 64n) - 1n }]);
  t.equal(lsnOf('16/B374D848'), 0x16b374d848n);
});

t.test('placeOn: the timeline whose span holds the LSN, its end included', async (t) => {
  t.same(placeOn(history, 0x100n), place(1, '0/0', '0/100'));
  t.same(placeOn(history, 0x40385e8n), place(1, '0/0', '0/40385E8'), 'a switch point belongs to the parent');
  t.same(placeOn(history, 0x40385e9n), place(2, '0/40385E8', '0/40385E9'));
  t.same(placeOn(history, 0x5000000n), place(3, '0/4044B10', '0/5000000'));
});

t.test('placeOnHistory: on, later or off', async (t) => {
  t.equal(placeOnHistory(history, place(1, '0/0', '0/40385E8')), 'on', 'before a switch-over');
  t.equal(placeOnHistory(history, place(2, '0/40385E8', '0/4044B10')), 'on', 'up to the restore point');
  t.equal(placeOnHistory(history, place(2, '0/40385E8', '0/4044B11')), 'off', 'past it: undone');
  t.equal(placeOnHistory(history, place(3, '0/4044B10', '1/0')), 'on', 'the current timeline');
  t.equal(
    placeOnHistory(history, place(2, '0/3000000', '0/4000000')),
    'off',
    'a timeline 2 of another branch',
  );
  t.equal(placeOnHistory(history, place(4, '0/6000000', '0/6000100')), 'later', 'a timeline not yet met');
  t.equal(
    placeOnHistory(history, { ...place(1, '0/0', '0/100'), system: SYSTEM + 1n }),
    'off',
    'another cluster',
  );
  const unreadable = { ...history, spans: parseTimelineHistory(null, 3) };
  t.equal(placeOnHistory(unreadable, place(1, '0/0', '0/100')), 'off', 'without the history: only its own');
  t.equal(placeOnHistory(unreadable, placeOn(unreadable, 0x7000000n)), 'on');
});
