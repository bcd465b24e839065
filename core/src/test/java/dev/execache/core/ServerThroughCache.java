package dev.execache.core;

import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Sandbox;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One downstream server, {@code acct}, as a gateway offers it to agents and to code: reached as
 * {@code identity} (its tool's version includes the identity, as a discovered tool's does), its
 * read {@code acct__private_items} answering {@code items} through a {@link CachedTool}, and the
 * store's write generation of {@code acct}, which a read notes when it starts.
 */
final class ServerThroughCache implements CodeTools {
    static final String READ = "acct__private_items";

    final MutableToolVersions versions;
    final CachedTool cache;
    /** Calls the server itself answered. */
    final AtomicInteger served = new AtomicInteger();
    private final String identity;
    /** Runs inside the server while it answers a read: a test makes a write arrive there. */
    volatile Runnable duringRead = () -> { };

    ServerThroughCache(CacheStore store, Clock clock, String identity, String items, Duration ttl) {
        this.identity = identity;
        this.versions = new MutableToolVersions(Map.of(READ, "mcp:definition+" + identity));
        this.cache = CachedTool.builder((tool, args) -> {
            served.incrementAndGet();
            duringRead.run();
            return ToolResult.ok("{\"items\":\"" + items + "\"}");
        }, store).rule(ToolCacheRule.cache("acct__*", ttl, 100)).toolVersions(versions).clock(clock).build();
    }

    /** A read as an agent makes it. */
    ToolCallOutcome read() {
        return cache.call(ToolCallRequest.of(READ, Map.of()).readOf("acct"));
    }

    /** A call that may change the server: it starts, ends, and the server's cached reads go. */
    void write() {
        cache.advanceWriteGeneration("acct");
        cache.advanceWriteGeneration("acct");
        cache.policy().clear("acct__*");
    }

    /** Runs of code: code that names {@code tools.acct} calls the read and returns its answer; other code returns 1. */
    CachedExecutor executor(CacheStore store, Clock clock, String scope) {
        Sandbox sandbox = (request, tools) -> ExecutionResult.success(request.code().contains("tools.acct")
                ? tools.call("acct", "private_items", "{}").answer().json() : "1", "", Duration.ofMillis(5));
        return CachedExecutor.builder(sandbox, store).toolVersions(versions).clock(clock).versionScope(scope)
                .codeTools(this).build();
    }

    @Override
    public Map<String, List<String>> reachable() {
        return Map.of("acct", List.of("private_items"));
    }

    @Override
    public Set<String> names() {
        return Set.of(READ);
    }

    @Override
    public Map<String, String> identities() {
        return Map.of("acct", identity);
    }

    @Override
    public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
        long seen = cache.writeGeneration("acct").orElseThrow();
        ToolCallOutcome outcome = cache.call(ToolCallRequest.of(READ, Map.of()).readOf("acct", seen));
        return new CodeToolCall(READ, versions.versions().get(READ), outcome, true, outcome.result().json().length(),
                Map.of("acct", seen));
    }
}
