/**
 * How `measurements` stores a level (sql/016, docs/decisions/0022): a decimal of at most three places as
 * an integer of thousandths, the rest as the double, once the database is finished (`gwapi migrate
 * --finish`: no release before this one reads `value` any more). Until then every row keeps `value`.
 */
import type { Queryable } from './connect.js';

/**
 * Whether writers store thousandths: `measurements.value` may be null, which a new install is from
 * sql/016 on and an upgraded one once finished. Never turns false again, so a writer may ask once.
 */
export async function storesThousandths(q: Queryable): Promise<boolean> {
  const [column] = await q<{ nullable: boolean }[]>`
    select not attnotnull as nullable from pg_attribute
    where attrelid = 'measurements'::regclass and attname = 'value'`;
  return column?.nullable ?? false;
}

/**
 * The columns a writer of whole rows names, in this order: with `thousandths`, the integer last (and
 * exactly one of the two values null).
 */
export const measurementColumns = (thousandths: boolean) =>
  `tube_id, observed_at, value, status${thousandths ? ', value_thousandths' : ''}`;
