package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checkout's launcher (./execache) in a checkout of its own whose Maven Wrapper only notes that it
 * was started: a command a person types builds when there is no jar or the checkout moved to another
 * commit; `serve`, which agent hosts start, never builds.
 */
class CheckoutLauncherTest {
    @TempDir
    Path checkout;
    private Path built;
    private Path jar;
    private Path stamp;

    @BeforeEach
    void aCheckoutWhoseBuildIsNoted() throws Exception {
        Files.copy(Release.sources().resolve("execache"), checkout.resolve("execache"));
        built = checkout.resolve("maven-was-started");
        Files.writeString(checkout.resolve("mvnw"), "#!/bin/sh\ntouch '" + built + "'\nexit 1\n");
        for (String script : List.of("execache", "mvnw")) {
            Files.setPosixFilePermissions(checkout.resolve(script), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        git("init", "-q");
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one");
        jar = checkout.resolve("app-cli/target/execache.jar");
        stamp = checkout.resolve("app-cli/target/generated-resources/commit/execache-commit.properties");
    }

    @Test
    void serveWithoutAJarSaysWhatToRunAndBuildsNothing() throws Exception {
        Run serve = launch("serve");

        assertThat(serve.exitCode()).isEqualTo(3);
        assertThat(serve.stderr()).contains("serve does not build").contains("execache --version");
        assertThat(built).doesNotExist();
    }

    @Test
    void aCommandAPersonTypesBuildsWhenThereIsNoJarAndSaysHowLong() throws Exception {
        Run version = launch("--version");

        assertThat(built).exists();
        assertThat(version.stderr()).contains("once (on a fresh machine 5 to 6 minutes");
    }

    @Test
    void aJarBuiltFromTheCheckedOutCommitIsUsedAsItIs() throws Exception {
        builtFrom(git("rev-parse", "--short=12", "HEAD"));

        launch("--version");
        launch("serve");

        assertThat(built).doesNotExist();
    }

    @Test
    void afterTheCheckoutMovesACommandBuildsAgainButServeOnlyWarns() throws Exception {
        builtFrom(git("rev-parse", "--short=12", "HEAD"));
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "two");
        git("pack-refs", "--all");

        Run serve = launch("serve");
        assertThat(built).doesNotExist();
        assertThat(serve.stderr()).contains("built from another commit");

        Run run = launch("run", "x.ts");
        assertThat(built).exists();
        assertThat(run.stderr()).contains("the checkout moved to another commit");
    }

    /**
     * serve on stdio, a host's process for one agent, runs the quick compiler alone (both compilers took a third of the
     * CPU before its first answer); serve over HTTP, for many agents and long, keeps the optimizing one.
     */
    @Test
    void serveOnStdioGetsTheQuickCompilerAloneAndServeOverHttpBothCompilers() throws Exception {
        builtFrom(git("rev-parse", "--short=12", "HEAD"));
        Path javaHome = Files.createDirectories(checkout.resolve("java/bin")).getParent();
        Path arguments = checkout.resolve("java-arguments.txt");
        Path java = Files.writeString(javaHome.resolve("bin/java"),
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + arguments + "'\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));

        launchWith(javaHome, "serve", "--config", "execache.yaml");
        List<String> stdio = Files.readAllLines(arguments);
        launchWith(javaHome, "serve", "--http", "127.0.0.1:8080");
        List<String> http = Files.readAllLines(arguments);
        launchWith(javaHome, "serve", "--http=8080");
        List<String> httpInOneArgument = Files.readAllLines(arguments);

        assertThat(stdio).contains("-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1")
                .noneMatch(argument -> argument.startsWith("-XX:Tier4"));
        for (List<String> overHttp : List.of(http, httpInOneArgument)) {
            assertThat(overHttp).contains("-XX:Tier4InvocationThreshold=25000")
                    .noneMatch(argument -> argument.startsWith("-XX:TieredStopAtLevel"));
        }
    }

    private void builtFrom(String commit) throws IOException {
        Files.createDirectories(stamp.getParent());
        Files.writeString(stamp, "commit=" + commit.strip() + "\nmodified=false\n");
        Files.write(jar, new byte[0]);
        // the jar is written after the stamp by every build
        Files.setLastModifiedTime(stamp, FileTime.from(Instant.now().minusSeconds(60)));
    }

    private String git(String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of("git", "-C", checkout.toString()));
        command.addAll(List.of(arguments));
        Process git = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(git.getInputStream().readAllBytes());
        assertThat(git.waitFor()).as(output).isZero();
        return output;
    }

    private Run launch(String... arguments) throws Exception {
        return launchWith(null, arguments);
    }

    /** The launcher started with JAVA_HOME set to {@code javaHome}, when given. */
    private Run launchWith(Path javaHome, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of(checkout.resolve("execache").toString()));
        command.addAll(List.of(arguments));
        Path err = checkout.resolve("stderr.txt");
        ProcessBuilder builder = new ProcessBuilder(command).directory(checkout.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile());
        if (javaHome != null) {
            builder.environment().put("JAVA_HOME", javaHome.toString());
        }
        Process process = builder.start();
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        return new Run(process.exitValue(), Files.readString(err));
    }

    private record Run(int exitCode, String stderr) {
    }
}
