package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** A tool call whose rule names a validator: an expired answer costs one validator call when nothing changed. */
class ToolValidatorTest {
    private static final Duration TTL = Duration.ofSeconds(60);
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final SimpleStore store = new SimpleStore(clock);
    private final Map<String, String> files = new ConcurrentHashMap<>(Map.of("a.txt", "alpha", "b.txt", "beta"));
    private final Map<String, Integer> modified = new ConcurrentHashMap<>(Map.of("a.txt", 1, "b.txt", 1));
    private final List<String> asked = new ArrayList<>();

    private final ToolInvoker server = (tool, args) -> {
        synchronized (asked) {
            asked.add(tool);
        }
        String path = String.valueOf(args.get("path"));
        return switch (tool) {
            case "fs__read_text_file" -> ToolResult.ok("{\"text\":\"" + files.get(path) + "\"}");
            case "fs__get_file_info" -> ToolResult.ok("{\"modified\":" + modified.get(path) + "}");
            default -> throw new IllegalStateException("no tool " + tool);
        };
    };

    private CachedTool cached(ToolValidator validator) {
        return CachedTool.builder(server, store).clock(clock)
                .rule(ToolCacheRule.cache("fs__read_text_file", TTL, 100).validatedBy(validator)).build();
    }

    private ToolCallOutcome read(CachedTool cached, String path) {
        return cached.call(ToolCallRequest.of("fs__read_text_file", Map.of("path", path)).readOf("fs"));
    }

    private List<String> askedSince(int from) {
        synchronized (asked) {
            return List.copyOf(asked.subList(from, asked.size()));
        }
    }

    @Test
    void anExpiredAnswerWhoseValidatorAnswersAsBeforeStandsWithOneValidatorCall() {
        CachedTool cached = cached(new ToolValidator("fs__get_file_info", Map.of("path", "{path}")));

        assertThat(read(cached, "a.txt").status()).isEqualTo(CacheStatus.MISS);
        assertThat(askedSince(0)).containsExactly("fs__get_file_info", "fs__read_text_file");
        clock.advance(TTL.plusSeconds(1));

        ToolCallOutcome revalidated = read(cached, "a.txt");

        assertThat(revalidated.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(revalidated.result().json()).isEqualTo("{\"text\":\"alpha\"}");
        assertThat(askedSince(2)).containsExactly("fs__get_file_info");
        assertThat(revalidated.expiresAt()).as("freshness renewed").isEqualTo(clock.instant().plus(TTL));
        assertThat(read(cached, "a.txt").status()).isEqualTo(CacheStatus.HIT);
        assertThat(askedSince(3)).isEmpty();
        assertThat(store.counters().totals().get(Counter.REVALIDATIONS)).isEqualTo(1L);
    }

    @Test
    void anExpiredAnswerWhoseValidatorAnswersOtherwiseIsAskedOfTheToolOnce() {
        CachedTool cached = cached(ToolValidator.sameArguments("fs__get_file_info"));
        read(cached, "a.txt");
        clock.advance(TTL.plusSeconds(1));
        files.put("a.txt", "alpha 2");
        modified.put("a.txt", 2);

        ToolCallOutcome changed = read(cached, "a.txt");

        assertThat(changed.status()).isEqualTo(CacheStatus.MISS);
        assertThat(changed.result().json()).isEqualTo("{\"text\":\"alpha 2\"}");
        assertThat(askedSince(2)).containsExactly("fs__get_file_info", "fs__read_text_file");
        clock.advance(TTL.plusSeconds(1));
        assertThat(read(cached, "a.txt").status()).as("the new validator answer was recorded")
                .isEqualTo(CacheStatus.REVALIDATED);
        assertThat(askedSince(4)).containsExactly("fs__get_file_info");
    }

    @Test
    void aWriteRemovesTheAnswerSoTheNextCallRevalidatesNeverHits() {
        CachedTool cached = cached(new ToolValidator("fs__get_file_info", Map.of("path", "{path}")));
        read(cached, "a.txt");

        cached.policy().clear("fs__*", RemovalCause.WRITE);

        assertThat(read(cached, "a.txt").status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(askedSince(2)).containsExactly("fs__get_file_info");
        modified.put("b.txt", 2);
        read(cached, "b.txt");
        cached.policy().clear("fs__*", RemovalCause.WRITE);
        modified.put("a.txt", 3);
        assertThat(read(cached, "a.txt").status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void aCallTheValidatorsArgumentsCannotBeFilledFromIsKeptForItsTtlOnly() {
        CachedTool cached = cached(new ToolValidator("fs__get_file_info", Map.of("path", "{file}")));
        read(cached, "a.txt");
        assertThat(askedSince(0)).containsExactly("fs__read_text_file");
        clock.advance(TTL.plusSeconds(1));

        assertThat(read(cached, "a.txt").status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void noCacheAsksTheToolAndRecordsTheValidatorAnswerForTheNext() {
        CachedTool cached = cached(ToolValidator.sameArguments("fs__get_file_info"));
        read(cached, "a.txt");
        clock.advance(TTL.plusSeconds(1));

        ToolCallOutcome fresh = cached.call(ToolCallRequest.of("fs__read_text_file", Map.of("path", "a.txt")).readOf("fs").withFreshness(Freshness.NO_CACHE));

        assertThat(fresh.status()).isEqualTo(CacheStatus.MISS);
        assertThat(askedSince(2)).containsExactly("fs__get_file_info", "fs__read_text_file");
    }

    @Test
    void aValidatorNotUsableNowLeavesTheTtlAlone() {
        CachedTool cached = CachedTool.builder(server, store).clock(clock)
                .rule(ToolCacheRule.cache("fs__read_text_file", TTL, 100)
                        .validatedBy(ToolValidator.sameArguments("fs__get_file_info")))
                .validatorUsable(tool -> false).build();
        read(cached, "a.txt");
        clock.advance(TTL.plusSeconds(1));

        assertThat(read(cached, "a.txt").status()).isEqualTo(CacheStatus.MISS);
        assertThat(asked).containsExactly("fs__read_text_file", "fs__read_text_file");
    }

    @Test
    void argumentsAreTakenFromTheCallByNameOrAsTheyAre() {
        ToolValidator mapped = new ToolValidator("fs__stat", Map.of("file", "{path}", "mode", "short"));

        assertThat(mapped.fill(Map.of("path", "a.txt", "head", 3)))
                .contains(Map.of("file", "a.txt", "mode", "short"));
        assertThat(mapped.fill(Map.of("head", 3))).isEmpty();
        assertThat(mapped.callArguments()).containsExactly("path");
        assertThat(ToolValidator.sameArguments("fs__stat").fill(Map.of("path", "a.txt")))
                .isEqualTo(Optional.of(Map.of("path", "a.txt")));
        assertThat(ToolValidator.placeholder("{path}")).contains("path");
        assertThat(ToolValidator.placeholder("a {path}")).isEmpty();
    }
}
