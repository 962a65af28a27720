/** The budget of kept values: least recently used first out, growth counted, the newest kept. */
import t from 'tap';
import { BudgetCache } from '../../src/http/budgetCache.js';

const kept = (cache: BudgetCache<string>, keys: string[]) =>
  keys.filter((key) => cache.get(key) !== undefined);

t.test('beyond the budget, the least recently used goes first', async (t) => {
  const cache = new BudgetCache<string>(30);
  cache.set('a', 'A', 10);
  cache.set('b', 'B', 10);
  cache.set('c', 'C', 10);
  t.equal(cache.get('a'), 'A', 'a used again: now the most recent');
  cache.set('d', 'D', 10);
  t.same(kept(cache, ['a', 'c', 'd']), ['a', 'c', 'd']);
  t.equal(cache.get('b'), undefined, 'b, used least recently, went');
});

t.test('a replaced value counts once', async (t) => {
  const cache = new BudgetCache<string>(20);
  cache.set('a', 'A', 10);
  cache.set('a', 'A2', 10);
  cache.set('b', 'B', 10);
  t.same(kept(cache, ['a', 'b']), ['a', 'b'], 'within the budget');
  t.equal(cache.get('a'), 'A2');
});

t.test('growth counts against the budget, only for the value still kept', async (t) => {
  const cache = new BudgetCache<string>(30);
  cache.set('a', 'A', 10);
  cache.set('b', 'B', 10);
  cache.grow('a', 'old A', 100);
  t.same(kept(cache, ['a', 'b']), ['a', 'b'], 'a value no longer kept does not grow the entry');
  cache.grow('b', 'B', 15);
  t.equal(cache.get('a'), undefined, 'the other entry dropped to make room');
  t.equal(cache.get('b'), 'B', 'the one that grew stays, though over the budget alone');
});

t.test('a value larger than the budget is kept alone', async (t) => {
  const cache = new BudgetCache<string>(10);
  cache.set('a', 'A', 5);
  cache.set('big', 'BIG', 50);
  t.equal(cache.get('big'), 'BIG');
  t.equal(cache.get('a'), undefined);
});
