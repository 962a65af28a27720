import type { Settings } from '../config.js';
import { migrate, pendingMigrations } from '../db/migrate.js';
import { UserError } from '../errors.js';
import { runServer } from '../server.js';
import { openDatabase } from './database.js';

export async function serveCommand(settings: Settings): Promise<void> {
  const db = await openDatabase(settings, 'gwapi serve');
  try {
    // The embedded database is ours to keep current; a real one is migrated by the operator
    // (`gwapi migrate`, once, before replicas start), so a replica never races a schema change.
    if (db.embedded) await migrate(db.sql);
    else if ((await pendingMigrations(db.sql)).length > 0) {
      throw new UserError('the database schema is not up to date: run `gwapi migrate` first');
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  await runServer(settings, db);
}
