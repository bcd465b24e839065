package dev.execache.store.redis;

import dev.execache.core.spi.StoreCounters;

/**
 * The store's Lua scripts, each on one partition of the cache. Each runs atomically in Redis, so
 * the partition's share of the bound and its indexes hold under any number of clients, and a hit
 * costs one round trip. Every script but {@link #GET} gets the keys of
 * {@link KeyLayout.Partition#scriptKeys()} and, as ARGV[1] and ARGV[2], the partition's root
 * ({@link KeyLayout.Partition#root()}) and the caller's clock in epoch milliseconds: expiry is
 * decided by the injected clock, not the server's.
 *
 * <p>Redis Cluster: the keys a script gets as KEYS are all in its partition's one hash slot, so
 * the script runs on the node that owns it. The entry and tool-set keys a script derives at run
 * time from the root (an entry a tool's set names, an entry the bound evicts) carry the same hash
 * tag and so live in that same slot; declaring them all as KEYS would cost a round trip to learn them.
 */
final class Scripts {
    private static final String COMMON = """
            local lru, exp, meta, bytes, seq, counters = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
            local groups, groupSizes, writes = KEYS[7], KEYS[8], KEYS[9]
            local prefix, now = ARGV[1], tonumber(ARGV[2])

            local function entryKey(key)
                return prefix .. 'e:' .. key
            end

            local function toolKey(tool)
                return prefix .. 't:' .. tool
            end

            local function count(counter, n)
                if n > 0 then
                    if redis.call('EXISTS', counters) == 0 then
                        redis.call('HSET', counters, 'since', now)
                    end
                    redis.call('HINCRBY', counters, counter, n)
                end
            end

            -- Takes an entry out of the store and every index. Returns nil if it was not there,
            -- 'gone' if Redis had already expired its hash, 'evicted' if Redis dropped it before its
            -- time (maxmemory), else 'expired' or 'live'. Within a second of its expiry a missing
            -- hash is taken as expired: Redis's clock and the caller's may differ by a round trip.
            local function drop(key)
                local info = redis.call('HGET', meta, key)
                if not info then
                    return nil
                end
                info = cjson.decode(info)
                local group = redis.call('HGET', groups, key)
                if group then
                    redis.call('HDEL', groups, key)
                    if redis.call('HINCRBY', groupSizes, group, -1) <= 0 then
                        redis.call('HDEL', groupSizes, group)
                    end
                end
                for i = 2, #info do
                    redis.call('SREM', toolKey(info[i]), key)
                end
                -- never below zero: under an allkeys-* policy Redis may have evicted the count itself
                if redis.call('DECRBY', bytes, info[1]) < 0 then
                    redis.call('SET', bytes, 0)
                end
                redis.call('HDEL', meta, key)
                redis.call('ZREM', lru, key)
                local indexedExpiry = tonumber(redis.call('ZSCORE', exp, key))
                redis.call('ZREM', exp, key)
                local entry = entryKey(key)
                local expires = redis.call('HGET', entry, 'expires')
                if not expires then
                    if indexedExpiry and indexedExpiry > now + 1000 then
                        return 'evicted'
                    end
                    return 'gone'
                end
                redis.call('DEL', entry)
                if tonumber(expires) <= now then
                    return 'expired'
                end
                return 'live'
            end

            -- Drops each key; counts those Redis had already expired or evicted. Returns how many were removed.
            local function dropAll(keys)
                local removed, gone, evicted = 0, 0, 0
                for _, key in ipairs(keys) do
                    local state = drop(key)
                    if state == 'gone' then
                        gone = gone + 1
                    elseif state == 'evicted' then
                        evicted = evicted + 1
                    elseif state then
                        removed = removed + 1
                    end
                end
                count('EXPIRATIONS', gone)
                count('EVICTIONS', evicted)
                return removed
            end

            """;

    /**
     * The hit path, kept apart from the others so that it stays small: KEYS are the entry's
     * hash, {@code lru}, {@code seq} and {@code meta}; ARGV[1] key, [2] now, [3] '1' to count a
     * hit and refresh recency (a Redis that refuses writes, out of memory under {@code noeviction},
     * still serves the hit, uncounted and unrefreshed). Returns expires, hits, value, console, exec, created, tools, sum and label
     * (null for an entry written before labels), or empty
     * if there is no live entry, or {'stale'} if there is an expired or Redis-dropped one
     * still indexed, for the caller to run {@link #EXPIRE}.
     */
    static final String GET = """
            local fields = redis.call('HMGET', KEYS[1], 'expires', 'hits', 'value', 'console', 'exec', 'created', 'tools',
                                      'sum', 'label', 'sig')
            local expires = tonumber(fields[1])
            if not expires or expires <= tonumber(ARGV[2]) then
                if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then
                    return {'stale'}
                end
                return {}
            end
            if ARGV[3] == '1' then
                local hits = redis.pcall('HINCRBY', KEYS[1], 'hits', 1)
                if type(hits) == 'number' then
                    fields[2] = tostring(hits)
                end
                local seq = redis.pcall('INCR', KEYS[3])
                if type(seq) == 'number' then
                    redis.pcall('ZADD', KEYS[2], seq, ARGV[1])
                end
            end
            return fields
            """;

    /** How many fields {@link #GET} returns for a live, signed entry. */
    static final int ENTRY_FIELD_COUNT = 10;

    /** ARGV[3] key. Removes the entry if it is expired or gone, counting an expiration; a fresh one stays. */
    static final String EXPIRE = COMMON + """
            local key = ARGV[3]
            local expires = tonumber(redis.call('HGET', entryKey(key), 'expires'))
            if expires and expires > now then
                return 0
            end
            local state = drop(key)
            if state == 'evicted' then
                count('EVICTIONS', 1)
                return 1
            elseif state then
                count('EXPIRATIONS', 1)
                return 1
            end
            return 0
            """;

    /**
     * ARGV[3] key, [4] Redis TTL ms, [5] expires (epoch ms), [6] estimated bytes, [7] the partition's share of the bound,
     * [8] value, [9] console, [10] execution nanos, [11] created (epoch ms), [12] the bound
     * group ('' for none), [13] the partition's share of the group's bound, [14] the value's checksum, [15] the tool
     * versions as one JSON object (see {@link ToolVersions}), [16] the label, [17] the signature ('' for none),
     * [18] the write generations the entry was read at, a JSON object of server to generation
     * ('' for none), then the tool names. When a server's generation is no longer the one given,
     * stores nothing and returns nil (in the same script as the put: no write's advance comes
     * between; see {@code WriteGenerations}). Else purges a batch of expired entries, evicts the
     * group's least recently used past the group's bound, then the store's past the store's.
     * Returns the keys evicted for the group's bound, eldest first.
     */
    static final String PUT = COMMON + """
            if ARGV[18] ~= '' then
                for server, generation in pairs(cjson.decode(ARGV[18])) do
                    if tonumber(redis.call('HGET', writes, server) or '0') ~= generation then
                        return false
                    end
                end
            end
            local key, group = ARGV[3], ARGV[12]
            local replaced = drop(key)
            local entry = entryKey(key)
            local info = {tonumber(ARGV[6])}
            for i = 19, #ARGV do
                info[#info + 1] = ARGV[i]
                redis.call('SADD', toolKey(ARGV[i]), key)
            end
            redis.call('HSET', entry, 'value', ARGV[8], 'console', ARGV[9], 'exec', ARGV[10], 'created', ARGV[11],
                       'expires', ARGV[5], 'hits', '0', 'sum', ARGV[14], 'tools', ARGV[15], 'label', ARGV[16])
            if ARGV[17] ~= '' then
                redis.call('HSET', entry, 'sig', ARGV[17])
            end
            redis.call('PEXPIRE', entry, ARGV[4])
            redis.call('HSET', meta, key, cjson.encode(info))
            redis.call('INCRBY', bytes, ARGV[6])
            redis.call('ZADD', lru, redis.call('INCR', seq), key)
            redis.call('ZADD', exp, ARGV[5], key)

            local expirations, evictions, groupEvicted = 0, 0, {}
            if replaced == 'evicted' then
                evictions = 1
            end
            for _, expired in ipairs(redis.call('ZRANGEBYSCORE', exp, '-inf', ARGV[2], 'LIMIT', 0, 100)) do
                if drop(expired) then
                    expirations = expirations + 1
                end
            end
            if group ~= '' then
                redis.call('HSET', groups, key, group)
                local excess = redis.call('HINCRBY', groupSizes, group, 1) - tonumber(ARGV[13])
                if excess > 0 then
                    for _, eldest in ipairs(redis.call('ZRANGE', lru, 0, -1)) do
                        if excess == 0 then
                            break
                        end
                        if redis.call('HGET', groups, eldest) == group then
                            local state = drop(eldest)
                            if state == 'live' or state == 'evicted' then
                                evictions = evictions + 1
                            else
                                expirations = expirations + 1
                            end
                            groupEvicted[#groupEvicted + 1] = eldest
                            excess = excess - 1
                        end
                    end
                end
            end
            local excess = redis.call('ZCARD', lru) - tonumber(ARGV[7])
            if excess > 0 then
                for _, eldest in ipairs(redis.call('ZRANGE', lru, 0, excess - 1)) do
                    local state = drop(eldest)
                    if state == 'live' or state == 'evicted' then
                        evictions = evictions + 1
                    else
                        expirations = expirations + 1
                    end
                end
            end
            count('EXPIRATIONS', expirations)
            count('EVICTIONS', evictions)
            return groupEvicted
            """;

    /**
     * ARGV[3] key, [4] the signature that failed ('' for none). Removes the entry and counts it
     * as damaged, unless its signature changed since it was read (a writer replaced it). Returns 1
     * if it was removed, else 0.
     */
    static final String REJECT = COMMON + """
            local key = ARGV[3]
            if (redis.call('HGET', entryKey(key), 'sig') or '') ~= ARGV[4] then
                return 0
            end
            -- a hash written by hand is in no index: delete it all the same
            if drop(key) or redis.call('DEL', entryKey(key)) == 1 then
                count('DAMAGED', 1)
                return 1
            end
            return 0
            """;

    /** ARGV[3..] keys. Returns how many entries were removed. */
    static final String REMOVE = COMMON + """
            local keys = {}
            for i = 3, #ARGV do
                keys[#keys + 1] = ARGV[i]
            end
            return dropAll(keys)
            """;

    /**
     * ARGV[3] tool, and ARGV[4] a version or nothing. Removes the entries that depend on the tool
     * and, given a version, were made with that one (an entry whose hash Redis already dropped,
     * or whose tools field is in the form before JSON, goes whatever its version). Returns how
     * many entries were removed.
     */
    static final String REMOVE_BY_TOOL = COMMON + """
            local tool, version = ARGV[3], ARGV[4]
            local keys = redis.call('SMEMBERS', toolKey(tool))
            if version == nil then
                return dropAll(keys)
            end
            local matching = {}
            for _, key in ipairs(keys) do
                local tools = redis.call('HGET', entryKey(key), 'tools')
                local ok, decoded = pcall(cjson.decode, tools or '')
                if not tools or not ok or type(decoded) ~= 'table' or decoded[tool] == version then
                    matching[#matching + 1] = key
                end
            end
            return dropAll(matching)
            """;

    /**
     * Returns {purged, live entries left, their estimated bytes}. Also takes out of the indexes
     * every entry whose hash Redis dropped on its own (maxmemory eviction), counting it, so the
     * count of entries is what Redis holds: one EXISTS per indexed entry, at most the partition's
     * share of the bound. The byte count is made again from the entries left, so that one Redis
     * evicted (an {@code allkeys-*} policy) is right again after this.
     */
    static final String PURGE = COMMON + """
            local expired = redis.call('ZRANGEBYSCORE', exp, '-inf', ARGV[2])
            for _, key in ipairs(expired) do
                drop(key)
            end
            count('EXPIRATIONS', #expired)
            local lost = {}
            for _, key in ipairs(redis.call('ZRANGE', lru, 0, -1)) do
                if redis.call('EXISTS', entryKey(key)) == 0 then
                    lost[#lost + 1] = key
                end
            end
            dropAll(lost)
            -- an index member whose meta Redis evicted is not dropped above: take it out all the same
            for _, key in ipairs(lost) do
                redis.call('ZREM', lru, key)
                redis.call('ZREM', exp, key)
            end
            local total = 0
            for _, key in ipairs(redis.call('ZRANGE', lru, 0, -1)) do
                local info = redis.call('HGET', meta, key)
                if info then
                    total = total + cjson.decode(info)[1]
                end
            end
            -- written only when it drifted: a full Redis (noeviction) refuses a write, and reads go on
            if tonumber(redis.call('GET', bytes) or '0') ~= total then
                if total > 0 then
                    redis.call('SET', bytes, total)
                else
                    redis.call('DEL', bytes)
                end
            end
            return {#expired, redis.call('ZCARD', lru), total}
            """;

    /**
     * KEYS[1] an open session ({@code EXPIRES_AT OWNER}, expiry in epoch milliseconds by the store's clock),
     * ARGV[1] now, ARGV[2] its new expiry, ARGV[3] how long Redis keeps the key (past the expiry, so that the
     * store's clock decides). Returns the owner and restarts the expiry, or false when there is no session.
     */
    static final String USE_SESSION = """
            local value = redis.call('GET', KEYS[1])
            if not value then
              return false
            end
            local space = string.find(value, ' ', 1, true)
            if tonumber(string.sub(value, 1, space - 1)) <= tonumber(ARGV[1]) then
              redis.call('DEL', KEYS[1])
              return false
            end
            local owner = string.sub(value, space + 1)
            redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. owner, 'PX', ARGV[3])
            return owner
            """;

    /** KEYS[1] a session as for {@link #USE_SESSION}, ARGV[1] now. Removes it; 1 when it was open, else 0. */
    static final String END_SESSION = """
            local value = redis.call('GET', KEYS[1])
            if not value then
              return 0
            end
            redis.call('DEL', KEYS[1])
            local space = string.find(value, ' ', 1, true)
            if tonumber(string.sub(value, 1, space - 1)) <= tonumber(ARGV[1]) then
              return 0
            end
            return 1
            """;

    /** Returns how many entries were removed. Counters, versions and the sequence stay. */
    static final String CLEAR = COMMON + """
            local keys = redis.call('HKEYS', meta)
            for _, key in ipairs(keys) do
                drop(key)
            end
            redis.call('DEL', lru, exp, meta, bytes, groups, groupSizes)
            return #keys
            """;

    /**
     * ARGV[3] the agent ('' for none), ARGV[4] the cap on agents, ARGV[5] the agent past the cap,
     * ARGV[6] how many (field, delta) pairs follow for the totals and the tool; after those, (counter,
     * delta) pairs for the agent's fields {@code agent:<COUNTER>:<agent>} ({@link StoreCounters#AGENT_ROW}). An agent is counted by its
     * name if the hash knows it ({@code known-agent:<agent>}) or knows fewer than the cap
     * ({@code known-agents}), else as the agent past the cap: decided here, so atomically for the
     * fleet. The counters hash created here (first counts, or after Redis lost it) records since when
     * it counts, in its field {@code since}.
     */
    static final String INCREMENT_ALL = """
            local counters = KEYS[6]
            if redis.call('EXISTS', counters) == 0 then
              redis.call('HSET', counters, 'since', ARGV[2])
            end
            local plain = 6 + 2 * tonumber(ARGV[6])
            for i = 7, plain, 2 do
              redis.call('HINCRBY', counters, ARGV[i], ARGV[i + 1])
            end
            local agent = ARGV[3]
            if agent == '' then
              return 0
            end
            if agent ~= ARGV[5] and redis.call('HEXISTS', counters, 'known-agent:' .. agent) == 0 then
              if tonumber(redis.call('HGET', counters, 'known-agents') or '0') < tonumber(ARGV[4]) then
                redis.call('HSET', counters, 'known-agent:' .. agent, '1')
                redis.call('HINCRBY', counters, 'known-agents', 1)
              else
                agent = ARGV[5]
              end
            end
            for i = plain + 1, #ARGV, 2 do
              redis.call('HINCRBY', counters, '%s' .. ARGV[i] .. ':' .. agent, ARGV[i + 1])
            end
            return 0
            """.formatted(StoreCounters.AGENT_ROW);

    /** Every counter, in total and per tool, starts again from zero, counting from now. */
    static final String ZERO_COUNTERS = """
            redis.call('DEL', KEYS[6])
            redis.call('HSET', KEYS[6], 'since', ARGV[2])
            return 0
            """;

    private Scripts() {
    }

    /** KEYS[1] the writes hash, ARGV[1] a server: advances its write generation. */
    static final String ADVANCE_WRITES = """
            return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
            """;

    /** KEYS[1] flight, ARGV token, lease ms: extends the lease while this token holds it; 1 if it did. */
    static final String RENEW_FLIGHT = """
            if redis.call('get', KEYS[1]) == ARGV[1] then
              return redis.call('pexpire', KEYS[1], ARGV[2])
            end
            return 0
            """;

    /** KEYS[1] flight, ARGV token: ends the flight if this token still holds it (never another holder's). */
    static final String RELEASE_FLIGHT = """
            if redis.call('get', KEYS[1]) == ARGV[1] then
              return redis.call('del', KEYS[1])
            end
            return 0
            """;
}
