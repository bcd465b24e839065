package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.gateway.Expose;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code expose}: what serve's tools/list holds, on the one road of settings (flag, environment, file, default). */
class ExposeSettingTest {
    @TempDir
    Path dir;

    private Settings resolve(String flag, Map<String, String> env) {
        return Settings.resolve(Settings.Flags.none().withExpose(flag), env, dir);
    }

    @Test
    void byDefaultEveryServersToolIsListed() {
        Settings settings = resolve(null, Map.of());

        assertThat(settings.expose()).isEqualTo(Expose.ALL);
        assertThat(settings.sources()).containsEntry("expose", "default");
    }

    @Test
    void theFlagBeatsTheEnvironmentWhichBeatsTheConfigFile() throws Exception {
        Path config = Files.writeString(dir.resolve("execache.yaml"), "expose: code\n");

        assertThat(resolve(null, Map.of()).expose()).isEqualTo(Expose.CODE);
        assertThat(resolve(null, Map.of()).sources()).containsEntry("expose", "config " + config);
        assertThat(resolve(null, Map.of("EXECACHE_EXPOSE", "all")).expose()).isEqualTo(Expose.ALL);
        assertThat(resolve("code", Map.of("EXECACHE_EXPOSE", "all")).expose()).isEqualTo(Expose.CODE);
        assertThat(resolve("ALL", Map.of()).sources()).containsEntry("expose", "flag --expose");
    }

    @Test
    void aWrongValueIsAUsageErrorNamingWhereItWasWritten() throws Exception {
        assertThatThrownBy(() -> resolve("some", Map.of())).isInstanceOf(UsageException.class)
                .hasMessage("--expose: must be all or code, not 'some'");
        assertThatThrownBy(() -> resolve(null, Map.of("EXECACHE_EXPOSE", "tools"))).isInstanceOf(UsageException.class)
                .hasMessage("EXECACHE_EXPOSE: must be all or code, not 'tools'");
        Path config = Files.writeString(dir.resolve("execache.yaml"), "expose: everything\n");
        assertThatThrownBy(() -> resolve(null, Map.of())).isInstanceOf(UsageException.class)
                .hasMessage(config + ": expose: must be all or code, not 'everything'");
    }
}
