package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.Redaction;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.StoreKind;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.CachePolicy;
import dev.execache.core.ToolCacheRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {
    @TempDir
    Path dir;

    private Settings.Flags flags(String store, String ttl, List<String> tools) {
        return new Settings.Flags(null, store, null, null, false, ttl, null, null, null, null, List.of(), tools, null);
    }

    @Test
    void defaultsAreSqliteInTheXdgCacheHome100EntriesFiveMinutes() {
        Settings settings = Settings.resolve(Settings.Flags.none(), Map.of("XDG_CACHE_HOME", "/x/cache"), dir);

        assertThat(settings.store()).isEqualTo(StoreKind.SQLITE);
        assertThat(settings.sqlitePath()).isEqualTo(Path.of("/x/cache/execache/cache.db"));
        assertThat(settings.policy()).isEqualTo(CachePolicy.DEFAULTS);
        assertThat(settings.limits().timeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(settings.limits().memoryMb()).isEqualTo(512);
    }

    @Test
    void withoutXdgTheFileIsUnderHomeDotCache() {
        Settings settings = Settings.resolve(Settings.Flags.none(), Map.of("HOME", "/home/ada"), dir);

        assertThat(settings.sqlitePath()).isEqualTo(Path.of("/home/ada/.cache/execache/cache.db"));
    }

    @Test
    void flagsBeatEnvironmentWhichBeatsTheConfigFile() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                code_execution:
                  cache:
                    store: memory
                    ttl_seconds: 60
                    max_entries: 7
                """);

        Settings fromFile = Settings.resolve(Settings.Flags.none(), Map.of(), dir);
        Settings fromEnv = Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_STORE", "redis", "EXECACHE_TTL", "2m"), dir);
        Settings fromFlags = Settings.resolve(flags("sqlite", "90s", List.of()),
                Map.of("EXECACHE_STORE", "redis", "EXECACHE_TTL", "2m"), dir);

        assertThat(fromFile.store()).isEqualTo(StoreKind.MEMORY);
        assertThat(fromFile.policy().ttl()).isEqualTo(Duration.ofSeconds(60));
        assertThat(fromFile.policy().maxEntries()).isEqualTo(7);
        assertThat(fromEnv.store()).isEqualTo(StoreKind.REDIS);
        assertThat(fromEnv.policy().ttl()).isEqualTo(Duration.ofMinutes(2));
        assertThat(fromFlags.store()).isEqualTo(StoreKind.SQLITE);
        assertThat(fromFlags.policy().ttl()).isEqualTo(Duration.ofSeconds(90));
        assertThat(fromFlags.policy().maxEntries()).isEqualTo(7);
    }

    @Test
    void aToolCallRuleWithoutItsOwnTtlOrBoundTakesTheCachesFromFlagEnvironmentOrFile() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                code_execution:
                  cache: {ttl_seconds: 60, max_entries: 7}
                tool_calls:
                  rules:
                    - {tool: "fs__read_*"}
                    - {tool: "db__query", ttl_seconds: 5, max_entries: 3}
                """);

        Settings fromFile = Settings.resolve(Settings.Flags.none(), Map.of(), dir);
        Settings fromEnv = Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_TTL", "2m"), dir);
        Settings fromFlag = Settings.resolve(flags(null, "30s", List.of()), Map.of("EXECACHE_TTL", "2m"), dir);

        assertThat(fromFile.gatewayPolicy().rules()).extracting(ToolCacheRule::ttl, ToolCacheRule::maxEntries)
                .containsExactly(tuple(Duration.ofSeconds(60), 7), tuple(Duration.ofSeconds(5), 3));
        assertThat(fromEnv.gatewayPolicy().rules()).extracting(ToolCacheRule::ttl)
                .containsExactly(Duration.ofMinutes(2), Duration.ofSeconds(5));
        assertThat(fromFlag.gatewayPolicy().rules()).extracting(ToolCacheRule::ttl)
                .containsExactly(Duration.ofSeconds(30), Duration.ofSeconds(5));
    }

    @Test
    void noCacheEnvironmentTurnsCachingOff() {
        assertThat(Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_NO_CACHE", "1"), dir).policy().enabled()).isFalse();
        assertThat(Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_NO_CACHE", "0"), dir).policy().enabled()).isTrue();
    }

    @Test
    void toolVersionsComeFromTheConfigAndFlags() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                tools:
                  github: v1
                  jira:
                    type: object
                    properties: {key: {type: string}}
                """);

        Settings settings = Settings.resolve(flags(null, null, List.of("github=v2", "jira", "sql=3")), Map.of(), dir);

        assertThat(settings.tools()).containsEntry("github", "v2").containsEntry("sql", "3");
        assertThat(settings.tools().get("jira")).startsWith("schema:");
    }

    @Test
    void schemaFingerprintIgnoresKeyOrderButNotContent() {
        String one = ConfigFile.schemaFingerprint(Map.of("type", "object", "required", List.of("a")));
        String same = ConfigFile.schemaFingerprint(new TreeMap<>(Map.of("required", List.of("a"), "type", "object")));
        String other = ConfigFile.schemaFingerprint(Map.of("type", "object", "required", List.of("b")));

        assertThat(one).isEqualTo(same).isNotEqualTo(other);
    }

    @Test
    void toolWithoutAKnownVersionIsAUsageError() {
        assertThatThrownBy(() -> Settings.resolve(flags(null, null, List.of("github")), Map.of(), dir))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("--tool github: no version known for 'github'");
    }

    @Test
    void badValuesNameTheirSource() {
        assertThatThrownBy(() -> Settings.resolve(flags(null, "soon", List.of()), Map.of(), dir))
                .hasMessageContaining("--ttl: 'soon' is not a duration");
        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_TTL", "0s"), dir))
                .hasMessageContaining("EXECACHE_TTL: '0s' must be more than zero");
        assertThatThrownBy(() -> Settings.resolve(flags("mongo", null, List.of()), Map.of(), dir))
                .hasMessageContaining("--store: unknown store 'mongo'");
    }

    @Test
    void unknownConfigKeyIsAnErrorNamingTheKey() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                code_execution:
                  cache:
                    ttl: 60
                """);

        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of(), dir))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("unknown key 'code_execution.cache.ttl'");
    }

    @Test
    void wrongTypeInConfigIsAnErrorNamingTheKey() throws IOException {
        Path config = dir.resolve("custom.yaml");
        Files.writeString(config, "code_execution:\n  cache:\n    max_entries: lots\n");

        assertThatThrownBy(() -> Settings.resolve(
                new Settings.Flags(config, null, null, null, false, null, null, null, null, null, List.of(), List.of(), null), Map.of(), dir))
                .hasMessageContaining("custom.yaml: code_execution.cache.max_entries must be a positive whole number");
    }

    @Test
    void missingConfigFileNamedByTheUserIsAnError() {
        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_CONFIG", "nope.yaml"), dir))
                .hasMessageContaining("nope.yaml does not exist");
    }

    @Test
    void redisPasswordsAreRedactedWhenPrinted() {
        assertThat(Redaction.redactUrl("redis://:s3cret@cache:6379/2")).isEqualTo("redis://:***@cache:6379/2");
        assertThat(Redaction.redactUrl("rediss://user:pw@host:6380")).isEqualTo("rediss://user:***@host:6380");
        assertThat(Redaction.redactUrl("redis://host:6379")).isEqualTo("redis://host:6379");
    }

    @Test
    void theNearestConfigInAParentIsUsedAndItsPathsAreRelativeToIt() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                code_execution:
                  cache: {sqlite_path: cache/project.db}
                  allow_read: [data]
                tools: {github: v1}
                """);
        Path deep = Files.createDirectories(dir.resolve("a/b"));

        Settings settings = Settings.resolve(Settings.Flags.none(), Map.of(), deep);

        assertThat(settings.configPath()).isEqualTo(dir.resolve("execache.yaml"));
        assertThat(settings.sqlitePath()).isEqualTo(dir.resolve("cache/project.db"));
        assertThat(settings.limits().allowRead()).containsExactly(dir.resolve("data").toString());
        assertThat(settings.tools()).containsEntry("github", "v1");
        assertThat(settings.sources()).containsEntry("config", "found in a parent of the working directory")
                .containsEntry("sqlite_path", "config " + dir.resolve("execache.yaml"));
    }

    @Test
    void aProjectConfigWinsOverTheUsersWhichIsUsedWhenThereIsNone() throws IOException {
        Path xdg = Files.createDirectories(dir.resolve("xdg/execache"));
        Files.writeString(xdg.resolve("config.yaml"), "tools: {jira: v2}\n");
        Path project = Files.createDirectories(dir.resolve("project"));
        Map<String, String> env = Map.of("XDG_CONFIG_HOME", dir.resolve("xdg").toString());

        Settings users = Settings.resolve(Settings.Flags.none(), env, project);
        Files.writeString(project.resolve("execache.yaml"), "tools: {sql: v3}\n");
        Settings projects = Settings.resolve(Settings.Flags.none(), env, project);

        assertThat(users.tools()).isEqualTo(Map.of("jira", "v2"));
        assertThat(users.sources()).containsEntry("config", "the user's config");
        assertThat(projects.tools()).isEqualTo(Map.of("sql", "v3"));
        assertThat(projects.sources()).containsEntry("config", "found in the working directory");
    }

    @Test
    void thePersonsExecacheYamlIsFoundFromAnyDirectoryAndItsOldNameStillReadAfterIt() throws IOException {
        Path xdg = Files.createDirectories(dir.resolve("xdg/execache"));
        Files.writeString(xdg.resolve("config.yaml"), "tools: {jira: v2}\n");
        Path elsewhere = Files.createDirectories(dir.resolve("some/where/else"));
        Map<String, String> env = Map.of("XDG_CONFIG_HOME", dir.resolve("xdg").toString(), "HOME", dir.toString());

        Settings oldName = Settings.resolve(Settings.Flags.none(), env, elsewhere);
        Files.writeString(xdg.resolve("execache.yaml"), "tools: {sql: v3}\n");
        Settings newName = Settings.resolve(Settings.Flags.none(), env, elsewhere);

        assertThat(oldName.configPath()).isEqualTo(xdg.resolve("config.yaml"));
        assertThat(newName.configPath()).isEqualTo(xdg.resolve("execache.yaml"));
        assertThat(newName.tools()).isEqualTo(Map.of("sql", "v3"));
        assertThat(newName.sources()).containsEntry("config", "the user's config").containsEntry("config_search",
                "looked for execache.yaml in " + elsewhere + " and its parents, then " + xdg.resolve("execache.yaml")
                        + ", " + xdg.resolve("config.yaml"));
        assertThat(Settings.userConfigFile(env)).isEqualTo(xdg.resolve("execache.yaml"));
        assertThat(Settings.userConfigFile(Map.of("HOME", dir.toString())))
                .isEqualTo(dir.resolve(".config/execache/execache.yaml"));
    }

    @Test
    void everySettingSaysWhereItCameFrom() {
        Settings settings = Settings.resolve(flags(null, "90s", List.of("gh=v1")), Map.of("EXECACHE_TIMEOUT", "10s"), dir);

        assertThat(settings.sources()).containsEntry("ttl", "flag --ttl").containsEntry("timeout", "env EXECACHE_TIMEOUT")
                .containsEntry("store", "default").containsEntry("tools", "flag --tool");
    }

    @Test
    void emptyPathsRedisPortsAndHugeDurationsNameTheirSource() {
        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_SQLITE_PATH", " "), dir))
                .hasMessage("EXECACHE_SQLITE_PATH: the path must not be empty");
        assertThatThrownBy(() -> Settings.resolve(flags("redis", null, List.of()),
                Map.of("EXECACHE_REDIS_URL", "redis://h:70000"), dir))
                .hasMessageStartingWith("EXECACHE_REDIS_URL: malformed Redis URL");
        assertThatThrownBy(() -> Settings.resolve(flags(null, "9999999999999999d", List.of()), Map.of(), dir))
                .hasMessageStartingWith("--ttl: '9999999999999999d' is too large");
        assertThatThrownBy(() -> Settings.resolve(flags(null, "36501d", List.of()), Map.of(), dir))
                .hasMessageStartingWith("--ttl: '36501d' is too large");
    }

    @Test
    void theRedisPartitionsComeFromTheFlagOverTheEnvironmentOverTheConfigFileAndDefaultTo16() throws IOException {
        assertThat(Settings.resolve(Settings.Flags.none(), Map.of(), dir).redisPartitions()).isEqualTo(16);
        Files.writeString(dir.resolve("execache.yaml"), """
                code_execution:
                  cache:
                    redis_partitions: 32
                """);

        assertThat(Settings.resolve(Settings.Flags.none(), Map.of(), dir).redisPartitions()).isEqualTo(32);
        Settings fromEnv = Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_REDIS_PARTITIONS", "64"), dir);
        assertThat(fromEnv.redisPartitions()).isEqualTo(64);
        assertThat(fromEnv.sources()).containsEntry("redis_partitions", "env EXECACHE_REDIS_PARTITIONS");
        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_REDIS_PARTITIONS", "5000"), dir))
                .hasMessage("EXECACHE_REDIS_PARTITIONS: partitions must be between 1 and 1024: 5000");
        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of("EXECACHE_REDIS_PARTITIONS", "0"), dir))
                .hasMessageStartingWith("EXECACHE_REDIS_PARTITIONS: ");
        Settings.Flags eight = new Settings.Flags(null, null, null, null, false, null, null, null, null, null, List.of(),
                List.of(), 8);
        Settings fromFlag = Settings.resolve(eight, Map.of("EXECACHE_REDIS_PARTITIONS", "64"), dir);
        assertThat(fromFlag.redisPartitions()).isEqualTo(8);
        assertThat(fromFlag.sources()).containsEntry("redis_partitions", "flag --redis-partitions");
        Settings.Flags tooMany = new Settings.Flags(null, null, null, null, false, null, null, null, null, null, List.of(),
                List.of(), 4096);
        assertThatThrownBy(() -> Settings.resolve(tooMany, Map.of(), dir))
                .hasMessage("--redis-partitions: partitions must be between 1 and 1024: 4096");
    }
}
