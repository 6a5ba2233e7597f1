/**
 * Shell scripts that act on a server started in the background in directory `dir` with its pid in
 * `<dir>/server.pid`: how a Docker container's server (docker/node.ts) and an ssh node's (ssh/node.ts) are checked,
 * signalled, configured and skewed. Plain strings, so each provider runs them its own way (nsenter, ssh).
 */

/** Single-quotes a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Shell test: process "$p" exists and is not a zombie (killed but not yet reaped). */
const ALIVE = `[ -e "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2> /dev/null`;
const PID = (dir: string) => `p=$(cat ${shellQuote(`${dir}/server.pid`)} 2> /dev/null) && [ -n "$p" ]`;

/**
 * Writes the launch files under `dir` (making their subdirectories), and the clock shim's file at no skew when
 * `clockFile`. Empty when there is nothing to write.
 */
export function writeFilesScript(
  dir: string,
  files: Readonly<Record<string, string>>,
  clockFile: boolean,
): string {
  const lines: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const path = `${dir}/${name}`;
    lines.push(
      `mkdir -p "$(dirname ${shellQuote(path)})"`,
      `printf '%s' ${shellQuote(content)} > ${shellQuote(path)}`,
    );
  }
  if (clockFile) lines.push(`printf '0 1\\n' > ${shellQuote(`${dir}/clock`)}`);
  return lines.join(' &&\n');
}

/** Exit 0 when the server runs (stopped counts; gone or a zombie does not). */
export function runningScript(dir: string): string {
  return `${PID(dir)} && ${ALIVE}`;
}

/** The server's state letter from /proc, or nothing. */
export function stateScript(dir: string): string {
  return `${PID(dir)} && sed -n 's/^.*) \\(.\\).*$/\\1/p' "/proc/$p/stat"`;
}

/**
 * KILL: SIGKILL and wait (bounded) until gone, exit 0 even when not running. STOP/CONT fail when there is no running
 * server to signal.
 */
export function signalScript(dir: string, signal: 'KILL' | 'STOP' | 'CONT'): string {
  if (signal === 'KILL')
    return `${PID(dir)} && kill -KILL "$p"; i=0; while ${ALIVE} && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; true`;
  return `${PID(dir)} && ${ALIVE} && kill -${signal} "$p"`;
}

/** The clock shim's skew file, written atomically. */
export function clockScript(dir: string, offsetMs: number, rate: number): string {
  const offsetNs = BigInt(Math.round(offsetMs)) * 1_000_000n;
  if (!Number.isFinite(rate)) throw new Error(`clock rate ${rate} is not a finite number`);
  const file = shellQuote(`${dir}/clock`);
  return `printf '%s %s\\n' ${offsetNs} ${rate} > ${file}.tmp && mv ${file}.tmp ${file}`;
}
