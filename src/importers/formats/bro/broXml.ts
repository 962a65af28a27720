/**
 * What BRO's GMW and GLD XML readers share: the streaming parse (saxes, without namespace processing,
 * which costs more than the rest of the read), the element path of every error, the message a file
 * holds (a dispatch or a registration request, bare or in a SOAP envelope), and BRO's measures.
 *
 * Elements are told apart by their local name and their parents', as BRO writes them under whatever
 * prefixes a file declares (`ns11:`, `waterml:`, `wml2:`, none). Only the message element's namespace
 * is resolved, to tell a GMW message from a GLD one.
 */
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { decimalProblem, parseLongDecimal, readDecimal } from '../../measurements/csv/decimal.js';
import type { ElementRuns } from '../elementRuns.js';
import { FileRefused, type LevelReader, type Place, roundLevel } from '../reader.js';

/** The messages of one registration object: its dispatch (`dsgmw`) and registration request (`isgmw`). */
export interface BroMessages {
  /** `GMW` or `GLD`, as errors name it. */
  object: string;
  /** The command that reads it, for a file given to the other one. */
  command: string;
  /** The objects a dispatch document holds that are read (`GMW_PPO`, `GLD_O`). */
  dispatched: readonly string[];
  /** The source documents of a registration request that are read (`GMW_Construction`). */
  registered: readonly string[];
}

const SOAP_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP_12_ENVELOPE = 'http://www.w3.org/2003/05/soap-envelope';

/** `http://www.broservices.nl/xsd/dsgld/1.0` → `dsgld`. */
function broSchema(uri: string | undefined): string | undefined {
  const match = uri === undefined ? null : /\/xsd\/([a-z]+)\/[\d.]+\/?$/.exec(uri);
  return match?.[1];
}

const localCache = new Map<string, string>();

/** `waterml:value` → `value`; cached, as every point's elements ask again. */
function localName(name: string): string {
  let local = localCache.get(name);
  if (local === undefined) {
    local = name.slice(name.indexOf(':') + 1);
    if (localCache.size < 10_000) localCache.set(name, local);
  }
  return local;
}

/** A decimal number rounded to 15 significant digits (roundLevel), or NaN when `text` is none. */
export function decimalValue(text: string): number {
  const value = readDecimal(text, 0, text.length);
  return Number.isNaN(value) ? roundLevel(parseLongDecimal(text)) : value;
}

/** The attribute `nil` of XML Schema instances, under any prefix: a value BRO states as absent. */
export function isNil(tag: SaxesTagPlain): boolean {
  const attributes = tag.attributes;
  for (const name in attributes) {
    if (localName(name) === 'nil') return attributes[name] === 'true' || attributes[name] === '1';
  }
  return false;
}

/** The attribute `local` under any prefix (`xlink:href`). */
export function attribute(tag: SaxesTagPlain, local: string): string | undefined {
  const attributes = tag.attributes;
  for (const name in attributes) if (localName(name) === local) return attributes[name];
  return undefined;
}

/**
 * A BRO XML file as events of the elements under its message element. A subclass keeps its own state
 * and reads `locals` (the local names from the root to the element) and `text` (the element's text).
 */
export abstract class BroXmlReader implements LevelReader {
  private readonly parser = new SaxesParser({ position: true });
  private readonly decoder = new StringDecoder('utf8');
  private readonly names: string[] = [];
  /** Local names from the root down to the current element. */
  protected readonly locals: string[] = [];
  protected depth = 0;
  /** The text of the element being closed (text since it or its last child opened). */
  protected text = '';
  /** Depth of the message element (`dispatchDataResponse`, `registrationRequest`); 0 until found. */
  private messageDepth = 0;
  /** Namespace declarations of the open elements on the way to the message element, by depth. */
  private readonly declarations: Array<Record<string, string>> = [];
  private started = false;
  /** The message is a registration request (else a dispatch). */
  protected registration = false;
  private objectsRead = 0;
  private linesAtEnd: number | undefined;
  /** The elements a subclass reads itself (GLD's points), if any. */
  protected runs: ElementRuns | undefined;

  constructor(protected readonly messages: BroMessages) {
    this.parser.on('opentag', (tag) => this.openTag(tag as SaxesTagPlain));
    this.parser.on('closetag', (tag) => this.closeTag(tag as SaxesTagPlain));
    this.parser.on('text', (text) => {
      this.text += text;
    });
    this.parser.on('cdata', (text) => {
      this.text += text;
    });
  }

  get lines(): number {
    return this.linesAtEnd ?? this.parser.line + (this.runs?.linesPassed ?? 0);
  }

  write(chunk: Buffer): void {
    let text = this.decoder.write(chunk);
    if (!this.started) {
      text = this.firstText(text);
      if (text === '') return;
    }
    this.feed(text);
  }

  end(): void {
    const rest = this.decoder.end();
    if (rest !== '') this.feed(this.started ? rest : this.firstText(rest));
    if (!this.started) this.refuse('file', `is empty: a BRO ${this.messages.object} file is XML`);
    if (this.depth > 0) {
      this.refuse(
        this.names[this.depth - 1]!,
        'the file ends before this element closes: it is truncated or not whole',
      );
    }
    // saxes counts from 1 again once closed.
    this.linesAtEnd = this.lines;
    this.parse(null);
    if (this.messageDepth === 0) this.refuse('file', `holds no BRO ${this.messages.object} message`);
    if (this.objectsRead === 0) {
      const read = this.registration ? this.messages.registered : this.messages.dispatched;
      this.refuse('file', `holds no ${read.join(' or ')}`);
    }
  }

  /** Skips a byte-order mark and whitespace; refuses a file that does not start as XML does. */
  private firstText(text: string): string {
    const start = text.search(/[^\s\uFEFF]/);
    if (start < 0) return '';
    this.started = true;
    if (text[start] !== '<') {
      const line = text.slice(0, start).split('\n').length;
      this.refuseAt(
        { line },
        'file',
        `is not XML (it starts with ${JSON.stringify(text.slice(start, start + 20))}): ` +
          `\`gwapi import ${this.messages.command}\` reads BRO ${this.messages.object} XML`,
      );
    }
    return text.slice(start);
  }

  /** Text of the file, in order: to saxes, but for the elements a subclass reads itself. */
  private feed(text: string): void {
    if (this.runs !== undefined) this.runs.feed(text);
    else this.parse(text);
  }

  protected parse(text: string | null): void {
    try {
      if (text === null) this.parser.close();
      else this.parser.write(text);
    } catch (error) {
      if (error instanceof FileRefused) throw error;
      // saxes's message starts with its own `[file:]line:column: `, counted from where it was first fed;
      // the place says where.
      const message =
        error instanceof Error ? error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '') : String(error);
      this.refuse('XML', `not well-formed: ${message}`);
    }
  }

  protected place(depth = this.depth): Place {
    return { line: this.lines, path: this.names.slice(0, depth).join('/') || undefined };
  }

  /** Refuses the file for `field`: the current element (then the path is its parent's) or another name. */
  protected refuse(field: string, reason: string): never {
    const isElement = this.depth > 0 && this.names[this.depth - 1] === field;
    throw new FileRefused(this.place(isElement ? this.depth - 1 : this.depth), field, reason);
  }

  protected refuseAt(place: Place, field: string, reason: string): never {
    throw new FileRefused(place, field, reason);
  }

  /** The qualified name of the current element, as the file writes it. */
  protected get name(): string {
    return this.names[this.depth - 1]!;
  }

  /** The local name `up` levels above the current element (0: the element itself). */
  protected parent(up = 1): string | undefined {
    return this.locals[this.depth - 1 - up];
  }

  private openTag(tag: SaxesTagPlain): void {
    this.runs?.tagEnded(this.parser.position);
    const local = localName(tag.name);
    this.names[this.depth] = tag.name;
    this.locals[this.depth] = local;
    this.depth++;
    this.text = '';
    if (this.messageDepth === 0) {
      this.findMessage(tag, local);
      return;
    }
    if (this.depth === this.messageDepth + 2 && this.isObject(local)) this.objectsRead++;
    this.open(tag, local);
  }

  private closeTag(tag: SaxesTagPlain): void {
    this.runs?.tagEnded(this.parser.position);
    if (this.messageDepth !== 0 && this.depth > this.messageDepth)
      this.close(tag, this.locals[this.depth - 1]!);
    this.depth--;
    this.text = '';
  }

  /** `dispatchDocument/GMW_PPO` or `sourceDocument/GMW_Construction`, at the depth it lies at. */
  private isObject(local: string): boolean {
    const container = this.locals[this.depth - 2];
    if (this.registration) return container === 'sourceDocument' && this.isRead(local);
    return container === 'dispatchDocument' && this.isRead(local);
  }

  private isRead(local: string): boolean {
    const read = this.registration ? this.messages.registered : this.messages.dispatched;
    if (read.includes(local)) return true;
    const kind = this.registration ? 'registration request' : 'dispatch';
    return this.refuse(
      local,
      `a ${kind} of ${local} is not read: \`gwapi import ${this.messages.command}\` reads ${read.join(', ')}`,
    );
  }

  /** The root, or the SOAP body's element: which message the file is, in which namespace. */
  private findMessage(tag: SaxesTagPlain, local: string): void {
    const declared: Record<string, string> = {};
    for (const name in tag.attributes) {
      if (name === 'xmlns') declared[''] = tag.attributes[name]!;
      else if (name.startsWith('xmlns:')) declared[name.slice(6)] = tag.attributes[name]!;
    }
    this.declarations[this.depth - 1] = declared;
    const colon = tag.name.indexOf(':');
    const uri = this.resolve(colon < 0 ? '' : tag.name.slice(0, colon));
    if (uri === SOAP_ENVELOPE || uri === SOAP_12_ENVELOPE) {
      if (this.depth === 1 && local === 'Envelope') return;
      if (this.depth === 2 && (local === 'Header' || local === 'Body')) return;
    }
    if (this.depth >= 3 && this.locals[1] === 'Header') return;
    const schema = broSchema(uri);
    const object = this.messages.object.toLowerCase();
    if (local === 'dispatchDataResponse' && schema === `ds${object}`) {
      this.messageDepth = this.depth;
      return;
    }
    if (local === 'registrationRequest' && schema === `is${object}`) {
      this.messageDepth = this.depth;
      this.registration = true;
      return;
    }
    const what = schema !== undefined ? `a BRO ${schema} message` : `<${tag.name}>${uri ? ` in ${uri}` : ''}`;
    const other = schema?.slice(2) === 'gmw' ? 'bro-gmw' : schema?.slice(2) === 'gld' ? 'bro-gld' : undefined;
    this.refuse(
      tag.name,
      `is ${what}, not a ${this.messages.object} dispatch (ds${object}) or registration request (is${object})` +
        (other !== undefined && other !== this.messages.command
          ? `: import it with \`gwapi import ${other}\``
          : ''),
    );
  }

  private resolve(prefix: string): string | undefined {
    for (let i = this.depth - 1; i >= 0; i--) {
      const uri = this.declarations[i]![prefix];
      if (uri !== undefined) return uri;
    }
    return undefined;
  }

  /** An element under the message element opened; `locals`/`depth` already include it. */
  protected abstract open(tag: SaxesTagPlain, local: string): void;
  /** An element under the message element closes; `text` holds its text. */
  protected abstract close(tag: SaxesTagPlain, local: string): void;

  /** A length or position in metres (`uom="m"`), or null where BRO states it absent (`xsi:nil`). */
  protected metres(tag: SaxesTagPlain): number | null {
    if (isNil(tag) || this.text.trim() === '') return null;
    const unit = attribute(tag, 'uom');
    if (unit !== undefined && unit !== 'm') {
      this.refuse(
        this.name,
        `unit ${JSON.stringify(unit)} is not read: BRO states positions in metres ("m")`,
      );
    }
    return this.decimal(this.text.trim());
  }

  /** A decimal number as BRO writes it, rounded to 15 significant digits (roundLevel); refuses anything else. */
  protected decimal(text: string): number {
    const value = decimalValue(text);
    if (Number.isNaN(value)) this.refuse(this.name, `${JSON.stringify(text)}: ${decimalProblem(text)}`);
    return value;
  }
}
