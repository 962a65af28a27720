/**
 * A measurement's value as the table stores it (sql/016): the double, or the thousandths of a value of
 * at most three places. `measurement_value` gives back the same double either way, and every read of
 * `measurements` names it instead of the column. `table`: the alias the select gives measurements.
 */
export const measurementValue = (table?: string): string => {
  const column = (name: string) => (table ? `${table}.${name}` : name);
  return `measurement_value(${column('value')}, ${column('value_thousandths')})`;
};
