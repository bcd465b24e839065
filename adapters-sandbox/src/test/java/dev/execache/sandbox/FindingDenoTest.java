package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.spi.SandboxUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FindingDenoTest {
    private static Path realDeno;

    @BeforeAll
    static void findTheDenoTheOtherTestsUse() {
        realDeno = new DenoLocator(DenoSandboxSettings.defaults()).locate();
    }

    @Test
    void aConfiguredPathThatDoesNotExistIsOneClearError(@TempDir Path directory) {
        DenoSandboxSettings settings = DenoSandboxSettings.builder()
                .denoExecutable(directory.resolve("no-such-deno")).cacheDirectory(directory).build();

        try (DenoSandbox sandbox = new DenoSandbox(settings)) {
            assertThatThrownBy(() -> sandbox.execute(ExecutionRequest.of("return 1", null)))
                    .isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining("no-such-deno does not exist")
                    .hasMessageContaining("To fix");
        }
    }

    @Test
    void aConfiguredFileThatIsNotDenoIsOneClearError(@TempDir Path directory) throws IOException {
        Path broken = script(directory, "deno", "echo 'segmentation fault' >&2; exit 139");
        Path impostor = script(directory, "impostor", "echo 'hello'");

        assertThatThrownBy(() -> locate(broken, directory, ""))
                .isInstanceOf(SandboxUnavailableException.class)
                .hasMessageContaining("failed on `--version` (exit code 139): segmentation fault");
        assertThatThrownBy(() -> locate(impostor, directory, ""))
                .hasMessageContaining("is not Deno");
    }

    @Test
    void aDenoThatCannotRunTheRunnerIsOneClearErrorAtTheFirstRun(@TempDir Path directory) throws IOException {
        Path fake = script(directory, "deno", "if [ \"$1\" = --version ]; then echo 'deno 2.9.6'; else echo 'unsupported flag' >&2; exit 2; fi");
        DenoSandboxSettings settings = DenoSandboxSettings.builder().denoExecutable(fake).cacheDirectory(directory).build();

        try (DenoSandbox sandbox = new DenoSandbox(settings)) {
            assertThatThrownBy(() -> sandbox.execute(ExecutionRequest.of("return 1", null)))
                    .isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining("exited with code 2 before it could run any code: unsupported flag");
        }
    }

    @Test
    void denoOnThePathComesBeforeAnInstall(@TempDir Path directory) throws IOException {
        Path bin = Files.createDirectory(directory.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("deno"), realDeno);

        Path found = new DenoLocator(settings(null, directory.resolve("cache")), "/nonexistent:" + bin).locate();

        assertThat(found).isEqualTo(bin.resolve("deno").toAbsolutePath());
        assertThat(directory.resolve("cache")).doesNotExist();
    }

    @Test
    void withoutNpmTheErrorSaysHowToFixIt(@TempDir Path directory) {
        DenoSandboxSettings settings = DenoSandboxSettings.builder()
                .cacheDirectory(directory).npmCommand(directory.resolve("no-npm").toString()).build();

        assertThatThrownBy(() -> new DenoLocator(settings, "").locate())
                .isInstanceOf(SandboxUnavailableException.class)
                .hasMessageContaining("npm could not be started")
                .hasMessageContaining("install Node.js with npm")
                .hasMessageContaining("put `deno` on the PATH");
    }

    @Test
    void withNoDenoAnywhereItIsInstalledFromNpmOnceForConcurrentFirstRuns(@TempDir Path directory) throws Exception {
        DenoSandboxSettings settings = DenoSandboxSettings.builder().cacheDirectory(directory).build();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (DenoSandbox first = new DenoSandbox(settings, new DenoLocator(settings, ""));
                DenoSandbox second = new DenoSandbox(settings, new DenoLocator(settings, ""))) {
            Future<ExecutionResult> a = threads.submit(() -> first.execute(ExecutionRequest.of("return 1 + 1", null)));
            Future<ExecutionResult> b = threads.submit(() -> second.execute(ExecutionRequest.of("return 2 + 2", null)));

            assertThat(a.get().value()).isEqualTo("2");
            assertThat(b.get().value()).isEqualTo("4");
        } finally {
            threads.shutdownNow();
        }
        Path installed = directory.resolve("deno-" + DenoSandboxSettings.DENO_VERSION);
        assertThat(installed.resolve("node_modules/@deno")).isDirectory();
        try (Stream<Path> entries = Files.list(directory)) {
            assertThat(entries.map(path -> path.getFileName().toString()).filter(name -> name.contains(".tmp-")).toList())
                    .as("staging directories left behind").isEmpty();
        }
    }

    private static Path locate(Path deno, Path cache, String pathVariable) {
        return new DenoLocator(settings(deno, cache), pathVariable).locate();
    }

    private static DenoSandboxSettings settings(Path deno, Path cache) {
        return DenoSandboxSettings.builder().denoExecutable(deno).cacheDirectory(cache).build();
    }

    private static Path script(Path directory, String name, String body) throws IOException {
        Path file = directory.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }
}
