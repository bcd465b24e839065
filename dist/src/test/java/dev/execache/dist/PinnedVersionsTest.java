package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.sandbox.DenoSandboxSettings;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The versions the release names in files of other languages agree with the build's own. */
class PinnedVersionsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theNpmPackageDependsOnTheDenoExecacheInstallsItself() throws Exception {
        JsonNode testPeers = JSON.readTree(Path.of("src/test/node/package.json").toFile());

        assertThat(Release.property("execache.denoVersion")).isEqualTo(DenoSandboxSettings.DENO_VERSION);
        assertThat(testPeers.path("dependencies").path("deno").asText()).isEqualTo(DenoSandboxSettings.DENO_VERSION);
    }

    @Test
    void theArchivesDenoIsThePackageTheLockFileRecords() throws Exception {
        JsonNode locked = JSON.readTree(Path.of("src/test/node/package-lock.json").toFile())
                .path("packages").path("node_modules/@deno/linux-x64-glibc");
        String integrity = locked.path("integrity").asText();

        assertThat(locked.path("version").asText()).isEqualTo(DenoSandboxSettings.DENO_VERSION);
        assertThat(integrity).startsWith("sha512-");
        assertThat(HexFormat.of().formatHex(Base64.getDecoder().decode(integrity.substring("sha512-".length()))))
                .isEqualTo(Release.property("execache.denoSha512"));
    }

    @Test
    void theJbangCatalogRunsThisVersionsCommandLine() throws Exception {
        JsonNode alias = JSON.readTree(Release.sources().resolve("jbang-catalog.json").toFile()).path("aliases").path("execache");

        assertThat(alias.path("script-ref").asText()).isEqualTo("dev.execache:execache-cli:" + Release.version());
        assertThat(Class.forName(alias.path("main").asText())).isNotNull();
        assertThat(alias.path("java").asText()).isEqualTo("17+");
    }
}
