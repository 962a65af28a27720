/**
 * Elements of a common shape read with a regular expression instead of saxes, which reads a character at
 * a time and alone costs several times the import of the same points as CSV: BRO GLD's points, FEWS's
 * events. A run of text the pattern matches is offered to the reader only where saxes stands between
 * two elements (given nothing but whitespace since it last ended a tag), so one inside a comment or
 * CDATA is not read. The pattern matches only elements and text that cannot hold markup, so what is
 * read is well-formed; everything else, and every match the reader declines (another shape, a wrong
 * value), goes to saxes, which keeps checking the document and reads or refuses it with its place.
 */

const WHITESPACE = /^\s*$/;

export class ElementRuns {
  /** How much text saxes has been given. */
  private given = 0;
  /**
   * Where saxes stood (its `position`) when it last ended a tag, or when a match was last read: the text
   * given since is what lies between that element and the next. (saxes's `position` is that only while
   * it reads, in its events.)
   */
  private tagEndAt = -1;
  /** Lines of the matches read, which saxes did not count. */
  linesPassed = 0;

  /**
   * @param pattern global, matching whole elements
   * @param parse gives text to saxes
   * @param read reads a match, or returns false (having done nothing) to leave it to saxes
   */
  constructor(
    private readonly pattern: RegExp,
    private readonly parse: (text: string) => void,
    private readonly read: (match: RegExpExecArray) => boolean,
  ) {}

  /** Text of the file, in order. */
  feed(text: string): void {
    const pattern = this.pattern;
    let fed = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      if (match.index > fed) this.give(text.slice(fed, match.index));
      fed = match.index;
      if (this.betweenElements(text, match.index) && this.read(match)) {
        fed = pattern.lastIndex;
        this.linesPassed += lineBreaks(match[0], match[0].length);
        this.tagEndAt = this.given;
      }
    }
    if (fed < text.length) this.give(text.slice(fed));
  }

  /** saxes ended a tag at `position`; call it from saxes's `opentag` and `closetag`. */
  tagEnded(position: number): void {
    this.tagEndAt = position;
  }

  private give(text: string): void {
    this.given += text.length;
    this.parse(text);
  }

  private betweenElements(text: string, at: number): boolean {
    const between = this.given - this.tagEndAt;
    return between <= at && WHITESPACE.test(text.slice(at - between, at));
  }
}

/** The line breaks in `text` before `end`. */
export function lineBreaks(text: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at < end; at = text.indexOf('\n', at + 1)) count++;
  return count;
}
