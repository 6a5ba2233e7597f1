/**
 * The permit engine behind `RedisSharedLockClient`'s semaphores and read-write locks: `limit` units
 * per name, each grant taking `weight` of them, waiters served strictly in arrival order and handed
 * their grant by whichever script frees the units (release, cancel, or one that finds a holder
 * expired), as the mutex's release does. Times come from the server's clock (`TIME`): holders'
 * expiries and waiters' deadlines are compared across client processes.
 *
 * KEYS: holders, expiry, fence, queue, waiters, tickets (see `permitKeys`).
 * - holders: hash owner → "weight|fence", plus ':used' (units held) and ':limit'. Field names that
 *   start with ':' cannot be owner tokens (UUIDs).
 * - expiry: sorted set owner → expiry (server ms). holders and expiry live as long as their longest
 *   grant and are deleted when the last holder leaves. A grant on the fast path (nobody held or
 *   waited) writes no expiry entry: its holder is the only one, and holders' own key TTL is its
 *   expiry; the first script that looks further (`purge`) writes the entry from that TTL.
 * - fence: the counter, INCR'd by every grant; never expires.
 * - queue: sorted set owner → ticket; waiters: hash owner → "deadline|weight|ttl|publish|channel"
 *   (publish 'p' PUBLISH, 's' SPUBLISH for Redis Cluster's sharded channels), plus ':limit'; tickets:
 *   the last ticket drawn. All three vanish once nobody waits.
 */
const keyNames = `
local holders, expiry, fence, queue, waiters, tickets = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
`;

/**
 * The helpers that touch only holders and expiry. Defining helpers is work on every call (Lua builds
 * a closure per local function), so a script's fast path comes before them.
 */
const holderHelpers = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function keep(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end

local function used()
  return tonumber(redis.call('HGET', holders, ':used') or '0')
end

local function weight_of(held)
  return tonumber(string.sub(held, 1, string.find(held, '|', 1, true) - 1))
end

local function fence_of(held)
  return string.sub(held, string.find(held, '|', 1, true) + 1)
end

-- Takes owner's grant off the books (its units come back). Returns whether it held one.
local function drop_holder(owner)
  local held = redis.call('HGET', holders, owner)
  redis.call('ZREM', expiry, owner)
  if not held then return false end
  redis.call('HDEL', holders, owner)
  redis.call('HINCRBY', holders, ':used', -weight_of(held))
  return true
end

-- The fast path's sole holder has no expiry entry yet: its expiry is holders' key TTL. Returns
-- whether the expiry set exists now (a sorted set exists only while it has members).
local function note_fast_holder(now)
  if redis.call('EXISTS', expiry) == 1 then return true end
  local left = redis.call('PTTL', holders)
  if left <= 0 then return false end
  local noted = false
  for _, field in ipairs(redis.call('HKEYS', holders)) do
    if string.sub(field, 1, 1) ~= ':' then
      redis.call('ZADD', expiry, now + left, field)
      noted = true
    end
  end
  if noted then redis.call('PEXPIRE', expiry, left) end
  return noted
end

-- Grants whose expiry has passed give their units back; with no holder left the records go.
local function purge(now)
  local tracked = note_fast_holder(now)
  local lapsed = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
  for _, owner in ipairs(lapsed) do drop_holder(owner) end
  -- An expiry set that existed and lost nobody still has members: nothing to delete.
  if (#lapsed > 0 or not tracked) and redis.call('ZCARD', expiry) == 0 then
    redis.call('DEL', holders, expiry)
  end
end
`;

/** The helpers that serve the queue (they touch fence, queue, waiters and tickets too). */
const queueHelpers = `
local function grant(owner, weight, ttl, now, limit)
  local counter = redis.call('INCR', fence)
  -- Lua numbers are doubles: past 2^53 the counter is read back as a string.
  local granted = counter < 9007199254740992 and string.format('%d', counter) or redis.call('GET', fence)
  redis.call('HSET', holders, owner, weight .. '|' .. granted, ':limit', limit)
  redis.call('HINCRBY', holders, ':used', weight)
  redis.call('ZADD', expiry, now + ttl, owner)
  keep(holders, ttl)
  keep(expiry, ttl)
  return granted
end

local function forget_waiter(owner)
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
end

-- Serves the queue from its head while the head's weight fits: strict FIFO, nobody
-- passes the head, not even a request that would fit. Dead entries (deadline passed) are dropped on
-- the way. Each waiter granted here learns it by "owner|fence" on its channel, except 'answered',
-- whose own script call returns the grant. Returns whether anybody still waits, and the live head
-- it stopped at with its entry (nil if none).
local function hand_off(now, limit, answered)
  -- Units in use, read once and kept up to date here (grant adds to ':used' as well).
  local in_use = used()
  local changed = false
  for _ = 1, 1000 do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    -- Empty (a cancel may have taken the last entry before the call): its records go below.
    if not head then
      changed = true
      break
    end
    local entry = redis.call('HGET', waiters, head)
    local alive = false
    if entry then
      local s1 = string.find(entry, '|', 1, true)
      local s2 = string.find(entry, '|', s1 + 1, true)
      local s3 = string.find(entry, '|', s2 + 1, true)
      local s4 = string.find(entry, '|', s3 + 1, true)
      if tonumber(string.sub(entry, 1, s1 - 1)) > now then
        alive = true
        local weight = tonumber(string.sub(entry, s1 + 1, s2 - 1))
        if in_use + weight > limit then return true, head, entry end
        changed = true
        forget_waiter(head)
        local granted = grant(head, weight, tonumber(string.sub(entry, s2 + 1, s3 - 1)), now, limit)
        in_use = in_use + weight
        if head ~= answered then
          local channel, message = string.sub(entry, s4 + 1), head .. '|' .. granted
          if string.sub(entry, s3 + 1, s4 - 1) == 's' then
            redis.call('SPUBLISH', channel, message)
          else
            redis.call('PUBLISH', channel, message)
          end
        end
      end
    end
    if not alive then
      changed = true
      forget_waiter(head)
    end
  end
  -- Unchanged, the queue still has the head it stopped at.
  if changed and redis.call('ZCARD', queue) == 0 then
    redis.call('DEL', queue, waiters, tickets)
    return false
  end
  return true
end
`;

const helpers = `${holderHelpers}${queueHelpers}`;

const prelude = `${keyNames}${helpers}`;

/**
 * ARGV: owner, weight, limit, ttlMs, mode ('try' | 'wait'), waiterTtlMs, publish ('p' | 's'), channel.
 *
 * Grants when the units fit and nobody waits ahead (the uncontended case: one call, one round trip).
 * 'wait' queues the caller (keeping its place on later calls), refreshes its entry and serves the
 * queue, which grants it when its turn has come. A caller that holds a grant already (handed over by
 * a release, or a request whose answer was lost) gets it back re-armed for ttlMs.
 *
 * Returns the fence alone (an integer, or a string past 2^53) for a grant on the fast path, {1, fence}
 * for any other grant; {0, retryMs, fenceSeen} refused (retryMs: when the next holder expiry
 * or dead head could change things; fenceSeen: the counter as this refusal saw it); {-1, limit} when
 * the name is in use with another limit (nothing changed).
 */
export const permitAcquireScript = `${keyNames}
local owner, weight, limit, ttl, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
-- The common case first: nobody holds or waits, so there is no limit to compare, nothing to purge or
-- serve (the weight is at most the limit: the client checks).
-- The holder's expiry is holders' key TTL (no TIME, no expiry entry: see note_fast_holder).
if redis.call('EXISTS', holders, queue) == 0 then
  local counter = redis.call('INCR', fence)
  -- Lua numbers are doubles: past 2^53 the counter is read back as a string.
  local granted = counter < 9007199254740992 and string.format('%d', counter) or redis.call('GET', fence)
  redis.call('HSET', holders, owner, weight .. '|' .. granted, ':used', weight, ':limit', limit)
  redis.call('PEXPIRE', holders, ttl)
  -- A bare integer (or the string past 2^53), not a table: a table is sent as a reply of deferred
  -- length, measurably slower on this hot path (as the mutex's fast path found).
  if counter < 9007199254740992 then return counter end
  return granted
end
${helpers}
local waiter_ttl = tonumber(ARGV[6])
local now = now_ms()
-- Purged first: holders that lapsed no longer pin the limit they were granted under.
purge(now)
local stored = redis.call('HGET', holders, ':limit') or redis.call('HGET', waiters, ':limit')
if stored and stored ~= limit then return {-1, stored} end
local max = tonumber(limit)
-- Units freed by an expiry go to the queue first: nobody may pass a waiter by finding them first.
-- That may grant the caller itself (a queued waiter), which this call then answers.
local queued, head, head_entry = false, nil, nil
if redis.call('EXISTS', queue) == 1 then queued, head, head_entry = hand_off(now, max, owner) end
local mine = redis.call('HGET', holders, owner)
if mine then
  redis.call('ZADD', expiry, now + ttl, owner)
  keep(holders, ttl)
  keep(expiry, ttl)
  forget_waiter(owner)
  return {1, fence_of(mine)}
end
if not queued and used() + weight <= max then
  return {1, grant(owner, weight, ttl, now, limit)}
end
if mode == 'wait' then
  if not redis.call('ZSCORE', queue, owner) then
    redis.call('ZADD', queue, redis.call('INCR', tickets), owner)
  end
  redis.call('HSET', waiters, owner,
    (now + waiter_ttl) .. '|' .. weight .. '|' .. ttl .. '|' .. ARGV[7] .. '|' .. ARGV[8], ':limit', limit)
  for _, key in ipairs({queue, waiters, tickets}) do keep(key, 2 * waiter_ttl) end
  -- No second hand_off: the one above left the queue empty or its head not fitting (and the caller
  -- was granted directly if it fitted with nobody queued), and joining at the tail changes neither.
end
local retry = waiter_ttl
local soonest = redis.call('ZRANGE', expiry, 0, 0, 'WITHSCORES')[2]
if soonest then retry = math.min(retry, tonumber(soonest) - now) end
-- The head hand_off stopped at, unless it is the caller (its entry was just renewed for waiter_ttl);
-- with none, the head is nobody or the caller, just queued.
if head_entry and head ~= owner then
  retry = math.min(retry, tonumber(string.sub(head_entry, 1, string.find(head_entry, '|', 1, true) - 1)) - now)
end
return {0, math.max(retry, 1), redis.call('GET', fence) or '0'}
`;

/**
 * ARGV: owner, limit. Gives back owner's grant (release) and/or takes it out of the queue (a waiter's
 * cancel: a grant that raced with it goes back too), then serves the queue with what was freed.
 * Returns 1 released, 0 nothing was held (lapsed, or a waiter that was never granted).
 */
export const permitReleaseScript = `
-- The common case first, before the helpers are even defined: the only holder leaves and nobody
-- waits, so both records go (holders has three fields then: the owner, ':used' and ':limit').
if redis.call('EXISTS', KEYS[4]) == 0 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
    and redis.call('HLEN', KEYS[1]) == 3 then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
${prelude}
local owner, limit = ARGV[1], tonumber(ARGV[2])
local now = now_ms()
purge(now)
local result = drop_holder(owner) and 1 or 0
if redis.call('ZCARD', expiry) == 0 then redis.call('DEL', holders, expiry) end
if redis.call('EXISTS', queue) == 1 then
  -- A holder is never queued (every grant takes its owner out of the queue): only a cancel is.
  if result == 0 then forget_waiter(owner) end
  hand_off(now, limit, nil)
end
return result
`;

/**
 * ARGV: owner, ttlMs, limit. Re-arms owner's grant for ttlMs from now if it still holds one (an
 * expired grant is not revived: its units may be someone else's now). Returns 1 extended, 0 not held.
 */
export const permitExtendScript = `${prelude}
local owner, ttl, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
purge(now)
local result = 0
if redis.call('HGET', holders, owner) then
  redis.call('ZADD', expiry, now + ttl, owner)
  keep(holders, ttl)
  keep(expiry, ttl)
  result = 1
end
-- Units the purge freed go to the waiters now, not at their next heartbeat.
if redis.call('EXISTS', queue) == 1 then hand_off(now, limit, nil) end
return result
`;

/**
 * The uncontended acquire on its own, declaring only the three keys it touches (holders, fence,
 * queue; a Redis Cluster checks every key a script touches was declared), with ARGV owner, weight,
 * limit, ttlMs. Exactly the full acquire script's fast path: it grants when nobody holds or waits and
 * returns the fence alone (an integer, or a string past 2^53); otherwise it decides nothing and
 * returns nil, and the client sends the full script. Fewer keys and arguments are less to encode,
 * send and parse on every uncontended acquire.
 */
export const permitFastAcquireScript = `
local holders, fence, queue = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', holders, queue) ~= 0 then return false end
local weight = ARGV[2]
local counter = redis.call('INCR', fence)
local granted = counter < 9007199254740992 and string.format('%d', counter) or redis.call('GET', fence)
redis.call('HSET', holders, ARGV[1], weight .. '|' .. granted, ':used', weight, ':limit', ARGV[3])
redis.call('PEXPIRE', holders, ARGV[4])
if counter < 9007199254740992 then return counter end
return granted
`;

/**
 * A release while nobody waits, declaring only holders, expiry and queue; ARGV: owner. With no queue
 * there is nobody to hand units to, so this is the full release script minus the hand-off (same
 * purge, same bookkeeping): 1 released, 0 nothing was held. With a queue it decides nothing and
 * returns -1, and the client sends the full release script, which serves the queue.
 */
export const permitFastReleaseScript = `
local holders, expiry, queue = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', queue) == 1 then return -1 end
local owner = ARGV[1]
-- The sole holder leaves (holders has three fields then: the owner, ':used' and ':limit').
if redis.call('HEXISTS', holders, owner) == 1 and redis.call('HLEN', holders) == 3 then
  redis.call('DEL', holders, expiry)
  return 1
end
${holderHelpers}
local now = now_ms()
purge(now)
local result = drop_holder(owner) and 1 or 0
if redis.call('ZCARD', expiry) == 0 then redis.call('DEL', holders, expiry) end
return result
`;
