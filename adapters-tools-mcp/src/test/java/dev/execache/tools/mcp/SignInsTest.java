package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A person's sign-ins on disk: owner-only, one per server URL, and a damaged one taken for none. */
class SignInsTest {
    private static final URI TRACKER = URI.create("https://tracker.example.com/mcp");
    private static final String REFRESH = "refresh-5c1e-never-shown";
    private static final String ACCESS = "access-91aa-never-shown";

    @TempDir
    Path dir;

    private static SignIns.SignIn signIn(String account) {
        return new SignIns.SignIn("tracker", TRACKER, URI.create("https://id.example.com"),
                URI.create("https://id.example.com/token"), "client-1", null, "none", REFRESH, ACCESS,
                Instant.ofEpochSecond(2_000_000_000L), account, Instant.ofEpochSecond(1_900_000_000L), "issues.read");
    }

    @Test
    void aSignInIsKeptInAnOwnerOnlyFileInAnOwnerOnlyDirectory() throws IOException {
        Path directory = dir.resolve("state/execache/sign-ins");
        SignIns signIns = SignIns.in(directory);

        signIns.save(TRACKER, signIn("ada"));

        Path file = signIns.file(TRACKER);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(directory))).isEqualTo("rwx------");
        assertThat(file.getFileName().toString()).doesNotContain("tracker");
        assertThat(signIns.state(TRACKER)).isEqualTo(new SignIns.State("ada", URI.create("https://id.example.com"),
                Instant.ofEpochSecond(1_900_000_000L)));
        assertThat(signIns.find(TRACKER).refreshToken()).isEqualTo(REFRESH);
        assertThat(signIns.find(TRACKER).scope()).as("the scope it asked for, which a sign-in for more scope keeps")
                .isEqualTo("issues.read");
    }

    @Test
    void aDirectoryOthersCouldOpenIsMadeOwnerOnly() throws IOException {
        Path directory = Files.createDirectories(dir.resolve("sign-ins"));
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));

        SignIns.in(directory).save(TRACKER, signIn("ada"));

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(directory))).isEqualTo("rwx------");
    }

    @Test
    void eachServerUrlHasItsOwnSignInAndLogoutForgetsOnlyThatOne() {
        SignIns signIns = SignIns.in(dir);
        URI docs = URI.create("https://docs.example.com/mcp");
        signIns.save(TRACKER, signIn("ada"));
        signIns.save(docs, signIn("grace"));

        assertThat(signIns.forget(TRACKER)).isTrue();
        assertThat(signIns.forget(TRACKER)).isFalse();

        assertThat(signIns.state(TRACKER)).isNull();
        assertThat(signIns.state(docs).account()).isEqualTo("grace");
    }

    @Test
    void aDamagedFileIsNoSignIn() throws IOException {
        SignIns signIns = SignIns.in(dir);
        signIns.save(TRACKER, signIn("ada"));

        Files.writeString(signIns.file(TRACKER), "{\"server\": \"tracker\", \"resource\": ");

        assertThat(signIns.state(TRACKER)).isNull();
    }

    @Test
    void whatMayBeShownNamesNoToken() {
        SignIns.SignIn signIn = signIn("ada");

        assertThat(signIn.toString()).contains("ada").doesNotContain(REFRESH).doesNotContain(ACCESS);
        assertThat(SignIns.in(dir).state(TRACKER)).isNull();
    }
}
