/**
 * The network as an Apache Arrow IPC stream (v1.2.md, "Many tubes in one request"): `tubeIdentifier`,
 * the series' columns, then `unit` and `verticalDatum`. The three strings are dictionary-encoded (int32
 * indices into utf8), each dictionary sent once, whole, after the schema and before the first batch:
 * every tube of the response is known when the response opens. A row's `tube` (its tube's position in
 * the response) is its index into the identifiers' dictionary as it is.
 */

import type { NetworkHead } from '../networkSchemas.js';
import {
  AGGREGATED_ARROW_COLUMNS,
  ARROW_MEDIA_TYPE,
  type BatchColumn,
  batchFields,
  dictionaryBatchMessage,
  dictionaryField,
  END_OF_STREAM,
  RAW_ARROW_COLUMNS,
  recordBatchMessage,
  schemaMessage,
} from './arrowMessages.js';
import type { NetworkRepresentation } from './networkWriter.js';

const NOTHING = Buffer.alloc(0);

/** The dictionaries, by id: the order of their fields in the schema. */
const TUBES = 0;
const UNITS = 1;
const DATUMS = 2;

/** The distinct values of `texts` in order of appearance, and each text's index among them. */
function dictionary(texts: readonly string[]): { values: string[]; indexOf: Int32Array } {
  const indices = new Map<string, number>();
  const indexOf = Int32Array.from(texts, (text) => {
    const known = indices.get(text);
    if (known !== undefined) return known;
    indices.set(text, indices.size);
    return indices.size - 1;
  });
  return { values: [...indices.keys()], indexOf };
}

/** The head's fields as the schema's metadata: `aggregate` when given. */
function networkMetadata({ from, to, aggregate, syncToken }: NetworkHead): Map<string, string> {
  const metadata = new Map([
    ['from', from],
    ['to', to],
  ]);
  if (aggregate) metadata.set('aggregate', aggregate);
  metadata.set('syncToken', syncToken);
  return metadata;
}

/** A fresh one per response: it keeps the columns and each tube's unit and datum index. */
export function arrowNetwork(): NetworkRepresentation {
  let columns: readonly BatchColumn[] = RAW_ARROW_COLUMNS;
  let unitOf: Int32Array = new Int32Array(0);
  let datumOf: Int32Array = new Int32Array(0);
  return {
    mediaType: ARROW_MEDIA_TYPE,
    open(head, tubes) {
      columns = head.aggregate ? AGGREGATED_ARROW_COLUMNS : RAW_ARROW_COLUMNS;
      const units = dictionary(tubes.map((tube) => tube.unit));
      const datums = dictionary(tubes.map((tube) => tube.verticalDatum));
      unitOf = units.indexOf;
      datumOf = datums.indexOf;
      const fields = [
        dictionaryField('tubeIdentifier', TUBES),
        ...batchFields(columns),
        dictionaryField('unit', UNITS),
        dictionaryField('verticalDatum', DATUMS),
      ];
      return Buffer.concat([
        schemaMessage(fields, networkMetadata(head)),
        dictionaryBatchMessage(
          TUBES,
          tubes.map((tube) => tube.tubeIdentifier),
        ),
        dictionaryBatchMessage(UNITS, units.values),
        dictionaryBatchMessage(DATUMS, datums.values),
      ]);
    },
    head: () => NOTHING,
    // The lifecycle hands over one tube's rows at a time: its identifier, unit and datum are one index
    // each.
    batch(rows) {
      const tube = rows.tube[0]!;
      return recordBatchMessage(
        rows,
        columns,
        [{ constant: tube }],
        [{ constant: unitOf[tube]! }, { constant: datumOf[tube]! }],
      );
    },
    close: () => END_OF_STREAM,
  };
}
