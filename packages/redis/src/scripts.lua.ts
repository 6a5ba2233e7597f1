/**
 * The Lua scripts that make every lock operation one atomic step on the server. Keys, in order:
 * lock, fence, queue, waiters, tickets (see `keys.ts`). Times inside the scripts come from the
 * server's own clock (`TIME`), because waiter deadlines are compared across client processes.
 */

/**
 * Epoch fences (the client's `fence: 'epoch'`, on when a script is given the epoch key): a fence is
 * epoch × 10^12 + counter, written as the epoch's digits followed by the counter padded to 12, so
 * that fences compared as numbers compare (epoch, counter) lexicographically. The epoch of a grant is
 * - given a Sentinel view (ARGV from `viewAt`: config epoch + 1, run_id, master_replid; see
 *   sentinel-view.ts): the config epoch a majority of the Sentinels agreed on for the primary with
 *   that run_id, + 1. It lives outside the dataset, so a primary restarted empty cannot start again
 *   from epoch 1 (issue #17). The view is checked before anything is written (`epoch_view_error`):
 *   this process, in this reign, must be the one the view names, and the record must not be above it;
 * - else Redis Cluster's config epoch of the node (raised by every promotion, agreed by a majority of
 *   the primaries);
 * - else the count of primaries ("reigns", told apart by `master_replid`, which a promoted replica
 *   draws anew) the resource's record has seen.
 * Never below the recorded one, never 0, so an epoch fence is above every plain counter fence. The
 * record "epoch|reign" is written with the grant. With `record` 'recorded' only the recorded epoch is
 * read (the fence of a grant made earlier).
 */
const epochHelpers = (viewAt: number) => `
local function epoch_record(epoch_key)
  local stored = redis.call('GET', epoch_key)
  if not stored then return 0, '' end
  local sep = string.find(stored, '|', 1, true)
  return tonumber(string.sub(stored, 1, sep - 1)), string.sub(stored, sep + 1)
end

local function view_epoch()
  local given = ARGV[${viewAt}]
  if given == nil or given == '' then return nil end
  return tonumber(given)
end

local function my_reign()
  return string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')
end

-- Why this node may not grant an epoch fence under the client's Sentinel view, or nil when it may (or
-- there is no view). Read before any write: a script that fails halfway would leave a grant behind.
local function epoch_view_error(epoch_key)
  local given = view_epoch()
  if not given then return nil end
  local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
  local role = string.match(redis.call('INFO', 'replication'), 'role:(%w+)')
  local reign = my_reign()
  if run_id ~= ARGV[${viewAt + 1}] or reign ~= ARGV[${viewAt + 2}] or role ~= 'master' then
    return 'FENCEKIT_VIEW this node (run_id ' .. tostring(run_id) .. ', ' .. tostring(role) ..
      ') is not the primary the Sentinels named, in the reign they were asked in'
  end
  local epoch, recorded_reign = epoch_record(epoch_key)
  if epoch > given or (epoch == given and recorded_reign ~= reign) then
    return 'FENCEKIT_VIEW the epoch record of the resource (' .. epoch .. '|' .. recorded_reign ..
      ') is above the view of the Sentinels, or its epoch from another reign (' .. given .. '|' .. reign .. ')'
  end
  return nil
end

local function epoch_now(epoch_key, record)
  local epoch, reign = epoch_record(epoch_key)
  if record == 'recorded' then return math.max(epoch, 1) end
  local now_epoch, now_reign = epoch, reign
  local given = view_epoch()
  if given then
    -- Checked by epoch_view_error before this script wrote anything.
    now_epoch, now_reign = math.max(epoch, given), my_reign()
  elseif string.find(redis.call('INFO', 'cluster'), 'cluster_enabled:1', 1, true) then
    now_reign = 'cluster'
    local mine = tonumber(string.match(redis.call('CLUSTER', 'INFO'), 'cluster_my_epoch:(%d+)'))
    now_epoch = math.max(epoch, mine)
  else
    now_reign = my_reign()
    if now_reign ~= reign then now_epoch = epoch + 1 end
  end
  now_epoch = math.max(now_epoch, 1)
  if record and (now_epoch ~= epoch or now_reign ~= reign) then
    redis.call('SET', epoch_key, now_epoch .. '|' .. now_reign)
  end
  return now_epoch
end

local function epoch_fence(epoch, counter)
  counter = tonumber(counter)
  if counter >= 1000000000000 then error('fencekit: the fence counter reached 10^12 within one epoch') end
  return string.format('%d%012d', epoch, counter)
end

-- Raises the counter's error when next_fence would pass 10^12 - 1, before the caller writes anything:
-- Redis does not roll back a script's writes, so an error after a SET would leave a grant nobody got.
local function assert_fence_left(fence_key, epoch_key)
  if epoch_key and tonumber(redis.call('GET', fence_key) or '0') >= 999999999999 then
    error('fencekit: the fence counter reached 10^12 within one epoch')
  end
end

-- INCR of the counter and the new fence (a string).
local function next_fence(fence_key, epoch_key)
  if not epoch_key then
    redis.call('INCR', fence_key)
    -- GET, not INCR's reply: Lua numbers would lose digits past 2^53.
    return redis.call('GET', fence_key)
  end
  local epoch = epoch_now(epoch_key, true)
  return epoch_fence(epoch, redis.call('INCR', fence_key))
end
`;

/** Where the Sentinel view starts in each script's ARGV (after its own arguments). */
export const VIEW_AT = { tryAcquire: 4, acquire: 11, release: 6 } as const;

const prelude = (viewAt: number) => `
local lock, fence, queue, waiters, tickets, epoch_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
${epochHelpers(viewAt)}

-- Wakes a waiter on its channel: a resource's own channel "prefix{resource}:wake:<client>" (Redis
-- Cluster, the resource's hash tag in the name) by SPUBLISH, which reaches the node that owns the slot;
-- a client's channel "prefix" .. "wake:<client>" by PUBLISH. Told apart by what precedes "wake:": the
-- lock key ends with it followed by "lock" (a caller's ioredis keyPrefix prefixes keys, not channels).
local function publish(channel, message)
  local cut = string.find(channel, 'wake:[%w_-]*$')
  local base = cut and string.sub(channel, 1, cut - 1)
  if base and base ~= '' and string.sub(lock, -(#base + 4)) == base .. 'lock' then
    return redis.call('SPUBLISH', channel, message)
  end
  return redis.call('PUBLISH', channel, message)
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The first waiter whose entry is still alive, dropping dead ones on the way: a waiter that died
-- must not keep the queue stuck behind it. An entry is "deadlineMs|handoff|channel", where handoff
-- is "0" (wake it, do not grant for it), "ttlMs" (grant it, fenced) or "ttlMs:generation:untilMs"
-- (grant it, unfenced, tagging the message with the generation of the Redlock attempt that wrote the
-- entry, but only until untilMs: see the acquire script).
-- Returns owner, wake channel, entry deadline, handoff ttl, generation (or nil), until (or nil).
local function live_head(now)
  for _ = 1, 100 do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then return nil end
    local entry = redis.call('HGET', waiters, head)
    if entry then
      local first = string.find(entry, '|', 1, true)
      local second = string.find(entry, '|', first + 1, true)
      local deadline = tonumber(string.sub(entry, 1, first - 1))
      if deadline > now then
        local handoff = string.sub(entry, first + 1, second - 1)
        local colon = string.find(handoff, ':', 1, true)
        if colon then
          local until_at = string.find(handoff, ':', colon + 1, true)
          return head, string.sub(entry, second + 1), deadline, tonumber(string.sub(handoff, 1, colon - 1)),
            string.sub(handoff, colon + 1, until_at - 1), tonumber(string.sub(handoff, until_at + 1))
        end
        return head, string.sub(entry, second + 1), deadline, tonumber(handoff)
      end
    end
    redis.call('ZREM', queue, head)
    redis.call('HDEL', waiters, head)
  end
  -- Too many dead entries for one call: treat the next as alive so nobody jumps the queue; the
  -- next call purges on.
  return redis.call('ZRANGE', queue, 0, 0)[1], nil, now + 1, 0
end

-- When the lock is free, the head waiter has precedence, but only for a grace period (when the
-- caller passes one): a live head that cannot take the lock (in Redlock: it cannot reach a quorum
-- of nodes) must not keep the node from every other waiter. The clock starts when the lock is
-- first seen free with this head waiting, and is not restarted by the head's own partial grants
-- given back. Stored in the waiters hash under a field no owner token can equal.

-- When this waiter's recorded turn began (server ms), or nil when no turn of its is recorded.
local function turn_start(head)
  local turn = redis.call('HGET', waiters, ':turn')
  if turn then
    local sep = string.find(turn, '|', 1, true)
    if string.sub(turn, 1, sep - 1) == head then return tonumber(string.sub(turn, sep + 1)) end
  end
  return nil
end

-- Returns the server time at which the head's turn began, starting it now if none is recorded.
local function turn_since(head, now)
  local start = turn_start(head)
  if start then return start end
  redis.call('HSET', waiters, ':turn', head .. '|' .. now)
  return now
end

-- The queue's keys live while someone waits and vanish once everyone has left.
local function keep_queue(ms)
  for _, key in ipairs({queue, waiters, tickets}) do
    if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
  end
end
`;

/**
 * ARGV: owner, ttlMs, mode ('try' | 'wait'), ticket, waiterTtlMs, wake channel, fenced ('1' | '0'),
 * handoff ('1': a release may grant to this waiter directly; '0': only wake it), head grace ms ('0':
 * the head of the queue keeps precedence for as long as it lives), generation (optional: with it, a
 * release's direct grant is unfenced and its message carries the generation instead of a fence —
 * Redlock's waiter tags each attempt so it counts only grants made on its latest queue entries).
 *
 * Grants when the lock is free and nobody waits ahead of `owner`: `SET lock owner NX PX ttl` and,
 * only then, `INCR fence` (when fenced). With a head grace, a queued waiter is also granted when the
 * lock has been free for that long without the live head taking it (see `turn_since`).
 *
 * In 'wait' mode the caller is (re)queued first, with `ticket` = 'auto' (this node numbers the
 * arrival), a number (a ticket agreed across nodes), or '' (only report this node's next ticket
 * number, without queueing: phase one of a quorum wait).
 *
 * Returns {1, fence} on a grant, else {0, retryMs, ticket} (and, for a fenced wait, the fence
 * counter as the refusal saw it): retryMs is when the caller should look again without a wake-up
 * (the lock's PTTL, when the waiter ahead of it expires, or when its turn lapses).
 */
export const acquireScript = `${prelude(VIEW_AT.acquire)}
local owner, ttl, mode, ticket = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local waiter_ttl = tonumber(ARGV[5])

if epoch_key and ARGV[7] == '1' then
  -- Before anything is written (see epoch_view_error): a grant here must be on the primary the view names.
  local refused = epoch_view_error(epoch_key)
  if refused then return redis.error_reply(refused) end
end

-- A grant this node made earlier (holder == owner), re-armed: its fence, or a new one (see below).
local function granted()
  local refence = false
  if ARGV[7] == '1' and epoch_key then
    -- The grant was recorded under an epoch below this node's own: it was made by a primary of an
    -- earlier reign (this node was promoted since, or the Cluster raised its config epoch). Answering
    -- that recorded fence would let the deposed primary, still serving its clients, grant a higher one
    -- of the old epoch after this; the re-armed grant takes a fence of this node's epoch instead.
    refence = epoch_now(epoch_key, false) > epoch_now(epoch_key, 'recorded')
    if refence then assert_fence_left(fence, epoch_key) end
  end
  redis.call('PEXPIRE', lock, ttl)
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
  if ARGV[7] == '1' then
    if refence then return {1, next_fence(fence, epoch_key)} end
    if epoch_key then return {1, epoch_fence(epoch_now(epoch_key, 'recorded'), redis.call('GET', fence))} end
    return {1, redis.call('GET', fence)}
  end
  return {1}
end

local function grant()
  if ARGV[7] == '1' then assert_fence_left(fence, epoch_key) end
  if not redis.call('SET', lock, owner, 'NX', 'PX', ttl) then return nil end
  local granted_fence = ARGV[7] == '1' and next_fence(fence, epoch_key) or nil
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
  if granted_fence then return {1, granted_fence} end
  return {1}
end

-- The common case first: nobody queued and the lock free. Nothing else to read or clean up.
-- Only a grant (the lock free) needs a fence left: a holder re-arming its grant must not be refused.
if ARGV[7] == '1' and epoch_key and redis.call('EXISTS', lock) == 0 then assert_fence_left(fence, epoch_key) end
if redis.call('EXISTS', queue) == 0 and redis.call('SET', lock, owner, 'NX', 'PX', ttl) then
  if ARGV[7] == '1' then return {1, next_fence(fence, epoch_key)} end
  return {1}
end

local holder = redis.call('GET', lock)
if holder == owner then
  -- Granted already: by a release handing over, or by a request whose answer was lost. Re-arm it.
  return granted()
end

local now = now_ms()
if mode == 'wait' and ticket ~= '' then
  local score = redis.call('ZSCORE', queue, owner)
  if ticket == 'auto' then
    ticket = score or redis.call('INCR', tickets)
  elseif tonumber(redis.call('GET', tickets) or '0') < tonumber(ticket) then
    -- A ticket agreed across nodes: later arrivals on this node must queue behind it.
    redis.call('SET', tickets, ticket)
  end
  if not score then redis.call('ZADD', queue, ticket, owner) end
  local handoff = '0'
  if ARGV[8] == '1' and ARGV[10] and ARGV[10] ~= '' then
    -- A Redlock waiter is handed the lock only within a head grace of asking: one that died or was
    -- cut off after queueing must not get the nodes it cannot use for its whole TTL, but only, like
    -- a free lock, for about the grace (its next attempt, if it lives, asks again).
    local grace = tonumber(ARGV[9]) or 0
    handoff = ttl .. ':' .. ARGV[10] .. ':' .. (grace > 0 and (now + grace) or (now + waiter_ttl))
  elseif ARGV[8] == '1' then
    handoff = ttl
  end
  redis.call('HSET', waiters, owner, (now + waiter_ttl) .. '|' .. handoff .. '|' .. ARGV[6])
  keep_queue(2 * waiter_ttl)
end

local retry
if holder then
  retry = redis.call('PTTL', lock)
else
  local head, _, head_deadline = live_head(now)
  local grace = tonumber(ARGV[9]) or 0
  local lapsed = false
  retry = head_deadline - now
  if head ~= nil and head ~= owner and grace > 0 then
    local turn_ends = turn_since(head, now) + grace
    if turn_ends <= now then
      -- Only a waiter in the queue (just refreshed above) may pass a head whose turn lapsed.
      lapsed = mode == 'wait' and ticket ~= ''
    elseif turn_ends - now < retry then
      retry = turn_ends - now
    end
  end
  if head == nil or head == owner or lapsed then
    local result = grant()
    if result then return result end
    retry = 1
  end
end

if mode == 'wait' and ticket == '' then
  local next_ticket = redis.call('INCR', tickets)
  keep_queue(2 * waiter_ttl)
  return {0, retry, next_ticket}
end
if ARGV[7] == '1' and mode == 'wait' then
  -- The fence as this refusal saw it: a grant handed to us later carries a higher one, so the
  -- waiter can tell a hand-over made after this request from a late message about an older one.
  local seen = redis.call('GET', fence) or '0'
  if epoch_key then seen = epoch_fence(epoch_now(epoch_key, false), seen) end
  return {0, retry, tonumber(ticket) or 0, seen}
end
return {0, retry, tonumber(ticket) or 0}
`;

/**
 * ARGV: owner, then optionally requeue ticket ('' or absent = leave the queue), waiterTtlMs, wake
 * channel, head grace ms.
 *
 * Compare-owner-and-delete. With a requeue ticket the caller goes back to its place in the queue
 * (a quorum attempt that failed gives back its partial grants but keeps waiting), or to the back of
 * the line when it was the head and its turn has lapsed. Whenever the lock
 * is free afterwards, the head waiter gets it: when it asked for handoff, the lock is granted to it
 * here (SET + INCR fence) and "owner|fence" is PUBLISHed on its client's channel (unfenced, with a
 * generation: SET only, and "owner|generation"); otherwise "owner" is published, and the waiter
 * comes to take it. When the head's turn has lapsed (head grace), the
 * next waiter is woken as well, since it may now be granted.
 *
 * Returns 1 released, 0 the lock was already gone, -1 another owner holds it (left untouched).
 */
export const releaseScript = `
-- The common case first, before the helpers below are even defined: a plain release (the owner is
-- the only argument) with nobody queued.
local owner, requeue = ARGV[1], ARGV[2] or ''
local holder = redis.call('GET', KEYS[1])
local result = 0
if holder == owner then
  redis.call('DEL', KEYS[1])
  result = 1
elseif holder then
  result = -1
end
if requeue == '' and redis.call('EXISTS', KEYS[3]) == 0 then return result end
${prelude(VIEW_AT.release)}

local now = now_ms()
if requeue == '' then
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
else
  local waiter_ttl = tonumber(ARGV[3])
  -- As when queueing with an agreed ticket: later arrivals on this node must draw a higher one, or
  -- a waiter that came after us could tie with our ticket and pass us.
  if tonumber(redis.call('GET', tickets) or '0') < tonumber(requeue) then
    redis.call('SET', tickets, requeue)
  end
  -- A head whose turn has lapsed (head grace) and which still could not win a quorum goes to the
  -- back of this node's line. Back at the front, it would take the free lock again on its next
  -- round, ahead of a waiter that can win: both retry at the pace of the same node timeout, so
  -- they can stay in step for good.
  local grace = tonumber(ARGV[5]) or 0
  local started = grace > 0 and turn_start(owner)
  local score = requeue
  if started and started + grace <= now then score = redis.call('INCR', tickets) end
  redis.call('ZADD', queue, score, owner)
  redis.call('HSET', waiters, owner, (now + waiter_ttl) .. '|0|' .. ARGV[4])
  keep_queue(2 * waiter_ttl)
end
-- The head's turn has lapsed (head grace): the waiter after it may be granted now, so wake it too.
local function wake_next_if_lapsed(head)
  local grace = tonumber(ARGV[5]) or 0
  if grace > 0 and turn_since(head, now) + grace <= now then
    local next_waiter = redis.call('ZRANGE', queue, 1, 1)[1]
    local entry = next_waiter and redis.call('HGET', waiters, next_waiter)
    if entry then
      local sep = string.find(entry, '|', string.find(entry, '|', 1, true) + 1, true)
      publish(string.sub(entry, sep + 1), next_waiter)
    end
  end
end

if result ~= -1 then
  local head, channel, _, handoff_ttl, generation, handoff_until = live_head(now)
  if head and channel and head ~= owner then
    -- No hand-over when this node may not grant an epoch fence (see epoch_view_error), nor with no fence
    -- left (counter at 10^12 - 1): the waiter is woken and asks for itself (its own acquire then hears why,
    -- before anything is written), and this release stays a plain success.
    local handoff_fenced = generation or not epoch_key or (epoch_view_error(epoch_key) == nil
      and tonumber(redis.call('GET', fence) or '0') < 999999999999)
    if handoff_ttl > 0 and (handoff_until == nil or now <= handoff_until) and handoff_fenced
        and redis.call('SET', lock, head, 'NX', 'PX', handoff_ttl) then
      redis.call('ZREM', queue, head)
      redis.call('HDEL', waiters, head)
      if generation then
        publish(channel, head .. '|' .. generation)
      else
        publish(channel, head .. '|' .. next_fence(fence, epoch_key))
      end
    else
      publish(channel, head)
      wake_next_if_lapsed(head)
    end
  elseif head == owner then
    -- A head giving back a partial grant (requeue): after its turn lapsed, the next waiter must
    -- learn at once that the lock is free again, or the head would keep winning the race for it.
    wake_next_if_lapsed(head)
  end
end
return result
`;

/**
 * The uncontended fast path, as small as the common case allows (fewer keys and arguments to send
 * and parse, nothing else to run). KEYS: lock, fence, queue. ARGV: owner, ttlMs, then '0' for an
 * unfenced grant (Redlock); a fenced grant (the Redis client, every pair) sends no third argument.
 *
 * With nobody queued: `SET lock owner NX PX ttl` and, only then, `INCR fence`. One integer comes
 * back, never a table: the server sends a Lua table as a reply of deferred length (an extra reply
 * buffer and a writev), measurably slower on this hot path. The fence (> 0; a string past 2^53) or
 * 0 for an unfenced grant; -1 when a queue exists (the full acquire script has to decide); -2 - pttl
 * when someone holds the lock.
 */
export const tryAcquireScript = `
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] == '0' then return 0 end
  local fence = redis.call('INCR', KEYS[2])
  -- Lua numbers are doubles: past 2^53 the reply would lose digits, so read the string instead.
  if fence < 9007199254740992 then return fence end
  return redis.call('GET', KEYS[2])
end
return -2 - math.max(redis.call('PTTL', KEYS[1]), 0)
`;

/**
 * The fast path with epoch fences, a script of its own so that the plain one stays as small as it is.
 * KEYS: lock, fence, queue, epoch. ARGV: owner, ttlMs, '1', then the Sentinel view (or '' × 3).
 * Answers as `tryAcquireScript` (the fence always a string); a view that does not hold here is an
 * error reply ("FENCEKIT_VIEW …") before anything is written.
 */
export const tryAcquireEpochScript = `
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
${epochHelpers(VIEW_AT.tryAcquire)}
local refused = epoch_view_error(KEYS[4])
if refused then return redis.error_reply(refused) end
-- The counter's bound before the SET too (a script's writes are not rolled back).
if redis.call('EXISTS', KEYS[1]) == 0 then assert_fence_left(KEYS[2], KEYS[4]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return next_fence(KEYS[2], KEYS[4])
end
return -2 - math.max(redis.call('PTTL', KEYS[1]), 0)
`;

/** KEYS: lock. ARGV: owner, ttlMs. Compare-owner-and-PEXPIRE: 1 extended, 0 not the holder. */
export const extendScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;
