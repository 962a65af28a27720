/** `2024-01-01T00:00:00.5Z` → `20240101T000000.5Z`: ISO 8601's basic form, fractions kept. */
const compactInstant = (instant: string) => instant.replace(/[-:]/g, '');

/**
 * The Content-Disposition of a document's file: `<stem>_<from>_<to>.<extension>` with the interval in
 * compact UTC form. Fractions of a second are kept, so that different intervals never share a name;
 * every character is one a file name may hold on any common system, and none needs escaping in the
 * quoted string.
 */
export const attachment = (stem: string, from: string, to: string, extension: string) =>
  `attachment; filename="${stem}_${compactInstant(from)}_${compactInstant(to)}.${extension}"`;

/** The Content-Disposition of a document's file without an interval: `<stem>.<extension>`. */
export const fileAttachment = (stem: string, extension: string) =>
  `attachment; filename="${stem}.${extension}"`;
