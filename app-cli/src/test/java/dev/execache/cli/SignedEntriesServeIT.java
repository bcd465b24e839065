package dev.execache.cli;

import static dev.execache.cli.ServeIT.structured;
import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.gateway.Downstream;
import dev.execache.store.redis.RedisServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Signed entries through {@code execache serve}: instances on one Redis, each with the keys of its own environment. */
class SignedEntriesServeIT {
    private static final String KEY = SignedEntriesIT.KEY;
    private static final String OTHER_KEY = SignedEntriesIT.OTHER_KEY;
    private static final String OLD_KEY = SignedEntriesIT.NEW_KEY;

    @TempDir
    Path dir;

    @Test
    void instancesWithOneKeyShareAHitOneWithAnotherKeyIsNotServedItAndNoStartedServerSeesAKey() throws Exception {
        Path environment = dir.resolve("lab-env.txt");
        // the downstream server writes down the environment it was given, then serves as usual; code
        // may not call it, so that runs are not keyed on its identity (which the fleet key keys) and
        // the instance with another key meets the entry the first one signed
        Path config = Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: sh
                    args: ["-c", "env > '%s'; exec node '%s'"]
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                    code_access: false
                """.formatted(environment, Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        Map<String, Object> code = Map.of("code", "return 6 * 7");
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            String[] arguments = {"--store", "redis", "--redis-url", redis.url(), "--config", config.toString()};
            String writer;
            try (ServeProcess first = ServeProcess.start(Map.of("EXECACHE_SIGNING_KEY", KEY, "EXECACHE_SIGNING_KEY_OLD", OLD_KEY,
                    "EXECACHE_REDIS_URL", redis.url()), arguments)) {
                first.awaitStderr(line -> line.contains("server lab: connected"), Duration.ofSeconds(60));
                writer = structured(first.call("execute_code", code)).get("cache").textValue();

                assertThat(Files.readString(environment)).as("the downstream server's environment")
                        .contains("HOME=")
                        .doesNotContain("EXECACHE_SIGNING_KEY").doesNotContain("EXECACHE_REDIS_URL")
                        .doesNotContain(KEY).doesNotContain(OLD_KEY);
                assertThat(first.stderr()).noneMatch(line -> line.contains("not signed"));
            }
            try (ServeProcess same = ServeProcess.start(Map.of("EXECACHE_SIGNING_KEY", KEY), arguments)) {
                assertThat(writer).isEqualTo("miss");
                assertThat(structured(same.call("execute_code", code)).get("cache").textValue())
                        .as(String.join("\n", same.stderr())).isEqualTo("hit");
            }
            try (ServeProcess other = ServeProcess.start(Map.of("EXECACHE_SIGNING_KEY", OTHER_KEY), arguments)) {
                var outcome = structured(other.call("execute_code", code));

                other.awaitStderr(line -> line.contains("not served"), Duration.ofSeconds(60));
                assertThat(outcome.get("cache").textValue()).as(String.join("\n", other.stderr())).isEqualTo("miss");
                assertThat(outcome.get("result").intValue()).isEqualTo(42);
                assertThat(other.stderr()).filteredOn(line -> line.contains("warning")).singleElement().asString()
                        .contains("a signature none of the fleet's keys made").doesNotContain(KEY).doesNotContain(OTHER_KEY);
            }
            try (ServeProcess unsigned = ServeProcess.start(Map.of(), arguments)) {
                unsigned.call("execute_code", Map.of("code", "return 'unsigned'"));
                unsigned.awaitStderr(line -> line.contains("not signed"), Duration.ofSeconds(60));

                assertThat(unsigned.stderr()).as("one warning, at start").filteredOn(line -> line.contains("not signed"))
                        .hasSize(1);
            }
        }
    }
}
