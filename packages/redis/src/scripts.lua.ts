/**
 * The Lua scripts that make every lock operation one atomic step on the server. Keys, in order:
 * lock, fence, queue, waiters, tickets (see `keys.ts`). Times inside the scripts come from the
 * server's own clock (`TIME`), because waiter deadlines are compared across client processes.
 */

const prelude = `
local lock, fence, queue, waiters, tickets = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The first waiter whose entry is still alive, dropping dead ones on the way: a waiter that died
-- must not keep the queue stuck behind it. An entry is "deadlineMs|handoffTtlMs|channel".
-- Returns owner, wake channel, entry deadline, handoff ttl (0: wake it, do not grant for it).
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
        return head, string.sub(entry, second + 1), deadline, tonumber(string.sub(entry, first + 1, second - 1))
      end
    end
    redis.call('ZREM', queue, head)
    redis.call('HDEL', waiters, head)
  end
  -- Too many dead entries for one call: treat the next as alive so nobody jumps the queue; the
  -- next call purges on.
  return redis.call('ZRANGE', queue, 0, 0)[1], nil, now + 1, 0
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
 * handoff ('1': a release may grant to this waiter directly, fenced; '0': only wake it).
 *
 * Grants when the lock is free and nobody waits ahead of `owner`: `SET lock owner NX PX ttl` and,
 * only then, `INCR fence` (when fenced). In 'wait' mode the caller is (re)queued first, with
 * `ticket` = 'auto' (this node numbers the arrival), a number (a ticket agreed across nodes), or ''
 * (only report this node's next ticket number, without queueing: phase one of a quorum wait).
 *
 * Returns {1, fence} on a grant, else {0, retryMs, ticket}: retryMs is when the caller should look
 * again without a wake-up (the lock's PTTL, or when the waiter ahead of it expires).
 */
export const acquireScript = `${prelude}
local owner, ttl, mode, ticket = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local waiter_ttl = tonumber(ARGV[5])

local function granted()
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
  if ARGV[7] == '1' then return {1, redis.call('GET', fence)} end
  return {1}
end

local function grant()
  if not redis.call('SET', lock, owner, 'NX', 'PX', ttl) then return nil end
  if ARGV[7] == '1' then redis.call('INCR', fence) end
  return granted()
end

-- The common case first: nobody queued and the lock free. Nothing else to read or clean up.
if redis.call('EXISTS', queue) == 0 and redis.call('SET', lock, owner, 'NX', 'PX', ttl) then
  if ARGV[7] == '1' then
    -- GET, not INCR's reply: Lua numbers would lose digits past 2^53.
    redis.call('INCR', fence)
    return {1, redis.call('GET', fence)}
  end
  return {1}
end

local holder = redis.call('GET', lock)
if holder == owner then
  -- Granted already: by a release handing over, or by a request whose answer was lost. Re-arm it.
  redis.call('PEXPIRE', lock, ttl)
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
  local handoff_ttl = ARGV[8] == '1' and ttl or '0'
  redis.call('HSET', waiters, owner, (now + waiter_ttl) .. '|' .. handoff_ttl .. '|' .. ARGV[6])
  keep_queue(2 * waiter_ttl)
end

local retry
if holder then
  retry = redis.call('PTTL', lock)
else
  local head, _, head_deadline = live_head(now)
  if head == nil or head == owner then
    local result = grant()
    if result then return result end
    retry = 1
  else
    retry = head_deadline - now
  end
end

if mode == 'wait' and ticket == '' then
  local next_ticket = redis.call('INCR', tickets)
  keep_queue(2 * waiter_ttl)
  return {0, retry, next_ticket}
end
return {0, retry, tonumber(ticket) or 0}
`;

/**
 * ARGV: owner, requeue ticket ('' = leave the queue), waiterTtlMs, wake channel.
 *
 * Compare-owner-and-delete. With a requeue ticket the caller goes back to its place in the queue
 * (a quorum attempt that failed gives back its partial grants but keeps waiting). Whenever the lock
 * is free afterwards, the head waiter gets it: when it asked for handoff, the lock is granted to it
 * here (SET + INCR fence) and "owner|fence" is PUBLISHed on its client's channel; otherwise "owner"
 * is published, and the waiter comes to take it.
 *
 * Returns 1 released, 0 the lock was already gone, -1 another owner holds it (left untouched).
 */
export const releaseScript = `${prelude}
local owner, requeue = ARGV[1], ARGV[2]
local holder = redis.call('GET', lock)
local result = 0
if holder == owner then
  redis.call('DEL', lock)
  result = 1
elseif holder then
  result = -1
end
if requeue == '' and redis.call('EXISTS', queue) == 0 then return result end

local now = now_ms()
if requeue == '' then
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
else
  local waiter_ttl = tonumber(ARGV[3])
  redis.call('ZADD', queue, requeue, owner)
  redis.call('HSET', waiters, owner, (now + waiter_ttl) .. '|0|' .. ARGV[4])
  keep_queue(2 * waiter_ttl)
end
if result ~= -1 then
  local head, channel, _, handoff_ttl = live_head(now)
  if head and channel and head ~= owner then
    if handoff_ttl > 0 and redis.call('SET', lock, head, 'NX', 'PX', handoff_ttl) then
      redis.call('ZREM', queue, head)
      redis.call('HDEL', waiters, head)
      redis.call('INCR', fence)
      redis.call('PUBLISH', channel, head .. '|' .. redis.call('GET', fence))
    else
      redis.call('PUBLISH', channel, head)
    end
  end
end
return result
`;

/** KEYS: lock. ARGV: owner, ttlMs. Compare-owner-and-PEXPIRE: 1 extended, 0 not the holder. */
export const extendScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;
