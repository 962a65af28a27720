import type { Settings } from '../config.js';
import { runServer } from '../server.js';
import { ensureSchema, openDatabase } from './database.js';

export async function serveCommand(settings: Settings): Promise<void> {
  const db = await openDatabase(settings, 'gwapi serve', { readReplica: true });
  try {
    await ensureSchema(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  await runServer(settings, db);
}
