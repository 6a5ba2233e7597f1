import type { LaunchSpec, LocalRecipe } from '../local/recipe.js';
import { shellQuote } from './session.js';

/**
 * The shell scripts the ssh provider runs on a node, built here as plain strings so they can be read and tested
 * without a node. Every value that comes from the user (hosts, paths) is checked by `resolveSsh` and quoted again
 * here; nothing is interpolated unquoted but our own constants and numbers.
 */

/** Every iptables rule we add carries `--comment fencekit:<run id>`, so any later run can find and remove it. */
export const RULE_TAG = 'fencekit:';
/** Set in each server's environment: how a later run recognises a leftover fencekit process (and no other). */
export const RUN_ENV = 'FENCEKIT_RUN';

/** Runs `script` as root: directly when logged in as root, else through `sudo -n` (which fails, never prompts). */
export function asRoot(script: string): string {
  const quoted = shellQuote(script);
  return `if [ "$(id -u)" = 0 ]; then sh -c ${quoted}; else sudo -n sh -c ${quoted}; fi`;
}

/** The Debian packages a server needs on a node, and the service Debian starts for it on install. */
export const PACKAGES: Readonly<Record<LocalRecipe['server'], { packages: string[]; service: string }>> = {
  etcd: { packages: ['etcd-server'], service: 'etcd' },
  zookeeper: { packages: ['zookeeper', 'libslf4j-java', 'default-jre-headless'], service: 'zookeeper' },
  redis: { packages: ['redis-server'], service: 'redis-server' },
};
/** What the faults and the clean-up use: iptables, kill/pgrep (procps), timeout and setsid (coreutils, util-linux). */
const TOOLS = ['iptables', 'procps', 'coreutils', 'util-linux'];

/**
 * Installs what is missing, with apt-get; a no-op (`installed: none`) when `dpkg -s` finds everything. Debian's
 * packages start their own service on install, which would hold the ports our servers need: a service we just
 * installed is stopped and disabled (one that was there before is left alone).
 */
export function installScript(server: LocalRecipe['server']): string {
  const { packages, service } = PACKAGES[server];
  const wanted = [...packages, ...TOOLS].map(shellQuote).join(' ');
  return `missing=""
for p in ${wanted}; do dpkg -s "$p" > /dev/null 2>&1 || missing="$missing $p"; done
if [ -z "$missing" ]; then echo "installed: none"; exit 0; fi
command -v apt-get > /dev/null || { echo "missing:$missing, and no apt-get to install them" >&2; exit 3; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q > /dev/null && apt-get install -y -q --no-install-recommends $missing || exit 4
case "$missing" in *${PACKAGES[server].packages[0]}*)
  (systemctl stop ${shellQuote(service)} && systemctl disable ${shellQuote(service)}) > /dev/null 2>&1 || true;;
esac
echo "installed:$missing"`;
}

/**
 * Lines `<pid> <run id> <state letter>` for every process whose environment has FENCEKIT_RUN, from `proc` (tests
 * give another directory: on a host that runs test nodes, /proc shows the nodes' servers too).
 */
const fencekitProcesses = (proc = '/proc') => `for e in ${shellQuote(proc)}/[0-9]*/environ; do
  p=\${e%/environ}; p=\${p##*/}
  r=$(tr '\\0' '\\n' < "$e" 2> /dev/null | sed -n 's/^${RUN_ENV}=//p' | head -n 1)
  [ -n "$r" ] || continue
  s=$(sed -n 's/^.*) \\(.\\).*$/\\1/p' ${shellQuote(proc)}"/$p/stat" 2> /dev/null)
  echo "$p $r $s"
done`;

/** Deletes the fencekit rules whose tag matches `pattern` (a grep -e pattern), printing `rule <rule>` for each. */
function deleteRules(pattern: string): string {
  // iptables -S prints the comment in double quotes; our tags have no spaces or quotes, so dropping them is exact.
  return `iptables -w -S 2> /dev/null | grep -e ${shellQuote(`--comment "\\{0,1\\}${pattern}`)} | sed -e 's/^-A /-D /' -e 's/"//g' | while read -r rule; do
  iptables -w $rule && echo "rule $rule"
done`;
}

/**
 * How long a run's mark (`<baseDir>/<run>/alive`) stays fresh after its owner last touched it. The owner touches it
 * every `ALIVE_TOUCH_MS` over its ssh connection; a run whose mark is older (its harness died, or lost the node for
 * that long) or missing is a leftover a later start may heal.
 */
export const ALIVE_STALE_MS = 30_000;
export const ALIVE_TOUCH_MS = 5_000;
/** The sweep's exit code when a live run holds the node (its runs on stdout as `live <run>` lines). */
export const SWEEP_IN_USE = 75;

/** Touches this run's mark; fails (touching nothing) once the run directory is gone. */
export function touchAliveScript(dir: string): string {
  return `[ -d ${shellQuote(dir)} ] && touch ${shellQuote(`${dir}/alive`)}`;
}

/**
 * A start's sweep, for run `runId`: first this run's mark is made (so a concurrent start sees us), then, if any
 * other run's mark is fresher than `staleMs`, nothing is touched: the script prints `live <run>` for each and
 * exits `SWEEP_IN_USE`. Otherwise every leftover of other runs is healed: every fencekit rule, every fencekit
 * server process (a stopped one resumed first, then all killed: their ports are needed), every other run
 * directory. Prints one line per thing it healed (`rule …`, `stopped <pid> <run>`, `killed <pid> <run>`,
 * `dir <path>`).
 */
export function sweepScript(baseDir: string, runId: string, proc?: string, staleMs = ALIVE_STALE_MS): string {
  const base = shellQuote(baseDir);
  const own = shellQuote(`${baseDir}/${runId}`);
  const ownRun = shellQuote(runId);
  return `mkdir -p ${own} && chmod 700 ${own} && touch ${own}/alive || exit 3
now=$(date +%s); live=""
for d in ${base}/fk-*; do
  [ -d "$d" ] && [ "$d" != ${own} ] && [ -f "$d/alive" ] || continue
  m=$(stat -c %Y "$d/alive" 2> /dev/null) || continue
  [ $((now - m)) -lt ${Math.ceil(staleMs / 1000)} ] && live="$live \${d##*/}"
done
if [ -n "$live" ]; then for r in $live; do echo "live $r"; done; exit ${SWEEP_IN_USE}; fi
${deleteRules(RULE_TAG)}
(${fencekitProcesses(proc)}) | while read -r p r s; do
  [ "$r" = ${ownRun} ] && continue
  [ "$s" = T ] && echo "stopped $p $r"
  kill -CONT "$p" 2> /dev/null; kill -KILL "$p" 2> /dev/null && echo "killed $p $r"
done
for d in ${base}/fk-*; do [ -d "$d" ] && [ "$d" != ${own} ] && rm -rf "$d" && echo "dir $d"; done
true`;
}

/** Removes this run's rules only (a heal). */
export function healLinksScript(runId: string): string {
  // Fails when a rule is still there, so a heal that did not work is an error, not a silent partition.
  return `${deleteRules(`${RULE_TAG}${runId}`)}
! iptables -w -S 2> /dev/null | grep -q -e ${shellQuote(`--comment "\\{0,1\\}${RULE_TAG}${runId}`)}`;
}

/**
 * Drops everything to and from the peers' addresses, in both chains, inserted first so no ACCEPT of the node's own
 * firewall comes before them. `peers` are names or IPv4 addresses; names are resolved on the node, where the
 * traffic is.
 */
export function cutScript(runId: string, peers: readonly string[]): string {
  const tag = shellQuote(`${RULE_TAG}${runId}`);
  return `for h in ${peers.map(shellQuote).join(' ')}; do
  addrs=$(getent ahostsv4 "$h" | awk '{print $1}' | sort -u)
  [ -n "$addrs" ] || { echo "cannot resolve $h" >&2; exit 3; }
  for a in $addrs; do
    iptables -w -I INPUT -s "$a" -m comment --comment ${tag} -j DROP &&
    iptables -w -I OUTPUT -d "$a" -m comment --comment ${tag} -j DROP || exit 4
  done
done`;
}

/** This run's stopped processes resumed (a heal's part that needs no bookkeeping). */
export function resumeRunScript(runId: string): string {
  return `(${fencekitProcesses()}) | awk -v run=${shellQuote(runId)} '$2 == run && $3 == "T" {print $1}' | while read -r p; do kill -CONT "$p"; done; true`;
}

/** This run's processes resumed, killed and waited for (bounded), and its rules removed: the end of a run. */
export function stopRunScript(runId: string): string {
  return `${healLinksScript(runId)}
pids() { (${fencekitProcesses()}) | awk -v run=${shellQuote(runId)} '$2 == run {print $1}'; }
for p in $(pids); do kill -CONT "$p" 2> /dev/null; kill -KILL "$p" 2> /dev/null; done
i=0; while [ -n "$(pids)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -z "$(pids)" ]`;
}

/**
 * Starts a server in the background in its own session (so it outlives the ssh channel and no hang-up reaches it),
 * tagged with the run id, its output appended to `<name>.log`, its pid in `<name>.pid`.
 */
export function startScript(
  dir: string,
  runId: string,
  name: string,
  spec: LaunchSpec,
  extraEnv: Readonly<Record<string, string>>,
): string {
  const env = { [RUN_ENV]: runId, ...spec.env, ...extraEnv };
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  const command = [spec.command, ...spec.args].map(shellQuote).join(' ');
  const log = shellQuote(`${dir}/${name}.log`);
  return `cd ${shellQuote(dir)} && { setsid env ${assignments.join(' ')} ${command} >> ${log} 2>&1 < /dev/null & echo $! > ${shellQuote(`${dir}/${name}.pid`)}; }`;
}

/**
 * Whether the shim copied to `shim` loads on this node: the same machine type as ours, and the dynamic loader
 * takes it (a glibc too old for it says so on stderr). Prints `ok`, or why not.
 */
export function shimCheckScript(shim: string, arch: string): string {
  return `[ "$(uname -m)" = ${shellQuote(arch)} ] || { echo "the node is $(uname -m), the shim was built for ${arch}"; exit 0; }
out=$(LD_PRELOAD=${shellQuote(shim)} FENCEKIT_CLOCK_FILE=/dev/null /bin/true 2>&1)
if [ -n "$out" ]; then echo "the node's loader refuses the shim: $out"; else echo ok; fi`;
}
