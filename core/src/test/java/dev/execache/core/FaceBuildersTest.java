package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Both faces are built the same way: what they share is set alike, and a bad setting fails when set, naming it. */
class FaceBuildersTest {
    final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    final SimpleStore store = new SimpleStore(clock);

    CachedExecutor.Builder executor() {
        return CachedExecutor.builder((request, tools) -> ExecutionResult.success("1", "", Duration.ZERO), store);
    }

    CachedTool.Builder tool() {
        return CachedTool.builder((name, args) -> ToolResult.ok("1"), store);
    }

    @Test
    void aMissingSharedSettingIsRefusedByBothBuildersByName() {
        Map<String, Consumer<FaceBuilder<?>>> settings = Map.of(
                "toolVersions", builder -> builder.toolVersions(null),
                "clock", builder -> builder.clock(null),
                "ticker", builder -> builder.ticker(null),
                "telemetry", builder -> builder.telemetry(null));
        for (FaceBuilder<?> builder : List.of(executor(), tool())) {
            settings.forEach((name, setting) -> assertThatThrownBy(() -> setting.accept(builder))
                    .isInstanceOf(NullPointerException.class).hasMessage(name + " must not be null"));
        }
    }

    @Test
    void theExecutorsOwnSettingsAreCheckedWhenSet() {
        assertThatThrownBy(() -> executor().codeTools(null)).hasMessage("codeTools must not be null");
        assertThatThrownBy(() -> executor().cachePolicy(null)).hasMessage("cachePolicy must not be null");
        assertThatThrownBy(() -> executor().keepForRevalidation(-1, 0, Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("revalidation entries must not be negative: -1");
        assertThatThrownBy(() -> executor().keepForRevalidation(1, 1, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("keepFor must be positive: PT0S");
    }

    @Test
    void eachSharedSettingReturnsTheFacesOwnBuilderSoItsOwnSettingsFollow() {
        CachedExecutor executor = executor().clock(clock).ticker(Ticker.SYSTEM).cachePolicy(CachePolicy.DEFAULTS)
                .build();
        CachedTool tool = tool().clock(clock).ticker(Ticker.SYSTEM).flightHold(Duration.ofSeconds(1)).build();

        assertThat(executor.policy().clock()).isSameAs(clock);
        assertThat(tool.call(ToolCallRequest.of("read", Map.of())).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void aRuleIsMadeByItsFactoriesAndChangedOneComponentAtATime() {
        ToolCacheRule rule = ToolCacheRule.cache("db__query", Duration.ofSeconds(30), 5);

        assertThat(rule.enabled(false)).isEqualTo(new ToolCacheRule(Glob.of("db__query"), false, Duration.ofSeconds(30),
                5, null));
        assertThat(ToolCacheRule.never("db__query").enabled()).isFalse();
        assertThatThrownBy(() -> ToolCacheRule.cache("db__query", Duration.ofSeconds(30), 0))
                .hasMessage("maxEntries must be at least 1 (rule db__query): 0");
    }
}
