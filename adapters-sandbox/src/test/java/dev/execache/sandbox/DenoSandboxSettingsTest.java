package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.Limits;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class DenoSandboxSettingsTest {

    @Test
    void defaultsLookForDenoAndKeepFilesInTheUsersCache() {
        DenoSandboxSettings settings = DenoSandboxSettings.defaults();

        assertThat(settings.denoExecutable()).isNull();
        assertThat(settings.cacheDirectory()).isEqualTo(DenoSandboxSettings.defaultCacheDirectory());
        assertThat(settings.cacheDirectory().getFileName()).hasToString("execache");
        assertThat(settings.warmPoolSize()).isBetween(1, 4);
        assertThat(settings.warmPoolLimits()).isEqualTo(Limits.DEFAULTS);
    }

    @Test
    void aWarmPoolSizeOutOfRangeFailsNamingTheField() {
        assertThatThrownBy(() -> DenoSandboxSettings.builder().warmPoolSize(-1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("warmPoolSize");
        assertThatThrownBy(() -> DenoSandboxSettings.builder().warmPoolSize(65).build())
                .hasMessageContaining("warmPoolSize");
    }

    @Test
    void aReadPathDenoCannotTakeFailsAtBuildTime() {
        assertThatThrownBy(() -> DenoSandboxSettings.builder()
                .warmPoolLimits(Limits.DEFAULTS.withAllowRead(List.of("/data/a,b"))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("comma");
    }

    @Test
    void pathsAreMadeAbsolute() {
        DenoSandboxSettings settings = DenoSandboxSettings.builder()
                .denoExecutable(Path.of("bin/deno")).cacheDirectory(Path.of("cache")).build();

        assertThat(settings.denoExecutable()).isAbsolute();
        assertThat(settings.cacheDirectory()).isAbsolute();
        assertThat(settings.toBuilder().build()).isEqualTo(settings);
    }
}
