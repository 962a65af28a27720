/** What a benchmark server (benchServer.ts) and its parent (serverProcess.ts) say to each other. */
import type { FloorRequest } from './floor.js';

/** application_name of the bench server's database connections (to find its backends). */
export const SERVER_APPLICATION_NAME = 'gwapi bench api';

export type ServerMessage =
  | { type: 'listening'; base: string }
  | { type: 'floor'; ms: number; rows: number }
  | { type: 'profiling' }
  | { type: 'profiled'; file: string }
  | { type: 'error'; message: string };

export type ParentMessage =
  | { type: 'floor'; request: FloorRequest }
  | { type: 'startProfile' }
  | { type: 'stopProfile'; file: string };
