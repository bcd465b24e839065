package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the fleet's signing keys come from, and the mistakes refused with a message that names them. */
class SigningSettingsTest {
    private static final String KEY = "0123456789abcdef0123456789abcdef";
    private static final String OLD_KEY = "fedcba9876543210fedcba9876543210";

    @TempDir
    Path dir;

    private Settings redis(Map<String, String> env) {
        return Settings.resolve(new Settings.Flags(null, "redis", null, null, false, null, null, null, null, null,
                List.of(), List.of(), null), env, dir);
    }

    @Test
    void withoutAKeyEntriesAreUnsigned() {
        Settings settings = redis(Map.of());

        assertThat(settings.signingKeys().isEmpty()).isTrue();
        assertThat(settings.sources().get("signing_key")).startsWith("none");
    }

    @Test
    void theEnvironmentGivesTheKeyAndOneOldKeyStillAccepted() {
        Settings settings = redis(Map.of("EXECACHE_SIGNING_KEY", KEY, "EXECACHE_SIGNING_KEY_OLD", OLD_KEY));

        assertThat(settings.signingKeys().size()).isEqualTo(2);
        assertThat(settings.sources().get("signing_key")).isEqualTo("env EXECACHE_SIGNING_KEY");
    }

    @Test
    void aKeyFileNamedByTheConfigHoldsTheKeyThenOldKeys() throws IOException {
        Files.writeString(dir.resolve("fleet.key"), "# written by the deploy\n" + KEY + "\n\n" + OLD_KEY + "\n");
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    signing_key_file: fleet.key\n");

        Settings settings = redis(Map.of());

        assertThat(settings.signingKeys().size()).isEqualTo(2);
        assertThat(settings.sources().get("signing_key")).contains("fleet.key");
    }

    @Test
    void theKeyItselfInTheConfigFileIsRefused() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    signing_key: " + KEY + "\n");

        assertThatThrownBy(() -> redis(Map.of()))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("code_execution.cache.signing_key: the fleet's signing key never goes in the config file")
                .hasMessageContaining("signing_key_file")
                .hasMessageNotContaining(KEY);
    }

    @Test
    void aShortKeyIsRefusedWithoutPrintingIt() {
        assertThatThrownBy(() -> redis(Map.of("EXECACHE_SIGNING_KEY", "hunter2")))
                .isInstanceOf(UsageException.class)
                .hasMessageStartingWith("EXECACHE_SIGNING_KEY: the signing key has 7 characters; use at least 16")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    void aMissingOrEmptyKeyFileIsAnErrorNamingIt() throws IOException {
        assertThatThrownBy(() -> redis(Map.of("EXECACHE_SIGNING_KEY_FILE", "nope.key")))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("EXECACHE_SIGNING_KEY_FILE: cannot read the signing key file")
                .hasMessageContaining("nope.key (no such file)");
        Files.writeString(dir.resolve("empty.key"), "# nothing yet\n");
        assertThatThrownBy(() -> redis(Map.of("EXECACHE_SIGNING_KEY_FILE", "empty.key")))
                .hasMessageContaining("empty.key holds no key");
    }

    @Test
    void anOldKeyWithoutTheKeyThatSignsIsRefusedRatherThanIgnored() throws IOException {
        Files.writeString(dir.resolve("fleet.key"), KEY + "\n");

        for (Map<String, String> env : List.of(Map.of("EXECACHE_SIGNING_KEY_OLD", OLD_KEY),
                Map.of("EXECACHE_SIGNING_KEY_OLD", OLD_KEY, "EXECACHE_SIGNING_KEY_FILE", "fleet.key"))) {
            assertThatThrownBy(() -> redis(env))
                    .isInstanceOf(UsageException.class)
                    .hasMessageStartingWith("EXECACHE_SIGNING_KEY_OLD: an old key is accepted only beside EXECACHE_SIGNING_KEY,")
                    .hasMessageNotContaining(OLD_KEY);
        }
    }
}
