package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.cli.settings.ServeHttp;
import dev.execache.cli.settings.UsageException;
import dev.execache.mcp.server.http.HttpServeSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where {@code serve --http} listens and whom it lets in, from flags, environment and config file. */
class ServeHttpSettingsTest {
    private static final String TOKEN = "a-long-enough-token-0123456789";
    private static final Duration DRAIN = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private HttpServeSettings resolve(String listen, Path tokenFile, List<String> hosts, Map<String, String> env) {
        return ServeHttp.resolve(listen, tokenFile, hosts, env, dir.resolve("execache.yaml"), dir, DRAIN);
    }

    private Path privateFile(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    @Test
    void withoutHttpItServesOnStdio() {
        assertThat(resolve(null, null, List.of(), Map.of())).isNull();
    }

    @Test
    void aPortAloneListensOnLoopbackAndAHostCanBeNamed() {
        HttpServeSettings port = resolve("8080", null, List.of(), Map.of());
        HttpServeSettings ipv6 = resolve("[::1]:9000", null, List.of(), Map.of());

        assertThat(port.address().getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(port.port()).isEqualTo(8080);
        assertThat(port.tokens()).isEmpty();
        assertThat(ipv6.address().isLoopbackAddress()).isTrue();
        assertThat(ipv6.port()).isEqualTo(9000);
    }

    @Test
    void aBadAddressIsAUsageErrorThatShowsTheForm() {
        assertThatThrownBy(() -> resolve("eighty", null, List.of(), Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("[HOST:]PORT");
        assertThatThrownBy(() -> resolve("127.0.0.1:70000", null, List.of(), Map.of()))
                .isInstanceOf(UsageException.class);
    }

    @Test
    void tokensComeFromTheEnvironmentAndAFileOfNamedLines() throws IOException {
        Path file = privateFile("tokens", "# rotated monthly\nagent-a " + TOKEN + "1\n\n" + TOKEN + "2\n");

        HttpServeSettings settings = resolve("0.0.0.0:8080", file, List.of(), Map.of(ServeHttp.TOKEN_VARIABLE, TOKEN));

        assertThat(settings.tokens()).extracting(HttpServeSettings.HttpToken::name)
                .containsExactly(ServeHttp.TOKEN_VARIABLE, "agent-a", "line 4");
        // only a name the file gives names the agent the token's calls are counted for
        assertThat(settings.tokens()).extracting(HttpServeSettings.HttpToken::named).containsExactly(false, true, false);
        assertThat(settings.tokens().toString()).doesNotContain(TOKEN);
    }

    @Test
    void aTokenFileThatIsReadableByOthersEmptyOrAmbiguousIsRefused() throws IOException {
        Path open = dir.resolve("open");
        Files.writeString(open, TOKEN + "\n");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r-----"));
        Path empty = privateFile("empty", "# nothing yet\n");
        Path twice = privateFile("twice", "a " + TOKEN + "1\na " + TOKEN + "2\n");
        Path shortOne = privateFile("short", "a tooshort\n");

        assertThatThrownBy(() -> resolve("8080", open, List.of(), Map.of())).hasMessageContaining("read by others");
        assertThatThrownBy(() -> resolve("8080", empty, List.of(), Map.of())).hasMessageContaining("holds no token");
        assertThatThrownBy(() -> resolve("8080", twice, List.of(), Map.of())).hasMessageContaining("used twice");
        assertThatThrownBy(() -> resolve("8080", shortOne, List.of(), Map.of()))
                .hasMessageContaining("shorter than 16").hasMessageNotContaining("tooshort");
    }

    @Test
    void aNonLoopbackHostWithoutATokenIsAUsageError() {
        assertThatThrownBy(() -> resolve("0.0.0.0:8080", null, List.of(), Map.of()))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("not a loopback address, needs a token");
    }

    @Test
    void theConfigFileCanSayItAllAndFlagsWin() throws IOException {
        privateFile("agent-tokens", "agent-a " + TOKEN + "\n");
        Files.writeString(dir.resolve("execache.yaml"), """
                serve:
                  http: "127.0.0.1:8181"
                  http_token_file: agent-tokens
                  http_allow_hosts: [mcp.example.org]
                """);

        HttpServeSettings fromFile = resolve(null, null, List.of(), Map.of());
        HttpServeSettings fromFlag = resolve("9191", null, List.of("other.example.org"), Map.of());

        assertThat(fromFile.port()).isEqualTo(8181);
        assertThat(fromFile.tokens()).extracting(HttpServeSettings.HttpToken::name).containsExactly("agent-a");
        assertThat(fromFile.allowedHosts()).containsExactly("mcp.example.org");
        assertThat(fromFlag.port()).isEqualTo(9191);
        assertThat(fromFlag.allowedHosts()).containsExactly("other.example.org");
    }

    @Test
    void anUnknownServeSettingIsNamed() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), "serve:\n  htp: 8080\n");

        assertThatThrownBy(() -> resolve(null, null, List.of(), Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("serve.htp");
    }

    @Test
    void figuresTokensComeFromTheirOwnVariableFileOrConfigAndOpenNothingElse() throws IOException {
        Path file = privateFile("scrapers", "prometheus " + TOKEN + "3\n");
        privateFile("config-scrapers", "grafana " + TOKEN + "4\n");
        Files.writeString(dir.resolve("execache.yaml"), "serve:\n  metrics_token_file: config-scrapers\n");

        HttpServeSettings both = ServeHttp.resolve("8080", null, List.of(), file,
                Map.of(ServeHttp.METRICS_TOKEN_VARIABLE, TOKEN), dir.resolve("execache.yaml"), dir, DRAIN);
        HttpServeSettings fromConfig = resolve("8080", null, List.of(), Map.of());

        assertThat(both.metricsTokens()).extracting(HttpServeSettings.HttpToken::name)
                .containsExactly(ServeHttp.METRICS_TOKEN_VARIABLE, "prometheus");
        assertThat(both.tokens()).as("a figures token is not a token of /mcp").isEmpty();
        assertThat(fromConfig.metricsTokens()).extracting(HttpServeSettings.HttpToken::name).containsExactly("grafana");
    }

    @Test
    void aFiguresTokenFileIsCheckedAsTheOtherAndNeedsHttp() throws IOException {
        Path open = dir.resolve("open-scrapers");
        Files.writeString(open, TOKEN + "\n");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        Path file = privateFile("scrapers", TOKEN + "\n");

        assertThatThrownBy(() -> ServeHttp.resolve("8080", null, List.of(), open, Map.of(), null, dir, DRAIN))
                .isInstanceOf(UsageException.class).hasMessageStartingWith("--metrics-token-file: ")
                .hasMessageContaining("read by others");
        assertThatThrownBy(() -> ServeHttp.resolve(null, null, List.of(), file, Map.of(), null, dir, DRAIN))
                .isInstanceOf(UsageException.class).hasMessageContaining("go with --http [HOST:]PORT");
    }

    private HttpServeSettings oauth(String listen, String issuer, String resource, Map<String, String> env) {
        return ServeHttp.resolve(listen, null, List.of(), null, issuer, resource, env, dir.resolve("execache.yaml"), dir,
                DRAIN);
    }

    @Test
    void oauthComesFromFlagsElseTheEnvironmentElseTheConfigFile() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), "serve:\n  oauth_issuer: https://id.example.org/realms/team\n"
                + "  oauth_resource: https://MCP.example.org:443/mcp\n");

        HttpServeSettings configured = oauth("0.0.0.0:8080", null, null, Map.of());
        HttpServeSettings fromEnvironment = oauth("8080", null, null, Map.of(ServeHttp.OAUTH_ISSUER_VARIABLE,
                "https://login.example.com/", ServeHttp.OAUTH_RESOURCE_VARIABLE, "https://mcp.example.com/mcp"));
        HttpServeSettings fromFlags = oauth("8080", "http://127.0.0.1:9000", "http://localhost:8080/mcp", Map.of(
                ServeHttp.OAUTH_ISSUER_VARIABLE, "https://login.example.com/"));

        assertThat(configured.oauth().issuer().toString()).isEqualTo("https://id.example.org/realms/team");
        // the resource in its canonical form (RFC 8707): host in lower case, no default port
        assertThat(configured.oauth().resource().toString()).isEqualTo("https://mcp.example.org/mcp");
        assertThat(configured.tokens()).as("a host that is not loopback may be served with OAuth alone").isEmpty();
        assertThat(fromEnvironment.oauth().issuer().toString()).isEqualTo("https://login.example.com/");
        assertThat(fromFlags.oauth().issuer().toString()).isEqualTo("http://127.0.0.1:9000");
        assertThat(fromFlags.oauth().resource().toString()).isEqualTo("http://localhost:8080/mcp");
        Files.delete(dir.resolve("execache.yaml"));
        assertThat(oauth("8080", null, null, Map.of()).oauth()).isNull();
    }

    @Test
    void badOAuthSettingsAreUsageErrorsThatSayWhatToGive() {
        assertThatThrownBy(() -> oauth("8080", "http://id.example.org", null, Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("--oauth-issuer")
                .hasMessageContaining("must use https");
        assertThatThrownBy(() -> oauth("8080", "id.example.org", null, Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("--oauth-issuer must be an https URL");
        assertThatThrownBy(() -> oauth("8080", "https://id.example.org", "https://mcp.example.org/mcp#x", Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("--oauth-resource")
                .hasMessageContaining("fragment");
        assertThatThrownBy(() -> oauth("8080", null, "https://mcp.example.org/mcp", Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("--oauth-resource goes with --oauth-issuer");
        assertThatThrownBy(() -> oauth("0.0.0.0:8080", "https://id.example.org", null, Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("give --oauth-resource");
        assertThatThrownBy(() -> oauth(null, "https://id.example.org", null, Map.of()))
                .isInstanceOf(UsageException.class).hasMessageContaining("go with --http");
    }
}
