/**
 * BRO GMW XML: a well's dispatch (`dsgmw`, `GMW_PPO` or `GMW_PO`) or the registration request of its
 * construction (`isgmw`, `GMW_Construction`). A well states its tubes one after another and its
 * ETRS89 location (`standardizedLocation`) after them, so its tubes are held until the well closes:
 * a handful, never the file.
 */
import type { SaxesTagPlain } from 'saxes';
import { broTube } from '../identity.js';
import { rdToWgs84 } from '../projection.js';
import { type LevelSink, type Place, type ReaderFactory, roundLevel, type StatedTube } from '../reader.js';
import { attribute, BroXmlReader } from './broXml.js';

interface Tube {
  number: string;
  place: Place;
  tubeTop: number | null;
  screenTop: number | null;
  screenBottom: number | null;
  screenLength: number | null;
  plainTubePartLength: number | null;
}

type Location = { longitude: number; latitude: number };

/** The tube's measures in metres, by the element that states each. */
const TUBE_MEASURES: Record<string, keyof Omit<Tube, 'number' | 'place'> | undefined> = {
  tubeTopPosition: 'tubeTop',
  screenTopPosition: 'screenTop',
  screenBottomPosition: 'screenBottom',
  screenLength: 'screenLength',
  plainTubePartLength: 'plainTubePartLength',
};

const WELL_OBJECTS = ['GMW_PPO', 'GMW_PO', 'GMW_Construction'];

class GmwXmlReader extends BroXmlReader {
  /** A registration request's `brocom:broId`: the well's, where BRO has registered it. */
  private requestBroId = '';
  // The well being read.
  private broId = '';
  private objectIdAccountableParty = '';
  private groundLevel: number | null = null;
  private delivered: Location | null = null;
  private standardized: Location | null = null;
  private srsName = '';
  private tubes: Tube[] = [];
  private tube: Tube | undefined;

  constructor(private readonly sink: LevelSink) {
    super({
      object: 'GMW',
      command: 'bro-gmw',
      dispatched: ['GMW_PPO', 'GMW_PO'],
      registered: ['GMW_Construction'],
    });
  }

  protected open(tag: SaxesTagPlain, local: string): void {
    if (WELL_OBJECTS.includes(local) && this.isWell()) {
      this.broId = '';
      this.objectIdAccountableParty = '';
      this.groundLevel = null;
      this.delivered = null;
      this.standardized = null;
      this.tubes = [];
    } else if (local === 'monitoringTube') {
      this.tube = {
        number: '',
        place: this.place(),
        tubeTop: null,
        screenTop: null,
        screenBottom: null,
        screenLength: null,
        plainTubePartLength: null,
      };
    } else if (local === 'location') {
      this.srsName = attribute(tag, 'srsName') ?? '';
    }
  }

  private isWell(): boolean {
    const container = this.parent();
    return container === 'dispatchDocument' || container === 'sourceDocument';
  }

  protected close(tag: SaxesTagPlain, local: string): void {
    const parent = this.parent();
    const tube = this.tube;
    if (tube !== undefined && parent !== undefined) {
      if (this.closeTubePart(tag, local, parent, tube)) return;
    }
    switch (local) {
      case 'broId':
        if (parent === 'registrationRequest') this.requestBroId = this.text.trim();
        else if (WELL_OBJECTS.includes(parent ?? '')) this.broId = this.text.trim();
        return;
      case 'objectIdAccountableParty':
        this.objectIdAccountableParty = this.text.trim();
        return;
      case 'groundLevelPosition':
        this.groundLevel = this.metres(tag);
        return;
      case 'verticalDatum':
        if (this.text.trim() !== 'NAP') {
          this.refuse(
            this.name,
            `${JSON.stringify(this.text.trim())} is not read: elevations are read relative to NAP`,
          );
        }
        return;
      case 'pos':
        if (parent === 'location') {
          const where = this.parent(2);
          if (where === 'deliveredLocation') this.delivered = this.position();
          else if (where === 'standardizedLocation') this.standardized = this.position();
        }
        return;
      case 'monitoringTube':
        if (tube !== undefined) this.tubes.push(tube);
        this.tube = undefined;
        return;
    }
    if (WELL_OBJECTS.includes(local) && this.isWell()) this.closeWell();
  }

  /** An element of a `monitoringTube`; false when it is none the tube is read from. */
  private closeTubePart(tag: SaxesTagPlain, local: string, parent: string, tube: Tube): boolean {
    if (local === 'tubeNumber') {
      if (parent === 'monitoringTube') tube.number = this.text.trim();
      return true;
    }
    const field = TUBE_MEASURES[local];
    if (field === undefined) return false;
    tube[field] = this.metres(tag);
    return true;
  }

  /**
   * A `gml:pos` in WGS 84 degrees: RD New (EPSG:28992) as `x y`, converted; ETRS89 (EPSG:4258), the
   * axis order of its EPSG definition, `latitude longitude`, used as WGS 84 (they differ by under a metre).
   */
  private position(): Location {
    const parts = this.text.trim().split(/\s+/);
    if (parts.length !== 2)
      this.refuse(this.name, `${JSON.stringify(this.text.trim())} is not two coordinates`);
    const [first, second] = parts.map((part) => this.decimal(part)) as [number, number];
    const code = /EPSG::?(\d+)$/.exec(this.srsName)?.[1];
    if (code === '28992') return rdToWgs84(first, second);
    if (code === '4258' || code === '4326') return { latitude: first, longitude: second };
    return this.refuse(
      this.name,
      `srsName ${JSON.stringify(this.srsName)} is not read: BRO states RD New (EPSG:28992) or ETRS89 (EPSG:4258)`,
    );
  }

  private closeWell(): void {
    const wellName = this.broId || this.requestBroId || this.objectIdAccountableParty;
    if (wellName === '') {
      this.refuse(this.name, 'names no well: neither a broId nor an objectIdAccountableParty');
    }
    const location = this.standardized ?? this.delivered;
    for (const tube of this.tubes) {
      if (tube.number === '') this.refuseAt(tube.place, 'monitoringTube', 'has no tubeNumber');
      this.sink.tube(this.stated(wellName, tube, location));
    }
  }

  private stated(wellName: string, tube: Tube, location: Location | null): StatedTube {
    let { screenTop, screenBottom } = tube;
    // A registration states the screen by lengths down from the tube top, not by positions.
    if (screenTop === null && screenBottom === null && tube.tubeTop !== null) {
      if (tube.plainTubePartLength !== null) screenTop = roundLevel(tube.tubeTop - tube.plainTubePartLength);
      if (screenTop !== null && tube.screenLength !== null) {
        screenBottom = roundLevel(screenTop - tube.screenLength);
      }
    }
    return {
      identifier: broTube(wellName, tube.number),
      wellName,
      number: tube.number,
      location,
      unit: 'm',
      verticalDatum: 'NAP',
      groundLevel: this.groundLevel,
      tubeTop: tube.tubeTop,
      screenTop,
      screenBottom,
      place: tube.place,
    };
  }
}

/** `gwapi import bro-gmw`. */
export const gmwXmlReader: ReaderFactory = (_file, sink) => new GmwXmlReader(sink);
