package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UrlServerSettingsTest {
    private static final URI URL = URI.create("https://mcp.example.com/mcp");

    private static UrlServerSettings server(Map<String, String> headers, Map<String, String> environment) {
        return new UrlServerSettings("github", URL, headers, true, null, environment);
    }

    @Test
    void differentHeaderValuesNeverShareAnIdentityAndEqualOnesDo() {
        UrlServerSettings alice = server(Map.of("Authorization", "Bearer ${TOKEN}"), Map.of("TOKEN", "alice-token"));
        UrlServerSettings bob = server(Map.of("Authorization", "Bearer ${TOKEN}"), Map.of("TOKEN", "bob-token"));
        UrlServerSettings aliceAgain = server(Map.of("authorization", "Bearer alice-token"), Map.of());
        UrlServerSettings otherUrl = new UrlServerSettings("github", URI.create("https://mcp.example.com/mcp?org=2"),
                Map.of("Authorization", "Bearer alice-token"), true);

        assertThat(alice.identity(null)).isNotEqualTo(bob.identity(null)).hasSize(32);
        assertThat(alice.identity(null)).isEqualTo(aliceAgain.identity(null));
        assertThat(otherUrl.identity(null)).isNotEqualTo(aliceAgain.identity(null));
        assertThat(alice.identity("fleet".getBytes(StandardCharsets.UTF_8))).isNotEqualTo(alice.identity(null));
        assertThat(alice.identity(null)).doesNotContain("alice");
    }

    @Test
    void anOAuthClientIsPartOfTheIdentity() {
        UrlServerSettings one = new UrlServerSettings("s", URL, Map.of(), true,
                new UrlServerSettings.ClientCredentials("one", "${SECRET}", null, null), Map.of("SECRET", "x"));
        UrlServerSettings two = new UrlServerSettings("s", URL, Map.of(), true,
                new UrlServerSettings.ClientCredentials("two", "${SECRET}", null, null), Map.of("SECRET", "x"));

        assertThat(one.identity(null)).isNotEqualTo(two.identity(null));
        assertThat(one.clientCredentials().authMethod()).isEqualTo("client_secret_basic");
        assertThat(one.toString()).doesNotContain("SECRET").doesNotContain("x,");
    }

    @Test
    void anUnsetVariableIsNamed() {
        assertThatThrownBy(() -> server(Map.of("Authorization", "Bearer ${TOKEN}"), Map.of()).identity(null))
                .isInstanceOf(UrlServerSettings.UnsetVariableException.class)
                .hasMessageContaining("names the environment variable TOKEN, which is not set");
    }
}
