/**
 * A value as JSON text for messages, with bigints as their digits (JSON.stringify throws on them) and
 * `undefined` as `undefined`, infinities and NaN as EDN writes them (`##Inf`, not `null`). Control characters come out escaped, as JSON escapes them.
 */
export function showValue(value: unknown): string {
  return write(value) ?? String(value);
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) return Number.isNaN(value) ? '##NaN' : value > 0 ? '##Inf' : '##-Inf';
      return JSON.stringify(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map((v) => write(v) ?? 'null').join(',')}]`;
      const members: string[] = [];
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const text = write(v);
        if (text !== undefined) members.push(`${JSON.stringify(k)}:${text}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      return undefined;
  }
}
