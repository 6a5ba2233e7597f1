/**
 * `@fencekit/core/sqlite`: the SQLite fenced resource. A separate entry so that only code importing
 * it needs `better-sqlite3` (an optional peer dependency).
 */
export {
  SqliteFencedResource,
  type SqliteFencedResourceOptions,
  type SqliteValueCodec,
} from './sqlite-fenced-resource.js';
